// POST /v1/fetch retries: what is retried, how often, how far apart (from the fixture's own
// arrival times), Retry-After, and the one deadline that bounds them all.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { testApi, type TestApi } from '../helpers/api'
import { dropServer, fixtureSite, pageHtml, unusedPort } from '../helpers/fixture-site'
import { expectError, fetchOk, fetchTimed, gaps, unb64Text } from './support'

const site = fixtureSite()
const drop = dropServer()
let api: TestApi
beforeAll(() => {
  api = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' })
})
afterAll(async () => {
  api.close()
  drop.close()
  await site.close()
})
beforeEach(() => {
  site.reset()
  drop.reset()
})

const arrivals = (key: string) => site.requestsTo(`/flaky/${key}`).map((r) => r.at)
// Timer and scheduling slack on a busy 2-core machine: never early by more than a few ms,
// late by up to this much.
const EARLY = 15
const LATE = 300

describe('retries of 5xx, 429 and network errors', () => {
  test('max_retries 0 (the default): one attempt, the 503 comes back in a 200 envelope', async () => {
    const res = await fetchOk(api, { url: site.url('/flaky/zero?fail=100') })
    expect(res.status).toBe(503)
    expect(unb64Text(res.body)).toBe('flaky zero attempt 1')
    expect(site.hits('zero')).toBe(1)
  })

  test('an always-503 route gets exactly max_retries + 1 attempts; the last response is returned', async () => {
    const res = await fetchOk(api, { url: site.url('/flaky/always?fail=100'), max_retries: 2 })
    expect(res.status).toBe(503)
    expect(unb64Text(res.body)).toBe('flaky always attempt 3')
    expect(site.hits('always')).toBe(3)
  })

  test('backoff: exponential from 200 ms with jitter, each wait between 50% and 100% of 200·2^n ms', async () => {
    await fetchOk(api, { url: site.url('/flaky/backoff?fail=100'), max_retries: 3 })
    const [g0, g1, g2] = gaps(arrivals('backoff'))
    expect(arrivals('backoff')).toHaveLength(4)
    expect(g0!).toBeGreaterThanOrEqual(100 - EARLY)
    expect(g0!).toBeLessThanOrEqual(200 + LATE)
    expect(g1!).toBeGreaterThanOrEqual(200 - EARLY)
    expect(g1!).toBeLessThanOrEqual(400 + LATE)
    expect(g2!).toBeGreaterThanOrEqual(400 - EARLY)
    expect(g2!).toBeLessThanOrEqual(800 + LATE)
  })

  test('the waits are jittered: two runs do not repeat the same gaps', async () => {
    // With 50%..100% jitter two identical gap triples are vanishingly unlikely; a fixed
    // schedule would repeat within a few milliseconds.
    await fetchOk(api, { url: site.url('/flaky/j1?fail=100'), max_retries: 2 })
    await fetchOk(api, { url: site.url('/flaky/j2?fail=100'), max_retries: 2 })
    await fetchOk(api, { url: site.url('/flaky/j3?fail=100'), max_retries: 2 })
    const runs = ['j1', 'j2', 'j3'].map((k) => gaps(arrivals(k)))
    const spread = (i: number) => Math.max(...runs.map((g) => g[i]!)) - Math.min(...runs.map((g) => g[i]!))
    expect(Math.max(spread(0), spread(1))).toBeGreaterThan(5)
  })

  test('a route that recovers: 2 failures, max_retries 3 → 200 on the third attempt', async () => {
    const res = await fetchOk(api, { url: site.url('/flaky/recover?fail=2'), max_retries: 3 })
    expect(res.status).toBe(200)
    expect(unb64Text(res.body)).toBe(pageHtml('recover'))
    expect(site.hits('recover')).toBe(3)
  })

  test('a retried POST sends the same body again', async () => {
    const bytes = Uint8Array.from([1, 2, 3, 0, 255])
    const res = await fetchOk(api, { url: site.url('/flaky/post?fail=2'), method: 'POST', body: Buffer.from(bytes).toString('base64'), max_retries: 2 })
    expect(res.status).toBe(200)
    const attempts = site.requestsTo('/flaky/post')
    expect(attempts.map((a) => a.method)).toEqual(['POST', 'POST', 'POST'])
    for (const a of attempts) expect(a.body).toEqual(bytes)
  })

  for (const status of [429, 500, 502, 504]) {
    test(`${status} is retried`, async () => {
      const res = await fetchOk(api, { url: site.url(`/flaky/s${status}?fail=1&status=${status}`), max_retries: 1 })
      expect(res.status).toBe(200)
      expect(site.hits(`s${status}`)).toBe(2)
    })
  }

  for (const status of [400, 404, 403, 410]) {
    test(`${status} is never retried`, async () => {
      const res = await fetchOk(api, { url: site.url(`/flaky/n${status}?fail=5&status=${status}`), max_retries: 3 })
      expect(res.status).toBe(status)
      expect(site.hits(`n${status}`)).toBe(1)
    })
  }

  test('Retry-After in seconds is honoured: the second attempt comes ≥ 1 s after the first', async () => {
    const res = await fetchOk(api, { url: site.url('/flaky/ra?fail=1&retry_after=1'), max_retries: 1 })
    expect(res.status).toBe(200)
    const [g] = gaps(arrivals('ra'))
    expect(g!).toBeGreaterThanOrEqual(950)
    expect(g!).toBeLessThan(1000 + 400)
  })

  test('Retry-After as an HTTP date is honoured', async () => {
    // The date has whole seconds: 2 s from now is 1..2 s of waiting.
    const res = await fetchOk(api, { url: site.url('/flaky/rad?fail=1&status=429&retry_after_date=2'), max_retries: 1 })
    expect(res.status).toBe(200)
    const [g] = gaps(arrivals('rad'))
    expect(g!).toBeGreaterThanOrEqual(900)
    expect(g!).toBeLessThan(2000 + 400)
  })

  test('a retry whose Retry-After wait would pass the deadline is not made; the 503 comes back at once', async () => {
    const { r, ms } = await fetchTimed(api, { url: site.url('/flaky/late?fail=100&retry_after=5'), max_retries: 3, timeout: '1s' })
    expect(r.status).toBe(200)
    expect(r.body.status).toBe(503)
    expect(site.hits('late')).toBe(1)
    expect(ms).toBeLessThan(600)
  })

  test('a huge Retry-After (3600 s) is capped at 10 s', async () => {
    // The one slow test of the suite (10 s): the cap can only be seen by waiting for it.
    const res = await fetchOk(api, { url: site.url('/flaky/cap?fail=1&retry_after=3600'), max_retries: 1, timeout: '14s' })
    expect(res.status).toBe(200)
    const [g] = gaps(arrivals('cap'))
    expect(g!).toBeGreaterThanOrEqual(10_000 - EARLY)
    expect(g!).toBeLessThan(10_000 + 600)
  }, 20_000)

  test('a huge Retry-After (3600 s) with a 2 s deadline: no retry, no hang', async () => {
    const { r, ms } = await fetchTimed(api, { url: site.url('/flaky/huge?fail=100&retry_after=3600'), max_retries: 1, timeout: '2s' })
    expect(r.status).toBe(200)
    expect(r.body.status).toBe(503)
    expect(site.hits('huge')).toBe(1)
    expect(ms).toBeLessThan(600)
  })

  test('backoff waits stop at the deadline: no attempt after it, the answer comes promptly', async () => {
    const start = performance.now()
    const { r, ms } = await fetchTimed(api, { url: site.url('/flaky/deadline?fail=100'), max_retries: 10, timeout: '700ms' })
    expect(r.status).toBe(200)
    expect(r.body.status).toBe(503)
    const times = arrivals('deadline')
    expect(times.length).toBeGreaterThanOrEqual(2)
    expect(times.length).toBeLessThanOrEqual(4)
    // An attempt sent just before the deadline may arrive a little after it on a loaded machine.
    for (const t of times) expect(t - start).toBeLessThan(800)
    expect(ms).toBeLessThan(700 + 300)
  })

  test('a dropped connection is retried: exactly max_retries + 1 connections, then 502 connect', async () => {
    const { r, ms } = await fetchTimed(api, { url: drop.url('/'), max_retries: 2 })
    expectError(r, 502, 'connect')
    expect(drop.connections).toBe(3)
    expect(ms).toBeGreaterThanOrEqual(300 - EARLY)
  })

  test('a dropped connection with max_retries 0: one connection', async () => {
    expectError(await api.post('/v1/fetch', { url: drop.url('/') }), 502, 'connect')
    expect(drop.connections).toBe(1)
  })

  test('connection refused is retried with backoff (two waits ≥ 100 + 200 ms)', async () => {
    const { r, ms } = await fetchTimed(api, { url: `http://127.0.0.1:${unusedPort()}/`, max_retries: 2 })
    expectError(r, 502, 'connect')
    expect(ms).toBeGreaterThanOrEqual(300 - EARLY)
    expect(ms).toBeLessThan(600 + 2 * LATE + 300)
  })

  test('a timeout on the last attempt is a 504 even after retries', async () => {
    const { r, ms } = await fetchTimed(api, { url: site.url('/slow-headers?ms=5000'), max_retries: 3, timeout: '400ms' })
    expectError(r, 504, 'timeout')
    expect(ms).toBeLessThan(1400)
  })
})
