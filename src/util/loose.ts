/**
 * Readers for input whose shape is not yet trusted (checks that run beside schema validation):
 * anything that is not a plain object or an array reads as an empty one.
 */
export const looseObject = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {})
export const looseArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
