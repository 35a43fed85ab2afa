import { Cron } from 'croner'
import type { ScheduleParams } from '../store/triggers'

/**
 * Cron expressions of `schedule` triggers (design.md §5): five fields (minute first) or six with
 * seconds first, croner's syntax within them (ranges, steps, lists, names, `L`, `W`, `#`), and
 * its nicknames (`@hourly`, `@daily`, …). croner also takes a seventh field (years); we do not, so
 * an expression means the same thing in every cron a user knows.
 */

const NICKNAMES = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'])
export const MAX_EXPRESSION_LENGTH = 255

/** Why `expression` is not a usable cron expression, or null when it is. */
export function expressionError(expression: string): string | null {
  const text = expression.trim()
  if (text.length === 0) return 'must not be empty'
  if (!NICKNAMES.has(text.toLowerCase())) {
    const fields = text.split(/\s+/).length
    if (fields !== 5 && fields !== 6) return `must have 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), got ${fields}`
  }
  let cron: Cron
  try {
    cron = build({ expression: text })
  } catch (err) {
    return (err as Error).message
  }
  // A valid expression that names no date (`0 0 30 2 *`) would never fire: say so now.
  if (cron.nextRun() === null) return 'never fires (no date matches it)'
  return null
}

/** Why `timezone` is not an IANA time zone name, or null when it is one. */
export function timezoneError(timezone: string): string | null {
  // croner only fails on a bad zone when it computes a date; Intl says it up front.
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone })
    return null
  } catch {
    return `is not an IANA time zone name (such as "UTC" or "Europe/Paris")`
  }
}

/** The first tick strictly after `after` (epoch ms), or null when the expression has no more. */
export function nextTick(schedule: ScheduleParams, after: number): number | null {
  const next = build(schedule).nextRun(new Date(after))
  return next === null ? null : next.getTime()
}

// Without a timezone croner reads the expression in the process's local time; UTC makes a
// schedule mean the same on every machine, as the API's timestamps do. `no-wildcard`: times
// whose seconds, minutes and hours have no wildcard or step (`30 2,14 * * *` too, not only single
// values) fire once at the first valid time in a DST gap and once when an hour repeats, as in
// Vixie cron; croner's default treats lists and ranges as intervals (skipped in the gap, twice
// in the repeated hour).
const build = (s: ScheduleParams) => new Cron(s.expression.trim(), { paused: true, timezone: s.timezone ?? 'UTC', mode: '5-or-6-parts', fixedTimeRule: 'no-wildcard' })
