// Cron expressions as triggers read them (src/schedule/cron.ts): UTC unless a zone is given,
// and daylight-saving days as Vixie cron treats fixed times, lists and ranges included.
import { describe, expect, test } from 'bun:test'
import { expressionError, nextTick, timezoneError } from '../../src/schedule/cron'

const at = (iso: string) => Date.parse(iso)
const next = (expression: string, after: string, timezone?: string) => new Date(nextTick({ expression, timezone }, at(after))!).toISOString()

describe('nextTick', () => {
  test('without a zone the expression is UTC, whatever the process zone', () => {
    expect(next('0 9 * * *', '2026-11-23T10:00:00Z')).toBe('2026-11-24T09:00:00.000Z')
    expect(next('*/10 * * * * *', '2026-11-23T10:00:05Z')).toBe('2026-11-23T10:00:10.000Z')
  })

  test('spring gap (Paris, 2026-03-29): 02:30 does not exist; a list still fires once, at the first valid time', () => {
    expect(next('30 2 * * *', '2026-03-28T23:00:00Z', 'Europe/Paris')).toBe('2026-03-29T01:00:00.000Z')
    expect(next('30 2,14 * * *', '2026-03-28T23:00:00Z', 'Europe/Paris')).toBe('2026-03-29T01:00:00.000Z')
    expect(next('30 2,14 * * *', '2026-03-29T01:00:00Z', 'Europe/Paris')).toBe('2026-03-29T12:30:00.000Z')
  })

  test('autumn repeat (Paris, 2026-10-25): 02:30 happens twice; a list fires once', () => {
    expect(next('30 2,14 * * *', '2026-10-24T23:00:00Z', 'Europe/Paris')).toBe('2026-10-25T00:30:00.000Z')
    expect(next('30 2,14 * * *', '2026-10-25T00:30:00Z', 'Europe/Paris')).toBe('2026-10-25T13:30:00.000Z')
  })

  test('an interval (a wildcard hour) runs through the repeated hour twice, as intervals should', () => {
    expect(next('30 * * * *', '2026-10-25T00:30:00Z', 'Europe/Paris')).toBe('2026-10-25T01:30:00.000Z')
  })
})

describe('checks', () => {
  test('expressions', () => {
    expect(expressionError('0 9 * * MON-FRI')).toBeNull()
    expect(expressionError('@weekly')).toBeNull()
    expect(expressionError('0 0 30 2 *')).toBe('never fires (no date matches it)')
    expect(expressionError('* * * * * * *')).toBe('must have 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), got 7')
  })
  test('time zones', () => {
    expect(timezoneError('America/New_York')).toBeNull()
    expect(timezoneError('Mars/Olympus')).toBe('is not an IANA time zone name (such as "UTC" or "Europe/Paris")')
  })
})
