/**
 * Dates as pages write them, to ISO 8601. Our own fixed patterns (no user input in them), each
 * piece bounded, run over whitespace-collapsed text: linear time.
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const MONTH = '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?'
// Z, an offset (+02, +0200, +02:00), UTC/GMT/UT with or without one (GMT+2, GMT+0200), or
// any 2-5 letter word, so that an abbreviation we do not know is seen and refused (zoneMinutes).
const ZONE = '(z|(?:utc|gmt|ut)(?:[+-]\\d{1,2}(?::?\\d{2})?)?|[+-]\\d{2}(?::?\\d{2})?|[a-z]{2,5})(?![a-z\\d])'
// hour, minute, second, fraction, am/pm, zone
const TIME = `(\\d{1,2}):(\\d{2})(?::(\\d{2})(?:[.,](\\d+))?)?(?: ?([ap])\\.?m\\.?(?![a-z]))?(?: ?${ZONE})?`
const LATER_TIME = `(?:,? (?:at )?${TIME})?`

/**
 * Zone abbreviations read, as hours east of UTC: North America's Eastern, Mountain and
 * Pacific. Others are refused rather than guessed: many name several zones (CST is US
 * Central, China and Cuba; IST India, Ireland and Israel; BST Britain and Bangladesh).
 */
const ZONES: Record<string, number> = { est: -5, edt: -4, mst: -7, mdt: -6, pst: -8, pdt: -7 }

type Parts = { y: string; m: string; d: string; time: string[] }
type Form = { re: RegExp; parts: (m: RegExpExecArray) => Parts }

const timeOf = (m: RegExpExecArray, from: number) => m.slice(from, from + 6) as string[]
const monthNumber = (name: string) => String(MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1)

/** The forms read, each anywhere in the text; the one that starts first wins. */
const FORMS: Form[] = [
  // ISO 8601 and <time datetime>: 2024-01-05, 2024-01-05T10:00:00Z, 2024-01-05 10:00+02:00
  { re: new RegExp(`(?<!\\d)(\\d{4})-(\\d{2})-(\\d{2})(?![\\d-])(?:[T ]${TIME})?`, 'i'), parts: (m) => ({ y: m[1]!, m: m[2]!, d: m[3]!, time: timeOf(m, 4) }) },
  // January 5, 2024 · Jan. 5th 2024 · Friday, January 5, 2024 at 3:04 PM
  { re: new RegExp(`\\b${MONTH} (\\d{1,2})(?:st|nd|rd|th)?,? (\\d{4})(?!\\d)${LATER_TIME}`, 'i'), parts: (m) => ({ y: m[3]!, m: monthNumber(m[1]!), d: m[2]!, time: timeOf(m, 4) }) },
  // 5 Jan 2024 · 5th of January, 2024 · RFC 2822: Fri, 05 Jan 2024 10:00:00 +0100
  { re: new RegExp(`(?<!\\d)(\\d{1,2})(?:st|nd|rd|th)?\\.? (?:of )?${MONTH},? (\\d{4})(?!\\d)${LATER_TIME}`, 'i'), parts: (m) => ({ y: m[3]!, m: monthNumber(m[2]!), d: m[1]!, time: timeOf(m, 4) }) },
  // 2024/01/05
  { re: new RegExp(`(?<!\\d)(\\d{4})/(\\d{1,2})/(\\d{1,2})(?!\\d)${LATER_TIME}`, 'i'), parts: (m) => ({ y: m[1]!, m: m[2]!, d: m[3]!, time: timeOf(m, 4) }) },
  // 05.01.2024 (day first, as everywhere the dotted form is used)
  { re: new RegExp(`(?<![\\d.])(\\d{1,2})\\.(\\d{1,2})\\.(\\d{4})(?!\\d)${LATER_TIME}`, 'i'), parts: (m) => ({ y: m[3]!, m: m[2]!, d: m[1]!, time: timeOf(m, 4) }) },
]
const AMBIGUOUS = /(?<!\d)\d{1,2}\/\d{1,2}\/\d{4}(?!\d)/

