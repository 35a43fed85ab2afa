/** Durations are strings like `250ms`, `30s` or `1h30m` (design.md §3). */
export const DURATION_PATTERN = '^(\\d+(ms|s|m|h|d))+$'

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const PART = /(\d+)(ms|s|m|h|d)/g

/** Milliseconds in a duration string, or null when it is not one. */
export function parseDuration(text: string): number | null {
  if (!new RegExp(DURATION_PATTERN).test(text)) return null
  let total = 0
  for (const [, n, unit] of text.matchAll(PART)) total += Number(n) * UNIT_MS[unit!]!
  return Number.isSafeInteger(total) ? total : null
}
