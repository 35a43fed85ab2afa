import { describe, expect, test } from 'bun:test'
import { coerce, NO_DOCUMENT_URL, parseNumber } from '../../src/extract/coerce'
import { toIsoDate } from '../../src/extract/dates'

const BASE = 'https://shop.example/catalog/page'

describe('number', () => {
  test.each([
    ['$1,234.50', 1234.5],
    ['1.234,50 €', 1234.5],
    ['EUR 1 234,50', 1234.5],
    ['1\u00a0234,50\u00a0€', 1234.5],
    ["CHF 1'234.50", 1234.5],
    ['1,234,567.89', 1234567.89],
    ['1.234.567,89', 1234567.89],
    ['1.234.567', 1234567],
    ['1,234', 1234],
    ['12,5 kg', 12.5],
    ['0,99', 0.99],
    ['1.234', 1.234],
    ['0.125', 0.125],
    ['.5', 0.5],
    ['Price: £12', 12],
    ['-$5.00', -5],
    ['$-5', -5],
    ['\u22127 °C', -7],
    ['Save -20%', -20],
    ['SKU-123', 123],
    ['3 items for 5', 3],
    ['Call 555 1234', 555],
    ['4.6 out of 5 (1,204 reviews)', 4.6],
    ['v1.', 1],
    // Repeated separators group: in threes, or the Indian lakh and crore grouping.
    ['1,00,000', 100000],
    ['Rs. 12,34,56,789', 123456789],
    ['1,23,456.5', 123456.5],
    ['12 345,67', 12345.67],
    ['0,000,001', 1],
  ])('%p → %p', (text, value) => {
    expect(parseNumber(text)).toBe(value)
    expect(coerce(text, 'number', BASE)).toEqual({ ok: true, value })
  })

  test('text without a number, or with mixed-up separators, is invalid', () => {
    expect(coerce('Price on request', 'number', BASE)).toEqual({ ok: false, message: '"Price on request" holds no number' })
    expect(coerce('1,2.3,4', 'number', BASE)).toEqual({ ok: false, message: '"1,2.3,4" holds no number: its separators do not group digits in thousands' })
    expect(coerce('-', 'number', BASE)).toEqual({ ok: false, message: '"-" holds no number' })
  })

  test.each([
    ['1.2.3', '"1.2.3" holds no number: its separators do not group digits in thousands'],
    ['v2.0.1', '"v2.0.1" holds no number: the separators of "2.0.1" do not group digits in thousands'],
    ['123,456,78', '"123,456,78" holds no number: its separators do not group digits in thousands'],
    ['05.01.2024', '"05.01.2024" holds no number: its separators do not group digits in thousands'],
    ['1234,567.89', '"1234,567.89" holds no number: its separators do not group digits in thousands'],
    ['12,34.5', '"12,34.5" holds no number: its separators do not group digits in thousands'],
  ])('repeated separators that do not group digits: %p is invalid', (text, message) => {
    expect(parseNumber(text)).toBeNull()
    expect(coerce(text, 'number', BASE)).toEqual({ ok: false, message })
    expect(coerce(text, 'integer', BASE)).toEqual({ ok: false, message })
  })

  test('a number beyond a double is out of range, not missing', () => {
    const text = '9'.repeat(400)
    const message = `${JSON.stringify(`${text.slice(0, 77)}...`)} is out of range (beyond ±1.8e308)`
    expect(coerce(text, 'number', BASE)).toEqual({ ok: false, message })
    expect(coerce(text, 'integer', BASE)).toEqual({ ok: false, message })
  })

  test('integer takes the same number and must be whole and exact', () => {
    expect(coerce('1,204 reviews', 'integer', BASE)).toEqual({ ok: true, value: 1204 })
    expect(coerce('Posts: 12.731', 'integer', BASE)).toEqual({ ok: false, message: '"Posts: 12.731" is not a whole number' })
    expect(coerce('3.0', 'integer', BASE)).toEqual({ ok: true, value: 3 })
    expect(coerce('9007199254740991', 'integer', BASE)).toEqual({ ok: true, value: 9007199254740991 })
    const tooLarge = (text: string) => ({ ok: false as const, message: `${JSON.stringify(text)} is too large to be exact (integers must be within ±9007199254740991)` })
    expect(coerce('99999999999999999999', 'integer', BASE)).toEqual(tooLarge('99999999999999999999'))
    expect(coerce('9007199254740993', 'integer', BASE)).toEqual(tooLarge('9007199254740993'))
    expect(coerce('-1,000,000,000,000,000,000', 'integer', BASE)).toEqual(tooLarge('-1,000,000,000,000,000,000'))
    expect(coerce('none', 'integer', BASE)).toEqual({ ok: false, message: '"none" holds no number' })
  })

  test('a long value is shortened in the message', () => {
    const text = `${'no digits here '.repeat(10)}`
    expect(coerce(text, 'number', BASE)).toEqual({ ok: false, message: `${JSON.stringify(`${text.slice(0, 77)}...`)} holds no number` })
  })
})