function daysIn(y: number, m: number): number {
  const date = new Date(0)
  date.setUTCFullYear(y, m, 0)
  return date.getUTCDate()
}
const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/**
 * `YYYY-MM-DD` for a date without a time, the full UTC ISO string (`2024-01-05T09:00:00.000Z`)
 * for one with a time (a time without a zone is taken as UTC), or why the text is not a date.
 */
export function toIsoDate(raw: string): string | { problem: string } {
  const text = raw.replace(/\s+/g, ' ').trim()
  let best: { index: number; length: number; parts: Parts } | null = null
  for (const form of FORMS) {
    const m = form.re.exec(text)
    if (m && (!best || m.index < best.index || (m.index === best.index && m[0].length > best.length))) best = { index: m.index, length: m[0].length, parts: form.parts(m) }
  }
  const shown = JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text)
  if (!best) {
    if (AMBIGUOUS.test(text)) return { problem: `${shown} is ambiguous (month/day or day/month); write dates as ISO 8601 or with a month name` }
    return { problem: `${shown} is not a date (ISO 8601, RFC 2822 or a form like "January 5, 2024" or "5 Jan 2024")` }
  }
  const built = build(best.parts)
  if (built === INVALID) return { problem: `${shown} is not a valid calendar date or time` }
  if (typeof built !== 'string') return { problem: `${shown} gives the time zone ${JSON.stringify(built.zone)}, which is unknown or ambiguous; write an offset such as +01:00, or UTC` }
  return built
}

const INVALID = Symbol('invalid')

function build({ y: ys, m: ms, d: ds, time }: Parts): string | typeof INVALID | { zone: string } {
  const y = Number(ys)
  const m = Number(ms)
  const d = Number(ds)
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m)) return INVALID
  const [hs, mins, secs, frac, ampm, zone] = time
  if (hs === undefined) return `${pad(y, 4)}-${pad(m)}-${pad(d)}`
  let h = Number(hs)
  const min = Number(mins)
  const s = secs === undefined ? 0 : Number(secs)
  if (ampm !== undefined) {
    if (h < 1 || h > 12) return INVALID
    h = (h % 12) + (ampm.toLowerCase() === 'p' ? 12 : 0)
  }
  if (h > 23 || min > 59 || s > 59) return INVALID
  const msPart = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, '0')) // truncated to the millisecond
  const offset = zoneMinutes(zone)
  if (offset === null) return INVALID
  if (offset === UNKNOWN) return { zone: zone! }
  // setUTCFullYear, unlike Date.UTC, does not map years 0..99 to 1900..1999.
  const date = new Date(0)
  date.setUTCFullYear(y, m - 1, d)
  date.setUTCHours(h, min, s, msPart)
  return new Date(date.getTime() - offset * 60_000).toISOString()
}

const UNKNOWN = Symbol('unknown zone')

/**
 * Minutes east of UTC for a zone designator; no zone is UTC. null for an impossible offset,
 * UNKNOWN for a zone abbreviation we do not read (written in capitals: `CET`, `IST`). A word
 * in lower or mixed case after the time (`at`, `Uhr`) is not a zone.
 */
function zoneMinutes(zone: string | undefined): number | null | typeof UNKNOWN {
  if (zone === undefined) return 0
  const z = zone.toLowerCase()
  if (z === 'z' || z === 'utc' || z === 'gmt' || z === 'ut') return 0
  if (Object.hasOwn(ZONES, z)) return ZONES[z]! * 60
  const m = /^(?:utc|gmt|ut)?([+-])(\d{1,2})(?::?(\d{2}))?$/.exec(z)
  if (!m) return /^[A-Z]+$/.test(zone) ? UNKNOWN : 0
  const hours = Number(m[2])
  const minutes = m[3] === undefined ? 0 : Number(m[3])
  if (hours > 23 || minutes > 59) return null
  return (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes)
}
