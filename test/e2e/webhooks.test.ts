// End-to-end: webhooks from the compiled binary (docs/webhooks.md). A receiver on 127.0.0.1
// verifies every request with the standardwebhooks package. A crawl's start and finish arrive
// with the run's own counts; a receiver that refuses connections for a few seconds gets every
// event once it is back; a process killed with -9 after the finish and before the delivery
// (the receiver down then) delivers it after its restart. Each event arrives once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cleanup, ensureBinary, startTrawl, tempDir, type Trawl } from '../helpers/binary'
import { createRun, finished, OPEN, site, stopSites, waitFor } from '../helpers/e2e-crawl'
import { webhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver'

let receiver: WebhookReceiver
let trawl: Trawl
let dataDir: string
beforeAll(async () => {
  await ensureBinary()
  receiver = webhookReceiver()
  dataDir = tempDir()
  trawl = await startTrawl({ dataDir, env: OPEN })
  const hook = await trawl.api.post('/v1/webhooks', { url: receiver.url(), events: ['run.started', 'run.finished'] })
  expect(hook.status).toBe(201)
  receiver.trust(hook.body.secret)
}, 180_000)
afterAll(async () => {
  receiver.stop()
  stopSites()
  await cleanup()
})

/** Waits until both events of the run arrived; answers them by type. */
const bothEvents = (runId: string) =>
  waitFor(
    `run.started and run.finished of ${runId}`,
    () => {
      const got = receiver.ofRun(runId)
      const started = got.find((r) => r.type === 'run.started')
      const ended = got.find((r) => r.type === 'run.finished')
      return started && ended ? { started, ended } : null
    },
    20_000,
    50,
  )

describe('webhooks from trawl serve', () => {
  test('a crawl: run.started, then run.finished with the run’s own counts, each once and verified', async () => {
    const s = site(6, 0)
    const runId = await createRun(trawl.api, s.url(0), { limits: { max_depth: 5 } })
    const run = await finished(trawl.api, runId)
    const { started, ended } = await bothEvents(runId)
    expect(started.data).toMatchObject({ run_id: runId, job_id: run.job_id, status: 'running', stop_reason: null, outcome: null })
    expect(started.timestamp).toBe(run.started_at)
    expect(ended.timestamp).toBe(run.finished_at)
    expect(ended.data).toEqual({ run_id: runId, job_id: run.job_id, status: 'finished', stop_reason: run.stop_reason, outcome: run.outcome, stats: run.stats, error_counts: run.error_counts })
    expect(run.stats.visited).toBeGreaterThanOrEqual(6)
    await Bun.sleep(300)
    expect(receiver.ofRun(runId)).toHaveLength(2)
    expect(receiver.rejected).toEqual([])
    // Each attempt counted by outcome, once it is recorded (after the receiver's answer).
    const counted = async () => (await trawl.api.get('/metrics', { tenant: null })).text.match(/^trawl_webhook_deliveries_total\{outcome="delivered"\} (\d+)$/m)?.[1]
    expect(await waitFor('the attempts counted', async () => ((await counted()) === '2' ? '2' : null), 5000, 50)).toBe('2')
  }, 60_000)

  test('a receiver down for a few seconds gets every event once it is back, each once', async () => {
    receiver.down()
    const s = site(3, 0)
    const runId = await createRun(trawl.api, s.url(0))
    await finished(trawl.api, runId)
    const hooks = (await trawl.api.get('/v1/webhooks')).body.data
    // Refused twice each, a second apart (connection refused is a failed attempt, not a lost event).
    await waitFor(
      'failed attempts',
      async () => {
        const deliveries = (await trawl.api.get(`/v1/webhooks/${hooks[0].id}/deliveries`)).body.data.filter((d: { payload: { data: { run_id: string } } }) => d.payload.data.run_id === runId)
        return deliveries.length === 2 && deliveries.every((d: { attempts: { status_code: number | null }[] }) => d.attempts.length >= 2 && d.attempts.every((a) => a.status_code === null))
      },
      10_000,
      50,
    )
    receiver.up()
    await bothEvents(runId)
    // Recorded once the receiver's answer is in.
    const deliveries = await waitFor(
      'both delivered',
      async () => {
        const all = (await trawl.api.get(`/v1/webhooks/${hooks[0].id}/deliveries`)).body.data.filter((d: { payload: { data: { run_id: string } } }) => d.payload.data.run_id === runId)
        return all.every((d: { status: string }) => d.status === 'delivered') ? all : null
      },
      5000,
      50,
    )
    const ids = receiver.ofRun(runId).map((r) => r.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.sort()).toEqual(deliveries.map((d: { id: string }) => d.id).sort())
  }, 60_000)

  test('kill -9 after the finish, before the delivery: the restarted process delivers it', async () => {
    receiver.down()
    const s = site(3, 0)
    const runId = await createRun(trawl.api, s.url(0))
    const run = await finished(trawl.api, runId)
    await trawl.kill9()
    expect(receiver.ofRun(runId)).toEqual([])
    receiver.up()
    trawl = await startTrawl({ dataDir, env: OPEN })
    const { ended } = await bothEvents(runId)
    expect(ended.data).toMatchObject({ run_id: runId, stats: run.stats })
    await Bun.sleep(300)
    expect(receiver.ofRun(runId)).toHaveLength(2)
    expect(receiver.rejected).toEqual([])
    expect((await trawl.stop()).code).toBe(0)
  }, 60_000)
})
