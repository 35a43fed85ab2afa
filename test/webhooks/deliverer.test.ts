// The deliverer against a real receiver on 127.0.0.1 (decision 116): the stored bytes, signed as
// Standard Webhooks says (checked with the specification's own library), a 2xx delivered, a
// failure retried after the backoff, a redirect not followed, the address guard, the timeout.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { postWebhook } from '../../src/fetch/webhook'
import { createLogger } from '../../src/log'
import { Deliverer, type AttemptOutcome } from '../../src/webhooks/deliverer'
import { job, testApi, type TestApi } from '../helpers/api'
import { waitFor } from '../helpers/wait'

type Received = { path: string; body: string; headers: Record<string, string> }
const received: Received[] = []
/** What the receiver answers next, by path: a status, or a hang. */
const answers = new Map<string, number[]>()

let api: TestApi
let receiver: ReturnType<typeof Bun.serve>
const deliverers: Deliverer[] = []
beforeAll(() => {
  // The receiver is on loopback: allowed at create time here; the deliverer's own guard is set per test.
  api = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' })
  receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname
      received.push({ path, body: await request.text(), headers: Object.fromEntries(request.headers) })
      if (path === '/hang') return new Promise<Response>(() => {})
      const status = answers.get(path)?.shift() ?? 204
      return new Response(status === 302 ? null : 'thanks', { status, headers: status === 302 ? { location: '/elsewhere' } : {} })
    },
  })
})
afterAll(async () => {
  await Promise.all(deliverers.map((d) => d.stop()))
  receiver.stop(true)
  await api.close()
})

const base = () => `http://127.0.0.1:${receiver.port}`
const start = (allowPrivate = true) => {
  const outcomes: AttemptOutcome[] = []
  const d = new Deliverer({ store: api.store.webhooks, log: createLogger('error', () => {}), allowPrivate, pollMs: 50 })
  d.onAttempt = (o) => outcomes.push(o)
  deliverers.push(d)
  d.start()
  return { d, outcomes }
}

/** A webhook of its own tenant and a run of it stopped: one run.finished delivery. */
async function finishedRun(tenant: string, path: string) {
  const j = (await api.post('/v1/jobs', job(), { tenant })).body as { id: string }
  const w = (await api.post('/v1/webhooks', { url: `${base()}${path}`, events: ['run.finished'] }, { tenant })).body as { id: string; secret: string }
  const run = (await api.post(`/v1/jobs/${j.id}/runs`, {}, { tenant })).body as { id: string }
  await api.put(`/v1/runs/${run.id}/stop`, undefined, { tenant })
  const [delivery] = (await api.get(`/v1/webhooks/${w.id}/deliveries`, { tenant })).body.data
  return { w, run, delivery, deliveryOf: async () => (await api.get(`/v1/webhooks/${w.id}/deliveries/${delivery.id}`, { tenant })).body }
}

test('delivered: the stored bytes, signed (verified by standardwebhooks), one attempt recorded; a 500 is retried after a second', async () => {
  answers.set('/flaky', [500])
  const ok = await finishedRun('deliver', '/ok')
  const flaky = await finishedRun('deliver-flaky', '/flaky')
  const { d, outcomes } = start()
  await waitFor('the delivery', async () => (await ok.deliveryOf()).status === 'delivered', 5000)
  const got = received.find((r) => r.path === '/ok')!
  expect(got.headers['content-type']).toBe('application/json')
  expect(got.headers['webhook-id']).toBe(ok.delivery.id)
  expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30)
  expect(new Webhook(ok.w.secret).verify(got.body, got.headers)).toEqual(ok.delivery.payload)
  expect(JSON.parse(got.body)).toEqual(ok.delivery.payload)
  const done = await ok.deliveryOf()
  expect(done.attempts).toEqual([{ at: expect.any(String), duration_ms: expect.any(Number), status_code: 204, error: null }])
  expect(done.next_attempt_at).toBeNull()

  await waitFor('the retried delivery', async () => (await flaky.deliveryOf()).status === 'delivered', 5000)
  const attempts = (await flaky.deliveryOf()).attempts
  expect(attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 204])
  expect(attempts[0].error).toBe('answered 500')
  expect(Date.parse(attempts[1].at) - Date.parse(attempts[0].at)).toBeGreaterThanOrEqual(1000)
  const sent = received.filter((r) => r.path === '/flaky')
  expect(sent.map((r) => r.headers['webhook-id'])).toEqual([flaky.delivery.id, flaky.delivery.id])
  expect(sent[0]!.body).toBe(sent[1]!.body)
  expect(outcomes.sort()).toEqual(['delivered', 'delivered', 'failed_attempt'])
  await d.stop()
})

test('a redirect is a failed attempt, not followed; a private address is refused unless allowed; no answer in time is a failure', async () => {
  answers.set('/moved', [302])
  const moved = await finishedRun('redirect', '/moved')
  const { d } = start()
  await waitFor('an attempt', async () => (await moved.deliveryOf()).attempts.length > 0, 5000)
  await d.stop()
  expect((await moved.deliveryOf()).attempts[0]).toMatchObject({ status_code: 302, error: 'redirected (302 to /elsewhere); redirects are not followed' })
  expect(received.some((r) => r.path === '/elsewhere')).toBe(false)

  const guarded = await finishedRun('guard', '/guarded')
  const strict = start(false)
  await waitFor('an attempt', async () => (await guarded.deliveryOf()).attempts.length > 0, 5000)
  await strict.d.stop()
  expect((await guarded.deliveryOf()).attempts[0]).toMatchObject({ status_code: null, error: '127.0.0.1, a loopback address; set TRAWL_ALLOW_PRIVATE_NETWORKS=true to allow it' })
  expect(received.some((r) => r.path === '/guarded')).toBe(false)

  const started = Date.now()
  expect(await postWebhook({ url: `${base()}/hang`, headers: {}, body: '{}', allowPrivate: true, timeoutMs: 300 })).toEqual({ status_code: null, error: 'no answer within 0.3 s' })
  expect(Date.now() - started).toBeLessThan(3000)
})
