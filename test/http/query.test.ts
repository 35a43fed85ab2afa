import { describe, expect, test } from 'bun:test'
import { Type } from '@sinclair/typebox'
import { decodeCursor, encodeCursor } from '../../src/http/cursor'
import { ValidationError } from '../../src/http/errors'
import { parseQuery } from '../../src/http/query'
import { Labels, PageQuery, QueryArray, Uuid } from '../../src/http/schemas'

const Schema = Type.Object(
  {
    ...PageQuery,
    urls: Type.Optional(QueryArray(Type.String())),
    ids: Type.Optional(QueryArray(Uuid)),
    enabled: Type.Optional(Type.Boolean()),
    labels: Type.Optional(Labels),
  },
  { additionalProperties: false },
)
const parse = (q: string) => parseQuery(Schema, new URL(`http://x/${q}`))
const fieldsOf = (q: string) => {
  try {
    parse(q)
  } catch (err) {
    return (err as ValidationError).fields
  }
  throw new Error('expected a validation error')
}

describe('query parsing', () => {
  test('arrays are repeated keys and never split on commas', () => {
    expect(parse('?urls=https://a.example/x,y&urls=https%3A%2F%2Fb.example%2F%2C').urls).toEqual(['https://a.example/x,y', 'https://b.example/,'])
  })
  test('one value is an array of one', () => {
    expect(parse('?urls=a').urls).toEqual(['a'])
  })
  test('deepObject labels, and JSON labels', () => {
    expect(parse('?labels[env]=prod&labels[team]=a%20b').labels).toEqual({ env: 'prod', team: 'a b' })
    expect(parse(`?labels=${encodeURIComponent('{"env":"prod"}')}`).labels).toEqual({ env: 'prod' })
  })
  test('numbers and booleans are converted', () => {
    expect(parse('?per_page=25&enabled=false')).toEqual({ per_page: 25, enabled: false })
  })
  test('every bad parameter is reported at once', () => {
    expect(fieldsOf('?per_page=500&enabled=yes&nope=1&ids=x')).toEqual([
      { field: 'nope', errors: ['is not a known query parameter'] },
      { field: 'per_page', errors: ['must be <= 100'] },
      { field: 'ids[0]', errors: ['must be a uuid'] },
      { field: 'enabled', errors: ['must be a boolean'] },
    ])
  })
  test('numeric garbage and fractions are rejected', () => {
    expect(fieldsOf('?per_page=abc')).toEqual([{ field: 'per_page', errors: ['must be an integer'] }])
    expect(fieldsOf('?per_page=2.5')).toEqual([{ field: 'per_page', errors: ['must be an integer'] }])
    expect(fieldsOf('?per_page=0')).toEqual([{ field: 'per_page', errors: ['must be >= 1'] }])
  })
  test('a scalar given twice is rejected', () => {
    expect(fieldsOf('?per_page=1&per_page=2')).toEqual([{ field: 'per_page', errors: ['must be given once'] }])
  })
  test('label values are validated by key', () => {
    expect(fieldsOf(`?labels[env]=${'x'.repeat(1025)}`)).toEqual([{ field: 'labels[env]', errors: ['must be at most 1024 characters'] }])
  })
})

describe('cursor', () => {
  test('round-trips a sequence number and is opaque', () => {
    const c = encodeCursor(12345)
    expect(c).not.toContain('12345')
    expect(decodeCursor(c)).toBe(12345)
  })
  test.each(['', 'garbage!', encodeCursor(1).slice(0, -1) + '$', Buffer.from('k1.-4').toString('base64url'), Buffer.from('k2.5').toString('base64url')])('rejects %p as a 422 on page', (bad) => {
    expect(() => decodeCursor(bad)).toThrow(ValidationError)
    try {
      decodeCursor(bad)
    } catch (err) {
      expect((err as ValidationError).fields[0]!.field).toBe('page')
    }
  })
})
