import { beforeEach, describe, expect, test } from 'bun:test'
import type { Store } from '../../src/store'
import type { NewJob } from '../../src/store/jobs'
import { GIVE_UP_MS, WEBHOOK_EVENTS, type AttemptResult, type NewWebhook, type WebhookEvent } from '../../src/store/webhook-model'
import { expectDomainError } from './contract'

const A = 'acme'
const B = 'globex'
const uuid = () => crypto.randomUUID()
const newJob = (over: Partial<NewJob> = {}): NewJob => ({ id: uuid(), name: 'docs', config: { seeds: ['https://example.com/'] }, labels: {}, ...over })
const hook = (over: Partial<NewWebhook> = {}): NewWebhook => ({
  id: uuid(),
  job_id: null,
  url: 'https://hooks.example/in',
  events: [...WEBHOOK_EVENTS],
  enabled: true,
  description: null,
  secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=',
  ...over,
})
const failed = (at: number, status_code: number | null = 500): AttemptResult => ({
  at,
  duration_ms: 3,
  status_code,
  error: status_code === null ? 'connection refused' : `answered ${status_code}`,
  delivered: false,
})

/**
 * Webhooks and their outbox (decision 116), on every engine: the database writes the deliveries
 * when a run moves or a trigger fires; deliverers claim them under leases and record attempts.
 */