describe('boolean, url, string', () => {
  test.each([
    ['true', true],
    ['FALSE', false],
    [' Yes ', true],
    ['no', false],
    ['1', true],
    ['0', false],
  ])('boolean %p → %p', (text, value) => {
    expect(coerce(text, 'boolean', BASE)).toEqual({ ok: true, value })
  })

  test('other words are not booleans', () => {
    expect(coerce('In stock', 'boolean', BASE)).toEqual({ ok: false, message: '"In stock" is not a boolean (true, false, yes, no, 1 or 0)' })
    expect(coerce('on', 'boolean', BASE).ok).toBe(false)
  })

  test.each([
    ['/p/1?x=1#reviews', 'https://shop.example/p/1?x=1#reviews'],
    ['../img/a b.jpg', 'https://shop.example/img/a%20b.jpg'],
    ['//cdn.example/x.js', 'https://cdn.example/x.js'],
    ['  detail  ', 'https://shop.example/catalog/detail'],
    ['HTTP://Other.EXAMPLE:80/a', 'http://other.example/a'],
  ])('url %p → %p', (text, value) => {
    expect(coerce(text, 'url', BASE)).toEqual({ ok: true, value })
  })

  test.each(['javascript:void(0)', 'mailto:a@b.example', 'data:image/gif;base64,R0lG', 'http://[::1'])('url %p is invalid', (text) => {
    expect(coerce(text, 'url', BASE)).toEqual({ ok: false, message: `${JSON.stringify(text)} is not an http(s) URL` })
  })

  test.each(['/p/1', 'p/1', '//cdn.example/x.js', '?page=2', '#top', ' ../a '])('without a document URL, relative %p is an error', (text) => {
    const message = `${JSON.stringify(text)} is relative, and there is no page URL or absolute <base href> to resolve it against`
    expect(coerce(text, 'url', NO_DOCUMENT_URL)).toEqual({ ok: false, message })
  })

  test('without a document URL, absolute http(s) URLs are values and other schemes stay invalid', () => {
    expect(coerce('HTTP://127.0.0.1:18123/a b#x', 'url', NO_DOCUMENT_URL)).toEqual({ ok: true, value: 'http://127.0.0.1:18123/a%20b#x' })
    for (const text of ['javascript:void(0)', 'mailto:a@b.example', 'about:blank#x', 'http://[::1']) {
      expect(coerce(text, 'url', NO_DOCUMENT_URL)).toEqual({ ok: false, message: `${JSON.stringify(text)} is not an http(s) URL` })
    }
  })

  test('string is the value as it is', () => {
    expect(coerce(' a  b ', 'string', BASE)).toEqual({ ok: true, value: ' a  b ' })
  })
})

