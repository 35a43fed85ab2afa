/** Timestamps are stored as epoch milliseconds and shown as RFC 3339 strings. */
export const iso = (ms: number | null | undefined): string | null => (ms == null ? null : new Date(ms).toISOString())
export const epoch = (text: string): number => Date.parse(text)