export function webhookContract(name: string, make: () => Promise<Store>) {
  describe(`Webhook store contract: ${name}`, () => {
    let store: Store
    beforeEach(async () => {
      store = await make()
    })

    /** Every delivery of a webhook, oldest first: its event and payload. */
    const sent = async (tenant: string, webhookId: string) => {
      const page = await store.webhooks.deliveries(tenant, webhookId, {}, undefined, 100)
      return page!.data.reverse().map((d) => ({ event: d.event, payload: d.payload }))
    }
    const events = async (tenant: string, webhookId: string) => (await sent(tenant, webhookId)).map((d) => d.event as WebhookEvent)

    test('create, get, list (by job, enabled), update, delete; null for a job or webhook of no tenant’s; a job’s deletion takes its webhooks', async () => {
      const { job } = await store.jobs.create(A, newJob())
      expect(await store.webhooks.create(A, hook({ job_id: uuid() }))).toBeNull()
      expect(await store.webhooks.create(B, hook({ job_id: job.id }))).toBeNull()
      const all = (await store.webhooks.create(A, hook({ description: 'every job' })))!
      const one = (await store.webhooks.create(A, hook({ job_id: job.id, events: ['run.finished'], enabled: false })))!
      expect(one).toMatchObject({ job_id: job.id, events: ['run.finished'], enabled: false, description: null, url: 'https://hooks.example/in' })
      await expectDomainError(store.webhooks.create(A, hook({ id: one.id })), 'conflict')
      expect(await store.webhooks.get(A, all.id)).toEqual(all)
      expect(await store.webhooks.get(B, all.id)).toBeNull()
      expect((await store.webhooks.list(A, {}, undefined, 10)).data.map((w) => w.id)).toEqual([one.id, all.id])
      expect((await store.webhooks.list(A, { job_ids: [job.id] }, undefined, 10)).data.map((w) => w.id)).toEqual([one.id])
      expect((await store.webhooks.list(A, { enabled: true }, undefined, 10)).data.map((w) => w.id)).toEqual([all.id])
      expect((await store.webhooks.list(B, {}, undefined, 10)).data).toEqual([])
      const page = await store.webhooks.list(A, {}, undefined, 1)
      expect((await store.webhooks.list(A, {}, page.next!, 1)).data.map((w) => w.id)).toEqual([all.id])

      const patched = (await store.webhooks.update(A, one.id, { enabled: true, events: ['run.started', 'run.finished'], description: 'x' }))!
      expect(patched).toMatchObject({ enabled: true, events: ['run.started', 'run.finished'], description: 'x', url: one.url, secret: one.secret })
      expect(Date.parse(patched.updated_at)).toBeGreaterThan(Date.parse(one.updated_at))
      expect(await store.webhooks.update(B, one.id, { enabled: false })).toBeNull()

      expect(await store.webhooks.delete(B, all.id)).toBe(false)
      await store.jobs.delete(A, job.id)
      expect(await store.webhooks.get(A, one.id)).toBeNull()
      expect(await store.webhooks.get(A, all.id)).not.toBeNull()
      expect(await store.webhooks.delete(A, all.id)).toBe(true)
      expect(await store.webhooks.get(A, all.id)).toBeNull()
    })

    test('each move of a run writes one delivery per matching enabled webhook of its tenant, with the run as it is then', async () => {
      const { job } = await store.jobs.create(A, newJob())
      const { job: other } = await store.jobs.create(A, newJob())
      const everything = (await store.webhooks.create(A, hook()))!
      const pausesAndEnds = (await store.webhooks.create(A, hook({ job_id: job.id, events: ['run.paused', 'run.finished'] })))!
      const otherJob = (await store.webhooks.create(A, hook({ job_id: other.id })))!
      const disabled = (await store.webhooks.create(A, hook({ enabled: false })))!
      const { job: jobB } = await store.jobs.create(B, newJob())
      const tenantB = (await store.webhooks.create(B, hook()))!

      const runId = uuid()
      // Leased to its creator: pending → running, the start.
      await store.runs.create(A, job.id, { id: runId, config: {}, lease: { owner: 'contract:1', ms: 60_000 } })
      await store.runs.move(A, runId, 'pause')
      await store.runs.move(A, runId, 'resume')
      const run = (await store.runs.move(A, runId, 'stop'))!
      await store.runs.create(B, jobB.id, { id: uuid(), config: {} })

      expect(await events(A, everything.id)).toEqual(['run.started', 'run.paused', 'run.resumed', 'run.finished'])
      expect(await events(A, pausesAndEnds.id)).toEqual(['run.paused', 'run.finished'])
      expect(await events(A, otherJob.id)).toEqual([])
      expect(await events(A, disabled.id)).toEqual([])
      expect(await events(B, tenantB.id)).toEqual([])

      const [started, paused, , finished] = await sent(A, everything.id)
      const data = { run_id: runId, job_id: job.id }
      expect(started!.payload).toMatchObject({ type: 'run.started', data: { ...data, status: 'running', stop_reason: null, outcome: null } })
      expect(Object.keys((started!.payload as { data: object }).data)).toEqual(['run_id', 'job_id', 'status', 'stop_reason', 'outcome', 'stats'])
      expect(paused!.payload).toMatchObject({ type: 'run.paused', data: { ...data, status: 'paused' } })
      expect(finished!.payload).toEqual({
        type: 'run.finished',
        timestamp: run.finished_at,
        data: { ...data, status: 'finished', stop_reason: 'manual', outcome: 'stopped', stats: run.stats, error_counts: run.error_counts },
      })
      // The bytes sent: compact JSON in this key order, the same on both engines.
      const due = await store.webhooks.claim('contract:2', Date.now() + 1000, 60_000, 100)
      const bytes = due.find((d) => JSON.parse(d.payload).type === 'run.finished' && d.url === everything.url && JSON.parse(d.payload).data.run_id === runId)
      expect(bytes!.payload).toBe(JSON.stringify(finished!.payload))
      expect(started!.payload).toMatchObject({ timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) })

      // The deliveries outlive the run they describe.
      await store.runs.delete(A, runId)
      expect(await events(A, everything.id)).toHaveLength(4)
      expect(await store.webhooks.deliveries(B, everything.id, {}, undefined, 10)).toBeNull()
    })

    test('a trigger’s execution, created or skipped, is trigger.fired', async () => {
      const { job } = await store.jobs.create(A, newJob())
      const w = (await store.webhooks.create(A, hook({ job_id: job.id, events: ['trigger.fired'] })))!
      const tick = Date.parse('2030-01-01T10:00:00Z')
      const t = (await store.triggers.create(A, job.id, { id: uuid(), name: 'hourly', condition: { kind: 'schedule', params: { expression: '0 * * * *' } }, nextAt: tick }))!
      const [due] = await store.triggers.due(tick, 10)
      const made = (await store.triggers.fire(due!, { now: tick + 5, nextAt: tick + 3_600_000, run: { id: uuid(), config: {} } }))!
      const [next] = await store.triggers.due(tick + 3_600_000, 10)
      const skipped = (await store.triggers.fire(next!, { now: tick + 3_600_007, nextAt: null, run: { id: uuid(), config: {} } }))!
      expect(await sent(A, w.id)).toEqual([
        {
          event: 'trigger.fired',
          payload: {
            type: 'trigger.fired',
            timestamp: '2030-01-01T10:00:00.005Z',
            data: { trigger_id: t.id, job_id: job.id, execution_id: made.id, run_id: made.run_id, outcome: 'created_run', scheduled_at: '2030-01-01T10:00:00.000Z' },
          },
        },
        {
          event: 'trigger.fired',
          payload: {
            type: 'trigger.fired',
            timestamp: '2030-01-01T11:00:00.007Z',
            data: { trigger_id: t.id, job_id: job.id, execution_id: skipped.id, run_id: null, outcome: 'skipped', scheduled_at: '2030-01-01T11:00:00.000Z' },
          },
        },
      ])
    })

    test('claims: two claimers never get the same delivery; a lease holds until it lapses or is released; only its owner settles it', async () => {
      const { job } = await store.jobs.create(A, newJob())
      const w = (await store.webhooks.create(A, hook({ events: ['run.finished'] })))!
      for (let i = 0; i < 12; i++) {
        const run = (await store.runs.create(A, job.id, { id: uuid(), config: {} }))!
        await store.runs.move(A, run.id, 'stop')
      }
      const now = Date.now() + 1000
      const [one, two] = await Promise.all([store.webhooks.claim('p1', now, 60_000, 8), store.webhooks.claim('p2', now, 60_000, 8)])
      const ids = [...one!, ...two!].map((d) => d.id)
      expect(ids).toHaveLength(12)
      expect(new Set(ids).size).toBe(12)
      expect(await store.webhooks.claim('p3', now + 1000, 60_000, 100)).toEqual([])
      // A gone owner's leases released: its deliveries are claimable at once.
      expect((await store.webhooks.leaseOwners(now)).sort()).toEqual(['p1', 'p2'])
      expect(await store.webhooks.releaseLeases('p2')).toBe(two!.length)
      expect((await store.webhooks.claim('p3', now, 60_000, 100)).map((x) => x.id).sort()).toEqual(two!.map((x) => x.id).sort())

      const d = one![0]!
      expect(d).toMatchObject({ url: w.url, secret: w.secret, attempts: 0 })
      expect(await store.webhooks.record('p2', d, { at: now, duration_ms: 5, status_code: 204, error: null, delivered: true }, now + 5)).toBe(false)
      expect(await store.webhooks.record('p1', d, { at: now, duration_ms: 5, status_code: 204, error: null, delivered: true }, now + 5)).toBe(true)
      const delivered = (await store.webhooks.delivery(A, w.id, d.id))!
      expect(delivered).toMatchObject({ status: 'delivered', next_attempt_at: null, delivered_at: new Date(now + 5).toISOString() })
      // Both attempts are recorded: the late one of a sender that had lost the lease too.
      expect(delivered.attempts).toHaveLength(2)

      // After the lease lapses, the rest (not the delivered one) are claimed again, by anyone.
      const again = await store.webhooks.claim('p3', now + 60_001, 60_000, 100)
      expect(again.map((x) => x.id).sort()).toEqual(ids.filter((id) => id !== d.id).sort())
      // A disabled webhook's deliveries wait.
      await store.webhooks.update(A, w.id, { enabled: false })
      expect(await store.webhooks.claim('p4', now + 200_000, 60_000, 100)).toEqual([])
    })

    test('a failed attempt backs off 1 s, 2 s, … ; a day after it was written the delivery fails; a retry gives it another try', async () => {
      const { job } = await store.jobs.create(A, newJob())
      const w = (await store.webhooks.create(A, hook({ events: ['run.finished'] })))!
      const run = (await store.runs.create(A, job.id, { id: uuid(), config: {} }))!
      await store.runs.move(A, run.id, 'stop')
      const [pending] = (await store.webhooks.deliveries(A, w.id, { statuses: ['pending'] }, undefined, 10))!.data
      const created = Date.parse(pending!.created_at)
      expect(pending!.next_attempt_at).toBe(pending!.created_at)

      let now = created
      const attempt = async (expectDue: number) => {
        expect(await store.webhooks.claim('p', expectDue - 1, 60_000, 10)).toEqual([])
        const [d] = await store.webhooks.claim('p', expectDue, 60_000, 10)
        expect(d).toBeDefined()
        now = expectDue + 10
        expect(await store.webhooks.record('p', d!, failed(expectDue), now)).toBe(true)
      }
      await attempt(created)
      await attempt(now + 1000)
      await attempt(now + 2000)
      await attempt(now + 4000)
      const d = (await store.webhooks.delivery(A, w.id, pending!.id))!
      expect(d.attempts.map((a) => a.status_code)).toEqual([500, 500, 500, 500])
      expect(d.attempts[0]).toEqual({ at: pending!.created_at, duration_ms: 3, status_code: 500, error: 'answered 500' })
      expect(d.next_attempt_at).toBe(new Date(now + 8000).toISOString())

      // Late in the day the wait is capped at an hour, and never past the day's end.
      const [late] = await store.webhooks.claim('p', created + GIVE_UP_MS - 1000, 60_000, 10)
      await store.webhooks.record('p', late!, failed(created + GIVE_UP_MS - 1000, null), created + GIVE_UP_MS - 990)
      expect((await store.webhooks.delivery(A, w.id, pending!.id))!.next_attempt_at).toBe(new Date(created + GIVE_UP_MS).toISOString())
      const [last] = await store.webhooks.claim('p', created + GIVE_UP_MS, 60_000, 10)
      await store.webhooks.record('p', last!, failed(created + GIVE_UP_MS), created + GIVE_UP_MS + 10)
      const gaveUp = (await store.webhooks.delivery(A, w.id, pending!.id))!
      expect(gaveUp).toMatchObject({ status: 'failed', next_attempt_at: null, delivered_at: null })
      expect(gaveUp.attempts).toHaveLength(6)
      expect(gaveUp.attempts[4]).toMatchObject({ status_code: null, error: 'connection refused' })
      expect((await store.webhooks.deliveries(A, w.id, { statuses: ['failed'] }, undefined, 10))!.data.map((x) => x.id)).toEqual([pending!.id])
      expect(await store.webhooks.claim('p', created + 2 * GIVE_UP_MS, 60_000, 10)).toEqual([])

      await expectDomainError(
        store.webhooks.retry(A, w.id, pending!.id, created + GIVE_UP_MS + 20).then(() => store.webhooks.retry(A, w.id, pending!.id, 0)),
        'conflict',
      )
      expect((await store.webhooks.delivery(A, w.id, pending!.id))!.status).toBe('pending')
      expect(await store.webhooks.retry(B, w.id, pending!.id, 0)).toBeNull()
      expect(await store.webhooks.retry(A, w.id, 'msg_0', 0)).toBeNull()
      const [retried] = await store.webhooks.claim('p', created + GIVE_UP_MS + 20, 60_000, 10)
      expect(retried!.id).toBe(pending!.id)
      await store.webhooks.record('p', retried!, { at: created + GIVE_UP_MS + 20, duration_ms: 1, status_code: 200, error: null, delivered: true }, created + GIVE_UP_MS + 21)
      expect((await store.webhooks.delivery(A, w.id, pending!.id))!).toMatchObject({ status: 'delivered', delivered_at: new Date(created + GIVE_UP_MS + 21).toISOString() })

      // Deleting the webhook takes its deliveries.
      await store.webhooks.delete(A, w.id)
      expect(await store.webhooks.claim('p', created + 3 * GIVE_UP_MS, 60_000, 10)).toEqual([])
    })
  })
}
