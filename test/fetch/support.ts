// Shared pieces of the fetch tests: API calls, envelope checks, timing, the error a fetch rejects with.
import { expect } from 'bun:test'
import type { Reply, TestApi } from '../helpers/api'
import { headerOf } from '../helpers/fixture-site'
import { FetchError } from '../../src/fetch/errors'

export { headerOf }

export const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64')
export const unb64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'))
export const unb64Text = (s: string) => Buffer.from(s, 'base64').toString('utf8')

/** The keys of a success envelope (design.md §6). */
export const RESULT_KEYS = ['body', 'content_type', 'cookies', 'final_url', 'headers', 'redirects', 'status', 'timing', 'url']

/** POST /v1/fetch, with how long it took (ms). */
export async function fetchTimed(api: TestApi, body: unknown): Promise<{ r: Reply; ms: number }> {
  const t = performance.now()
  const r = await api.post('/v1/fetch', body)
  return { r, ms: performance.now() - t }
}

/** POST /v1/fetch that must answer 200 with a full envelope; answers the envelope. */
export async function fetchOk(api: TestApi, body: unknown): Promise<any> {
  const r = await api.post('/v1/fetch', body)
  if (r.status !== 200) throw new Error(`expected 200, got ${r.status}: ${r.text.slice(0, 500)}`)
  expect(Object.keys(r.body).sort()).toEqual(RESULT_KEYS)
  return r.body
}

/** The fixture's /echo answer inside a fetch envelope. */
export function echoOf(result: { body: string }): {
  method: string
  path: string
  headers: [string, string][]
  body_base64: string
  body_text: string
  cookies: Record<string, string>
  cookie_header: string | null
} {
  return JSON.parse(unb64Text(result.body))
}

/** A generic error body: exactly `{error, message}` with that status and code. */
export function expectError(r: Reply, status: number, code: string) {
  expect({ status: r.status, error: r.body?.error }).toEqual({ status, error: code })
  expect(Object.keys(r.body).sort()).toEqual(['error', 'message'])
  expect(typeof r.body.message).toBe('string')
  expect(r.body.message.length).toBeGreaterThan(0)
}

/** A 422 whose failing fields are exactly `fields`. */
export function expectInvalid(r: Reply, fields: string[]) {
  expect(r.status).toBe(422)
  expect(r.body.error).toBe('validation')
  expect(r.body.fields.map((f: { field: string }) => f.field)).toEqual(fields)
  for (const f of r.body.fields) expect(f.errors.length).toBeGreaterThan(0)
}

/** A 422 with one failing field starting with `prefix` (union members report deeper paths). */
export function expectInvalidUnder(r: Reply, prefix: string) {
  expect(r.status).toBe(422)
  expect(r.body.error).toBe('validation')
  const fields: string[] = r.body.fields.map((f: { field: string }) => f.field)
  expect(fields.length).toBeGreaterThan(0)
  for (const f of fields) expect(f.startsWith(prefix)).toBe(true)
}

/** Gaps between consecutive arrival times. */
export const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!)

/** The FetchError a fetch of the fetcher or a client rejects with; fails the test when it resolves. */
export async function fetchFailure(p: Promise<unknown>): Promise<FetchError> {
  try {
    await p
  } catch (err) {
    expect(err).toBeInstanceOf(FetchError)
    return err as FetchError
  }
  throw new Error('expected the fetch to fail')
}