describe('date', () => {
  test.each([
    ['2024-01-05', '2024-01-05'],
    ['2024-01-05T10:00:00Z', '2024-01-05T10:00:00.000Z'],
    ['2024-01-05T10:00:00.5+02:00', '2024-01-05T08:00:00.500Z'],
    ['2024-01-05T23:30:00-0130', '2024-01-06T01:00:00.000Z'],
    ['2024-01-05 10:00', '2024-01-05T10:00:00.000Z'],
    ['January 5, 2024', '2024-01-05'],
    ['Jan. 5th, 2024 at 3:04 PM', '2024-01-05T15:04:00.000Z'],
    ['Friday, January 5, 2024', '2024-01-05'],
    ['Sept 30 2023 12:15 am', '2023-09-30T00:15:00.000Z'],
    ['Jan 5, 2024 10:00 PST', '2024-01-05T18:00:00.000Z'],
    ['5 Jan 2024', '2024-01-05'],
    ['Posted on the 5th of January, 2024', '2024-01-05'],
    ['Fri, 05 Jan 2024 10:00:00 GMT', '2024-01-05T10:00:00.000Z'],
    ['Fri, 5 Jan 2024 10:00:00 +0100', '2024-01-05T09:00:00.000Z'],
    ['Friday 5 January 2024, 08:30', '2024-01-05T08:30:00.000Z'],
    ['05.01.2024', '2024-01-05'],
    ['2024/1/5', '2024-01-05'],
    ['Updated: Jan 6, 2024 (first published 2023-12-01)', '2024-01-06'],
    ['2024-02-29', '2024-02-29'],
    ['0099-03-01', '0099-03-01'],
    // Offsets in every form pages write them: hours only, after GMT/UTC, JavaScript's Date text.
    ['2024-01-05T10:00:00+02', '2024-01-05T08:00:00.000Z'],
    ['2024-01-05 10:00:00-0530', '2024-01-05T15:30:00.000Z'],
    ['Sat Jan 06 2024 09:15:00 GMT+0200 (Central European Standard Time)', '2024-01-06T07:15:00.000Z'],
    ['Jan 5, 2024 10:00 GMT+2', '2024-01-05T08:00:00.000Z'],
    ['5 Jan 2024 10:00 UTC-05:00', '2024-01-05T15:00:00.000Z'],
    ['2024-01-05T10:00:00.1234567890+05:00', '2024-01-05T05:00:00.123Z'],
    ['Jan 5, 2024 10:00 pst', '2024-01-05T18:00:00.000Z'],
    ['Jan 5, 2024 10:00 Uhr', '2024-01-05T10:00:00.000Z'],
  ])('%p → %p', (text, iso) => {
    expect(toIsoDate(text)).toBe(iso)
    expect(coerce(text, 'date', BASE)).toEqual({ ok: true, value: iso })
  })

  test.each([
    ['yesterday', 'is not a date (ISO 8601, RFC 2822 or a form like "January 5, 2024" or "5 Jan 2024")'],
    ['January 2024', 'is not a date (ISO 8601, RFC 2822 or a form like "January 5, 2024" or "5 Jan 2024")'],
    ['01/05/2024', 'is ambiguous (month/day or day/month); write dates as ISO 8601 or with a month name'],
    ['2023-02-29', 'is not a valid calendar date or time'],
    ['2024-13-01', 'is not a valid calendar date or time'],
    ['2024-01-05T24:00', 'is not a valid calendar date or time'],
    ['Jan 5, 2024 13:00 PM', 'is not a valid calendar date or time'],
    ['2024-01-05T10:00+25:00', 'is not a valid calendar date or time'],
    ['2024-01-05T10:00 GMT+24', 'is not a valid calendar date or time'],
    // A zone abbreviation we do not read is refused, never taken as UTC; so are ambiguous ones.
    ['Jan 5, 2024 10:00 CET', 'gives the time zone "CET", which is unknown or ambiguous; write an offset such as +01:00, or UTC'],
    ['2024-01-05 10:00 IST', 'gives the time zone "IST", which is unknown or ambiguous; write an offset such as +01:00, or UTC'],
    ['Jan 5, 2024 3:00 PM CST', 'gives the time zone "CST", which is unknown or ambiguous; write an offset such as +01:00, or UTC'],
  ])('%p is invalid', (text, why) => {
    expect(coerce(text, 'date', BASE)).toEqual({ ok: false, message: `${JSON.stringify(text)} ${why}` })
  })

  test('stays linear on long hostile text', () => {
    const text = 'Jan 5, 202x 12:'.repeat(20_000) + '2024-01-'.repeat(20_000) + '5 May 99 '.repeat(20_000)
    const started = performance.now()
    expect(coerce(text, 'date', BASE).ok).toBe(false)
    // Quadratic on 640 KB would take minutes; the bound leaves room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(5000)
  })
})
