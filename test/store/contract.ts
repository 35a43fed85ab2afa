import { beforeEach, describe, expect, test } from 'bun:test'
import { DomainError, type DomainCode } from '../../src/core/errors'
import { hostHash, linkHash } from '../../src/core/url'
import type { Store } from '../../src/store'
import type { NewArtifact } from '../../src/store/artifacts'
import type { LogEntry } from '../../src/store/crawl-store'
import type { NewJob } from '../../src/store/jobs'
import type { Page } from '../../src/store/types'
import { pageRecord } from '../helpers/page-record'
import { ledgerPayment } from '../helpers/payment'

/** Expects `p` to reject with a DomainError of `code`. */
export async function expectDomainError(p: Promise<unknown>, code: DomainCode) {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  )
  expect(e).toBeInstanceOf(DomainError)
  expect((e as DomainError).code).toBe(code)
}

/** Every row of a list, a page of `perPage` at a time from each page's `next`; and how many pages it took. */
async function walk<T>(list: (after: number | undefined) => Promise<Page<T> | null>): Promise<{ rows: T[]; pages: number }> {
  const rows: T[] = []
  let after: number | undefined
  for (let pages = 1; ; pages++) {
    const page = await list(after)
    if (!page) throw new Error('the list answered null')
    rows.push(...page.data)
    if (page.next === null) return { rows, pages }
    after = page.next
  }
}

const A = 'acme'
const B = 'globex'
const OWNER = 'contract-test:1:owner'
const uuid = () => crypto.randomUUID()
const newJob = (over: Partial<NewJob> = {}): NewJob => ({ id: uuid(), name: 'docs', config: { seeds: ['https://example.com/'] }, labels: {}, ...over })
const iso = (ms: number) => new Date(ms).toISOString()

/** The URLs the artifacts of these tests are for. */
const ARTIFACT_URLS = ['https://a.example/page', 'https://a.example/other']

const artifact = (tenant: string, runId: string, key: string, over: Partial<NewArtifact> = {}): NewArtifact => ({
  tenant,
  id: uuid(),
  run_id: runId,
  url_hash: linkHash('https://a.example/page'),
  blob_key: key,
  kind: 'raw',
  pipeline_id: null,
  content_type: 'text/html',
  size: 10,
  checksum: 'c',
  created_at: Date.parse('2030-01-01T00:00:00Z'),
  ...over,
})

/**
 * The behaviour every Store engine must have (src/store/types.ts). Registers its own describe
 * block; `make` gives a fresh, empty store for each test.
 */
export function storeContract(name: string, make: () => Promise<Store>) {
  describe(`Store contract: ${name}`, () => {
    let store: Store
    beforeEach(async () => {
      store = await make()
    })

    /** A job of the tenant with a pending run; answers both ids. */
    const jobWithRun = async (tenant = A, job: Partial<NewJob> = {}) => {
      const { job: j, run } = await store.jobs.create(tenant, newJob(job), { id: uuid(), config: { seeds: ['https://example.com/'] } })
      return { jobId: j.id, runId: run!.id }
    }

    /** A run leased to OWNER, and what the crawl wrote of it through `store.crawl`, in one commit. */
    const crawled = async (
      tenant: string,
      write: (runId: string) => { artifacts?: NewArtifact[]; logs?: Omit<LogEntry, 'run_seq'>[]; visits?: { url: string; depth: number; status: number | null; at: number; children?: string[] }[] },
    ) => {
      const created = await store.jobs.create(tenant, newJob(), { id: uuid(), config: {}, lease: { owner: OWNER, ms: 60_000 } })
      const runSeq = created.runSeq!
      const rows = write(created.run!.id)
      // The engine catalogues a URL before it records the URL's visit or artifacts.
      const urls = [...new Set([...(rows.visits ?? []).flatMap((v) => [v.url, ...(v.children ?? [])]), ...(rows.artifacts?.length ? ARTIFACT_URLS : [])])]
      if (urls.length) await store.links.upsert(tenant, urls)
      const pages = (rows.visits ?? []).map((v) =>
        pageRecord(linkHash(v.url), hostHash(new URL(v.url).hostname), { depth: v.depth, status: v.status, visited_at: v.at, children: (v.children ?? []).map(linkHash) }),
      )
      const counters = { queued: 0, visited: pages.length, failed: 0, bytes: 0, fetched: pages.length, depth_cut: 0 }
      const logs = (rows.logs ?? []).map((e) => ({ ...e, run_seq: runSeq }))
      const batch = { links: [], enqueued: [], marks: [], hostFailures: new Map(), pages, logs, artifacts: rows.artifacts ?? [], counters, errorCounts: null }
      expect((await store.crawl.commit(runSeq, OWNER, batch)).held).toBe(true)
      return created.run!.id
    }

    describe('hosts and links', () => {
      test('upsert answers every one in order, once per tenant; get and list see only the tenant’s', async () => {
        const [a, b] = await store.hosts.upsert(A, ['a.example', 'b.example'])
        expect([a!.domain, b!.domain]).toEqual(['a.example', 'b.example'])
        expect((await store.hosts.upsert(A, ['a.example']))[0]).toEqual(a!)
        expect(await store.hosts.get(A, a!.hash)).toEqual(a!)
        expect(await store.hosts.get(B, a!.hash)).toBeNull()
        expect((await store.hosts.list(B, {}, undefined, 10)).data).toEqual([])
        expect((await store.hosts.list(A, { hosts: ['b.example'] }, undefined, 10)).data).toEqual([b!])
        expect((await store.hosts.list(A, { host_hashes: [a!.hash] }, undefined, 10)).data).toEqual([a!])
      })

      test('lists page newest first by their next keys, each row once', async () => {
        const urls = Array.from({ length: 7 }, (_, i) => `https://p.example/${i}`)
        for (const url of urls) await store.links.upsert(A, [url])
        await store.links.upsert(B, ['https://p.example/other'])
        const { rows, pages } = await walk((after) => store.links.list(A, {}, after, 3))
        expect(rows.map((l) => l.url)).toEqual([...urls].reverse())
        expect(pages).toBe(3)
        const hosts = await walk((after) => store.hosts.list(A, {}, after, 1))
        expect(hosts.rows.map((h) => h.domain)).toEqual(['p.example'])
      })

      test('links carry their host; filters by URL, host and label; a host’s links; null for a host of no tenant’s', async () => {
        const [l1, l2, l3] = await store.links.upsert(A, ['https://a.example/1', 'https://a.example/2', 'https://b.example/'])
        expect(l1!.host).toEqual({ hash: hostHash('a.example'), domain: 'a.example' })
        expect(await store.links.get(A, l1!.hash)).toEqual(l1!)
        expect(await store.links.get(B, l1!.hash)).toBeNull()
        expect((await store.links.list(A, { urls: ['https://a.example/2'] }, undefined, 10)).data).toEqual([l2!])
        expect((await store.links.list(A, { hosts: ['b.example'] }, undefined, 10)).data).toEqual([l3!])
        expect((await store.links.list(A, { hosts: ['nowhere.example'] }, undefined, 10)).data).toEqual([])
        expect((await store.links.listOfHost(A, l1!.host.hash, {}, undefined, 10))!.data.map((l) => l.hash)).toEqual([l2!.hash, l1!.hash])
        expect(await store.links.listOfHost(B, l1!.host.hash, {}, undefined, 10)).toBeNull()
        await store.links.labels.merge(A, l2!.hash, { kind: 'article' })
        expect((await store.links.list(A, { labels: { kind: 'article' } }, undefined, 10)).data.map((l) => l.hash)).toEqual([l2!.hash])
      })

      test('labels: merge (its keys win), remove, get; a validation error past the limit; null for another tenant’s row', async () => {
        const [h] = await store.hosts.upsert(A, ['l.example'])
        expect(await store.hosts.labels.merge(A, h!.hash, { a: '1', b: '2' })).toEqual({ a: '1', b: '2' })
        expect(await store.hosts.labels.merge(A, h!.hash, { b: '3' })).toEqual({ a: '1', b: '3' })
        expect(await store.hosts.labels.remove(A, h!.hash, ['a', 'zz'])).toEqual({ b: '3' })
        expect(await store.hosts.labels.get(A, h!.hash)).toEqual({ b: '3' })
        expect((await store.hosts.get(A, h!.hash))!.labels).toEqual({ b: '3' })
        await expectDomainError(store.hosts.labels.merge(A, h!.hash, Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, 'v']))), 'validation')
        expect(await store.hosts.labels.get(A, h!.hash)).toEqual({ b: '3' })
        for (const op of [store.hosts.labels.get(B, h!.hash), store.hosts.labels.merge(B, h!.hash, { x: 'y' }), store.hosts.labels.remove(B, h!.hash, ['b'])]) expect(await op).toBeNull()
      })
    })

    describe('jobs and runs', () => {
      test('a job alone; get, update, and a conflict for a taken id; another tenant may use the id', async () => {
        const job = newJob({ labels: { team: 'x' } })
        const { job: created, run } = await store.jobs.create(A, job)
        expect(run).toBeNull()
        expect(created).toMatchObject({ id: job.id, name: 'docs', config: job.config, labels: { team: 'x' } })
        expect(await store.jobs.get(A, job.id)).toEqual(created)
        await expectDomainError(store.jobs.create(A, newJob({ id: job.id })), 'conflict')
        expect(await store.jobs.get(B, job.id)).toBeNull()
        expect((await store.jobs.create(B, newJob({ id: job.id }))).job.id).toBe(job.id)
        const updated = await store.jobs.update(A, job.id, { name: 'renamed', labels: {} })
        expect(updated).toMatchObject({ name: 'renamed', config: job.config, labels: {} })
        expect(Date.parse(updated!.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at))
        expect(await store.jobs.update(A, uuid(), { name: 'x' })).toBeNull()
        expect((await store.jobs.list(A, { labels: { team: 'x' } }, undefined, 10)).data).toEqual([])
      })

      test('a job with its first run, both or neither: a taken run id leaves no job', async () => {
        const { jobId, runId } = await jobWithRun(A, { labels: { env: 'prod' } })
        const run = await store.runs.get(A, runId)
        expect(run).toMatchObject({ id: runId, job_id: jobId, status: 'pending', labels: { env: 'prod' }, config: { seeds: ['https://example.com/'] } })
        const job = newJob()
        await expectDomainError(store.jobs.create(A, job, { id: runId, config: {} }), 'conflict')
        expect(await store.jobs.get(A, job.id)).toBeNull()
      })

      test('a run leased to its creator is running, held (shared: worked on) by it, and comes with its seq', async () => {
        const { run, runSeq } = await store.jobs.create(A, newJob(), { id: uuid(), config: {}, lease: { owner: OWNER, ms: 60_000 } })
        expect(run!.status).toBe('running')
        expect(run!.started_at).not.toBeNull()
        expect(typeof runSeq).toBe('number')
        const now = Date.now()
        expect((await store.crawl.heldRunning(now)).filter((h) => h.seq === runSeq)).toEqual([{ seq: runSeq!, lease_owner: OWNER }])
        expect(await store.crawl.renew(runSeq!, OWNER, now + 60_000)).toBe(true)
        // One process holds a run on the run row; a shared store's creator is its first worker, and the row names no holder.
        expect((await store.crawl.run(runSeq!))!.lease_owner).toBe(store.crawl.shared ? null : OWNER)
        if (store.crawl.shared) expect(await store.crawl.shared.outlook(runSeq!, now)).toEqual({ remaining: 0, freeHosts: 0, workers: 1 })
      })

      test('runs.create: labels from the job, null for a job of no tenant’s, conflict for a taken id', async () => {
        const { job } = await store.jobs.create(A, newJob({ labels: { l: 'v' } }))
        const run = await store.runs.create(A, job.id, { id: uuid(), config: { resolved: true } })
        expect(run).toMatchObject({ job_id: job.id, status: 'pending', labels: { l: 'v' }, config: { resolved: true }, stats: { queued: 0, visited: 0, failed: 0, bytes: 0 } })
        expect(await store.runs.create(B, job.id, { id: uuid(), config: {} })).toBeNull()
        await expectDomainError(store.runs.create(A, job.id, { id: run!.id, config: {} }), 'conflict')
        expect(await store.runs.get(B, run!.id)).toBeNull()
      })

      test('moves follow the run table: a conflict where the state does not fit, null for no run', async () => {
        const { runId } = await jobWithRun()
        await expectDomainError(store.runs.move(A, runId, 'pause'), 'conflict')
        await expectDomainError(store.runs.move(A, runId, 'resume'), 'conflict')
        expect(await store.runs.move(A, runId, 'stop')).toMatchObject({ status: 'finished', stop_reason: 'manual', outcome: 'stopped' })
        await expectDomainError(store.runs.move(A, runId, 'stop'), 'conflict')
        expect(await store.runs.move(B, runId, 'stop')).toBeNull()
      })

      test('run lists: all, by job, by status; a job’s runs; null for a job of no tenant’s', async () => {
        const one = await jobWithRun()
        const two = await jobWithRun()
        const more = await store.runs.create(A, one.jobId, { id: uuid(), config: {} })
        await store.runs.move(A, one.runId, 'stop')
        await jobWithRun(B)
        const ids = async (p: Promise<Page<{ id: string }> | null>) => (await p)!.data.map((r) => r.id)
        expect(await ids(store.runs.list(A, {}, undefined, 10))).toEqual([more!.id, two.runId, one.runId])
        expect(await ids(store.runs.list(A, { job_ids: [one.jobId] }, undefined, 10))).toEqual([more!.id, one.runId])
        expect(await ids(store.runs.list(A, { job_ids: [uuid()] }, undefined, 10))).toEqual([])
        expect(await ids(store.runs.list(A, { statuses: ['finished'] }, undefined, 10))).toEqual([one.runId])
        expect(await ids(store.runs.listOfJob(A, two.jobId, {}, undefined, 10))).toEqual([two.runId])
        expect(await store.runs.listOfJob(B, two.jobId, {}, undefined, 10)).toBeNull()
        expect((await walk((after) => store.runs.list(A, {}, after, 2))).rows.map((r) => r.id)).toEqual([more!.id, two.runId, one.runId])
      })

      test('job lists filter by name, ids, time and labels, and page', async () => {
        const made: string[] = []
        for (let i = 0; i < 5; i++) made.push((await store.jobs.create(A, newJob({ name: `job-${i}`, labels: i % 2 ? { odd: 'yes' } : {} }))).job.id)
        const [j0, j1, j2, j3, j4] = made as [string, string, string, string, string]
        const ids = async (f: Parameters<Store['jobs']['list']>[1]) => (await store.jobs.list(A, f, undefined, 10)).data.map((j) => j.id)
        expect(await ids({})).toEqual([...made].reverse())
        expect(await ids({ names: ['job-2', 'job-4'] })).toEqual([j4, j2])
        expect(await ids({ include_ids: [j0, j1] })).toEqual([j1, j0])
        expect(await ids({ exclude_ids: [j0] })).toEqual([j4, j3, j2, j1])
        expect(await ids({ labels: { odd: 'yes' } })).toEqual([j3, j1])
        const first = (await store.jobs.get(A, j0))!.created_at
        expect(await ids({ created_before: first })).toEqual([])
        expect(await ids({ created_after: iso(Date.parse(first) + 3_600_000) })).toEqual([])
        expect((await walk((after) => store.jobs.list(A, {}, after, 2))).rows.map((j) => j.id)).toEqual([...made].reverse())
        expect((await store.jobs.list(B, {}, undefined, 10)).data).toEqual([])
      })

      test('deleting a run takes its artifact rows and asks for its bodies to go; deleting a job takes its runs', async () => {
        const runId = await crawled(A, (run) => ({ artifacts: [artifact(A, run, 'k/1')] }))
        expect(await store.runs.delete(B, runId)).toBe(false)
        expect(await store.runs.delete(A, runId)).toBe(true)
        expect(await store.runs.get(A, runId)).toBeNull()
        expect((await store.artifacts.list(A, { run_ids: [runId] }, undefined, 10)).data).toEqual([])
        expect(await store.artifacts.pendingBodyDeletions()).toEqual([runId])
        expect(await store.runs.delete(A, runId)).toBe(false)
        await store.artifacts.bodyDeletionDone(runId)
        expect(await store.artifacts.pendingBodyDeletions()).toEqual([])

        const { jobId, runId: first } = await jobWithRun()
        const second = await store.runs.create(A, jobId, { id: uuid(), config: {} })
        expect(await store.jobs.delete(B, jobId)).toBeNull()
        expect((await store.jobs.delete(A, jobId))!.sort()).toEqual([first, second!.id].sort())
        expect(await store.jobs.get(A, jobId)).toBeNull()
        expect(await store.runs.get(A, first)).toBeNull()
        expect((await store.artifacts.pendingBodyDeletions()).sort()).toEqual([first, second!.id].sort())
        expect(await store.jobs.delete(A, jobId)).toBeNull()
      })
    })

    describe('runs census', () => {
      test('runs by tenant and status over every tenant, with the URLs queued in unfinished runs only', async () => {
        expect(await store.runs.census()).toEqual([])
        /** A run leased to OWNER whose crawl committed `queued` URLs still to visit. */
        const crawling = async (queued: number) => {
          const { run, runSeq } = await store.jobs.create(A, newJob(), { id: uuid(), config: {}, lease: { owner: OWNER, ms: 60_000 } })
          const counters = { queued, visited: 1, failed: 0, bytes: 0, fetched: 1, depth_cut: 0 }
          const batch = { links: [], enqueued: [], marks: [], hostFailures: new Map(), pages: [], logs: [], artifacts: [], counters, errorCounts: null }
          expect((await store.crawl.commit(runSeq!, OWNER, batch)).held).toBe(true)
          return run!.id
        }
        await crawling(3)
        await crawling(2)
        const stopped = await crawling(7)
        await store.runs.move(A, stopped, 'stop')
        await jobWithRun(A)
        await jobWithRun(B)
        await jobWithRun(B)
        expect(await store.runs.census()).toEqual([
          { tenant: A, status: 'finished', runs: 1, queued: 0 },
          { tenant: A, status: 'pending', runs: 1, queued: 0 },
          { tenant: A, status: 'running', runs: 2, queued: 5 },
          { tenant: B, status: 'pending', runs: 2, queued: 0 },
        ])
      })
    })

    describe('triggers', () => {
      const hourly = { kind: 'schedule' as const, params: { expression: '0 * * * *' } }

      test('create, get, list, a job’s list, delete; null for a job or trigger of no tenant’s; conflict for a taken id', async () => {
        const { job } = await store.jobs.create(A, newJob())
        const t = await store.triggers.create(A, job.id, { id: uuid(), name: 'hourly', condition: hourly, nextAt: Date.now() + 3_600_000 })
        expect(t).toMatchObject({ job_id: job.id, name: 'hourly', condition: hourly, enabled: true, last_executed_at: null })
        expect(await store.triggers.get(A, t!.id)).toEqual(t!)
        expect(await store.triggers.get(B, t!.id)).toBeNull()
        expect(await store.triggers.create(B, job.id, { id: uuid(), name: 'x', condition: hourly, nextAt: null })).toBeNull()
        await expectDomainError(store.triggers.create(A, job.id, { id: t!.id, name: 'again', condition: hourly, nextAt: null }), 'conflict')
        const other = await store.triggers.create(A, (await store.jobs.create(A, newJob())).job.id, { id: uuid(), name: 'on finish', condition: { kind: 'on_finish', params: {} }, nextAt: null })
        expect((await store.triggers.list(A, {}, undefined, 10)).data.map((x) => x.id)).toEqual([other!.id, t!.id])
        expect((await store.triggers.list(A, { job_ids: [job.id] }, undefined, 10)).data.map((x) => x.id)).toEqual([t!.id])
        expect((await store.triggers.list(A, { names: ['on finish'] }, undefined, 10)).data.map((x) => x.id)).toEqual([other!.id])
        expect((await store.triggers.listOfJob(A, job.id, {}, undefined, 10))!.data.map((x) => x.id)).toEqual([t!.id])
        expect(await store.triggers.listOfJob(B, job.id, {}, undefined, 10)).toBeNull()
        expect((await walk((after) => store.triggers.list(A, {}, after, 1))).pages).toBe(2)
        expect(await store.triggers.delete(B, t!.id)).toBe(false)
        expect(await store.triggers.delete(A, t!.id)).toBe(true)
        expect(await store.triggers.get(A, t!.id)).toBeNull()
      })

      test('a schedule fires once at its tick, creating the run it is given; a busy job is skipped; disabled, it does not fire', async () => {
        const { job } = await store.jobs.create(A, newJob())
        const tick = Date.parse('2030-01-01T10:00:00Z')
        const t = (await store.triggers.create(A, job.id, { id: uuid(), name: 'hourly', condition: hourly, nextAt: tick }))!
        expect(await store.triggers.nextDue()).toBe(tick)
        expect(await store.triggers.due(tick - 1, 10)).toEqual([])
        const [due] = await store.triggers.due(tick, 10)
        expect(due).toMatchObject({ kind: 'schedule', due_at: tick, tenant: A, job_id: job.id, schedule: hourly.params })
        const runId = uuid()
        const made = await store.triggers.fire(due!, { now: tick + 5, nextAt: tick + 3_600_000, run: { id: runId, config: { resolved: 1 } } })
        expect(made).toMatchObject({ trigger_id: t.id, run_id: runId, outcome: 'created_run', scheduled_at: iso(tick), executed_at: iso(tick + 5) })
        expect(await store.runs.get(A, runId)).toMatchObject({ job_id: job.id, status: 'pending', config: { resolved: 1 } })
        expect(await store.triggers.fire(due!, { now: tick + 6, nextAt: null, run: { id: uuid(), config: {} } })).toBeNull()
        expect(await store.triggers.nextDue()).toBe(tick + 3_600_000)
        expect((await store.triggers.get(A, t.id))!.last_executed_at).toBe(iso(tick + 5))

        const [next] = await store.triggers.due(tick + 3_600_000, 10)
        expect(await store.triggers.fire(next!, { now: tick + 3_600_000, nextAt: tick + 7_200_000, run: { id: uuid(), config: {} } })).toMatchObject({ run_id: null, outcome: 'skipped' })
        const executions = await store.triggers.executions(A, t.id, {}, undefined, 10)
        expect(executions!.data.map((e) => e.outcome)).toEqual(['skipped', 'created_run'])
        expect(await store.triggers.executions(B, t.id, {}, undefined, 10)).toBeNull()

        const [failing] = await store.triggers.due(tick + 7_200_000, 10)
        await store.triggers.discard(failing!, tick + 10_800_000)
        expect(await store.triggers.nextDue()).toBe(tick + 10_800_000)
        expect((await store.triggers.setEnabled(A, t.id, false, null))!.enabled).toBe(false)
        expect(await store.triggers.nextDue()).toBeNull()
        expect(await store.triggers.setEnabled(B, t.id, true, tick)).toBeNull()
        expect((await store.triggers.setEnabled(A, t.id, true, tick + 14_400_000))!.enabled).toBe(true)
        expect(await store.triggers.nextDue()).toBe(tick + 14_400_000)
      })

      test('an on_finish trigger fires after a run of its job finishes', async () => {
        const { jobId, runId } = await jobWithRun()
        const t = (await store.triggers.create(A, jobId, { id: uuid(), name: 'again', condition: { kind: 'on_finish', params: {} }, nextAt: null }))!
        expect(await store.triggers.due(Date.now() + 60_000, 10)).toEqual([])
        await store.runs.move(A, runId, 'stop')
        const [due] = await store.triggers.due(Date.now() + 60_000, 10)
        expect(due).toMatchObject({ kind: 'on_finish', tenant: A, job_id: jobId, schedule: null })
        const made = await store.triggers.fire(due!, { now: Date.now(), nextAt: null, run: { id: uuid(), config: {} } })
        expect(made).toMatchObject({ trigger_id: t.id, outcome: 'created_run' })
        expect(await store.triggers.due(Date.now() + 60_000, 10)).toEqual([])
      })

      test('an on_finish trigger with stop_reasons and outcomes fires only for the finishes it names', async () => {
        const { job } = await store.jobs.create(A, newJob())
        const onFinish = async (name: string, params: object) => (await store.triggers.create(A, job.id, { id: uuid(), name, condition: { kind: 'on_finish', params }, nextAt: null }))!
        const aged = await onFinish('re-run when aged out', { stop_reasons: ['max_age', 'max_urls'] })
        const failed = await onFinish('alert on failure', { outcomes: ['failed'] })
        const both = await onFinish('limited by max_urls', { stop_reasons: ['max_urls'], outcomes: ['limited'] })
        const any = await onFinish('any', { delay: '1s' })
        /** Finishes a new run of the job as the engine does; answers the names of the triggers that recorded a firing for it. */
        const firedBy = async (reason: string, outcome: string) => {
          const run = (await store.runs.create(A, job.id, { id: uuid(), config: {} }))!
          const seq = (await store.crawl.claimable(Date.now(), 100)).find((r) => r.id === run.id)!.seq
          await store.crawl.finish(seq, reason, Date.now(), outcome)
          const before = new Map(await Promise.all([aged, failed, both, any].map(async (t) => [t.name, (await store.triggers.executions(A, t.id, {}, undefined, 100))!.data.length] as const)))
          // Each firing is made (the first creates a run, the rest are skipped while it is unfinished); then that run is stopped.
          for (const d of await store.triggers.due(Date.now() + 60_000, 10)) await store.triggers.fire(d, { now: Date.now(), nextAt: null, run: { id: uuid(), config: {} } })
          const names: string[] = []
          for (const t of [aged, failed, both, any]) if ((await store.triggers.executions(A, t.id, {}, undefined, 100))!.data.length > before.get(t.name)!) names.push(t.name)
          for (const r of (await store.runs.listOfJob(A, job.id, { statuses: ['pending'] }, undefined, 100))!.data) await store.runs.move(A, r.id, 'stop')
          for (const d of await store.triggers.due(Date.now() + 60_000, 10)) await store.triggers.discard(d, null)
          return names
        }
        expect(await firedBy('max_age', 'limited')).toEqual(['re-run when aged out', 'any'])
        expect(await firedBy('max_urls', 'limited')).toEqual(['re-run when aged out', 'limited by max_urls', 'any'])
        expect(await firedBy('max_urls', 'complete')).toEqual(['re-run when aged out', 'any'])
        expect(await firedBy('unknown', 'failed')).toEqual(['alert on failure', 'any'])
        expect(await firedBy('max_depth', 'complete')).toEqual(['any'])
      })
    })

    describe('pattern sets and data maps', () => {
      const regex = (...p: string[]) => ({ format: 'regex' as const, patterns: p })

      test('pattern sets: of a host of the tenant’s catalogue, replace, delete, lists, forHost oldest first', async () => {
        const [h] = await store.hosts.upsert(A, ['shop.example'])
        const first = await store.patterns.create(A, h!.hash, { id: uuid(), category: 'products', patterns: regex('^/p/') })
        expect(first).toMatchObject({ category: 'products', patterns: regex('^/p/'), host: { hash: h!.hash, domain: 'shop.example' } })
        expect(await store.patterns.create(B, h!.hash, { id: uuid(), category: 'x', patterns: regex('x') })).toBeNull()
        await expectDomainError(store.patterns.create(A, h!.hash, { id: first!.id, category: 'x', patterns: regex('x') }), 'conflict')
        const second = await store.patterns.create(A, h!.hash, { id: uuid(), category: 'articles', patterns: regex('^/blog/') })
        expect(await store.patterns.forHost(A, h!.hash)).toEqual([first!, second!])
        expect(await store.patterns.forHost(B, h!.hash)).toEqual([])
        expect((await store.patterns.replace(A, first!.id, regex('^/item/')))!.patterns).toEqual(regex('^/item/'))
        expect(await store.patterns.replace(B, first!.id, regex('x'))).toBeNull()
        expect((await store.patterns.list(A, { categories: ['articles'] }, undefined, 10)).data).toEqual([second!])
        expect((await store.patterns.listOfHost(A, h!.hash, {}, undefined, 1))!.next).not.toBeNull()
        expect(await store.patterns.listOfHost(B, h!.hash, {}, undefined, 10)).toBeNull()
        expect(await store.patterns.delete(B, first!.id)).toBe(false)
        expect(await store.patterns.delete(A, first!.id)).toBe(true)
        expect(await store.patterns.get(A, first!.id)).toBeNull()
      })

      test('data maps: of a host, update moves updated_at forward, delete, lists', async () => {
        const [h] = await store.hosts.upsert(A, ['blog.example'])
        const map = { fields: [{ name: 'title', selector: 'h1' }] }
        const created = await store.dataMaps.create(A, h!.hash, { id: uuid(), schema_id: uuid(), map })
        expect(created).toMatchObject({ map, host: { hash: h!.hash, domain: 'blog.example' } })
        expect(await store.dataMaps.create(B, h!.hash, { id: uuid(), schema_id: uuid(), map })).toBeNull()
        await expectDomainError(store.dataMaps.create(A, h!.hash, { id: created!.id, schema_id: uuid(), map }), 'conflict')
        expect(await store.dataMaps.get(A, created!.id)).toEqual(created!)
        expect(await store.dataMaps.get(B, created!.id)).toBeNull()
        const schema = uuid()
        const updated = await store.dataMaps.update(A, created!.id, { schema_id: schema })
        expect(updated).toMatchObject({ schema_id: schema, map })
        expect(Date.parse(updated!.updated_at)).toBeGreaterThan(Date.parse(created!.updated_at))
        expect(await store.dataMaps.update(B, created!.id, { schema_id: schema })).toBeNull()
        expect((await store.dataMaps.list(A, { schema_ids: [schema] }, undefined, 10)).data).toEqual([updated!])
        expect((await store.dataMaps.listOfHost(A, h!.hash, {}, undefined, 10))!.data).toEqual([updated!])
        expect(await store.dataMaps.listOfHost(B, h!.hash, {}, undefined, 10)).toBeNull()
        expect(await store.dataMaps.delete(B, created!.id)).toBe(false)
        expect(await store.dataMaps.delete(A, created!.id)).toBe(true)
        expect((await store.dataMaps.list(A, {}, undefined, 10)).data).toEqual([])
      })
    })

    describe('what a crawl wrote', () => {
      test('artifacts: get, list, forUrls, shared blobs, claimed keys, delete', async () => {
        const rows: NewArtifact[] = []
        const runId = await crawled(A, (run) => {
          rows.push(artifact(A, run, 'k/shared'), artifact(A, run, 'k/own', { kind: 'parsed', pipeline_id: 'p', url_hash: linkHash('https://a.example/other') }))
          return { artifacts: rows }
        })
        const [shared, own] = rows
        await crawled(B, (run) => ({ artifacts: [artifact(B, run, 'k/shared')] }))
        expect(await store.artifacts.get(A, shared!.id)).toMatchObject({ id: shared!.id, run_id: runId, blob_key: 'k/shared', kind: 'raw', size: 10 })
        expect(await store.artifacts.get(B, shared!.id)).toBeNull()
        expect((await store.artifacts.list(A, {}, undefined, 10)).data.map((a) => a.id)).toEqual([own!.id, shared!.id])
        expect((await store.artifacts.list(A, { kinds: ['parsed'] }, undefined, 10)).data.map((a) => a.id)).toEqual([own!.id])
        expect((await walk((after) => store.artifacts.list(A, { run_ids: [runId] }, after, 1))).pages).toBe(2)
        expect((await store.artifacts.forUrls(A, runId, [shared!.url_hash])).map((a) => a.id)).toEqual([shared!.id])
        expect(await store.artifacts.forUrls(B, runId, [shared!.url_hash])).toEqual([])
        expect(await store.artifacts.blobShared(A, shared!)).toBe(true)
        expect(await store.artifacts.blobShared(A, own!)).toBe(false)
        expect(await store.artifacts.claimed(['k/shared', 'k/own', 'k/none'])).toEqual(new Set(['k/shared', 'k/own']))
        expect(await store.artifacts.delete(B, own!.id)).toBeNull()
        expect((await store.artifacts.delete(A, own!.id))!.id).toBe(own!.id)
        expect(await store.artifacts.get(A, own!.id)).toBeNull()
      })

      test("a parsed artifact kept as the page's raw body: its source URL, for its tenant only; shares the raw blob", async () => {
        const rows: NewArtifact[] = []
        await crawled(A, (run) => {
          const raw = artifact(A, run, 'k/page')
          rows.push(raw, { ...raw, id: crypto.randomUUID(), kind: 'parsed', pipeline_id: 'default', content_type: 'application/json', size: 99, source_url: 'https://a.example/moved' })
          return { artifacts: rows }
        })
        const [raw, parsed] = rows
        expect(await store.artifacts.source(A, parsed!.id)).toBe('https://a.example/moved')
        expect(await store.artifacts.source(B, parsed!.id)).toBeNull()
        expect(await store.artifacts.source(A, raw!.id)).toBeNull()
        expect(await store.artifacts.get(A, parsed!.id)).toMatchObject({ kind: 'parsed', blob_key: 'k/page', size: 99, content_type: 'application/json' })
        expect(await store.artifacts.blobShared(A, raw!)).toBe(true)
        await store.artifacts.delete(A, raw!.id)
        expect(await store.artifacts.blobShared(A, parsed!)).toBe(false)
        expect(await store.artifacts.source(A, parsed!.id)).toBe('https://a.example/moved')
      })

      test('crawl log: newest first by next keys; a key of another run is a validation error; metrics, latency, errors; null for no run', async () => {
        const t0 = Date.parse('2030-01-01T00:00:00Z')
        const entry = (i: number, over: Partial<LogEntry> = {}): Omit<LogEntry, 'run_seq'> => ({
          url: `https://a.example/${i}`,
          url_hash: linkHash(`https://a.example/${i}`),
          host: 'a.example',
          step: 'fetch',
          status: 'ok',
          http_status: 200,
          latency_ms: 10 * (i + 1),
          occurred_at: t0 + i * 1000,
          ...over,
        })
        const runId = await crawled(A, () => ({ logs: [entry(0), entry(1), entry(2, { status: 'error', error_reason: 'dns', error_detail: 'no such host', http_status: undefined })] }))
        const other = await crawled(A, () => ({ logs: [entry(9)] }))
        const { rows, pages } = await walk((after) => store.crawlLogs.list(A, runId, {}, after, 2))
        expect(rows.map((e) => e.url)).toEqual(['https://a.example/2', 'https://a.example/1', 'https://a.example/0'])
        expect(pages).toBe(2)
        expect(rows[0]).toMatchObject({ run_id: runId, step: 'fetch', status: 'error', error_reason: 'dns', occurred_at: iso(t0 + 2000) })
        const firstPage = (await store.crawlLogs.list(A, runId, {}, undefined, 2))!
        await expectDomainError(store.crawlLogs.list(A, other, {}, firstPage.next!, 2), 'validation')
        expect((await store.crawlLogs.list(A, runId, { statuses: ['error'] }, undefined, 10))!.data.map((e) => e.url)).toEqual(['https://a.example/2'])
        const metrics = await store.crawlLogs.metrics(A, runId, { window: 'day', group_by: ['status'] })
        expect(metrics!.buckets).toEqual([
          {
            start: iso(t0),
            end: iso(t0 + 86_400_000),
            count: 3,
            groups: [
              { status: 'ok', count: 2 },
              { status: 'error', count: 1 },
            ],
          },
        ])
        const latency = await store.crawlLogs.latency(A, runId, { window: 'day' })
        expect(latency!.buckets[0]!.steps).toEqual([{ step: 'fetch', count: 3, p50: 20, p90: 30, p95: 30, p99: 30, max: 30 }])
        const errors = await store.crawlLogs.errorsOf(A, runId, [linkHash('https://a.example/2'), linkHash('https://a.example/0')], t0 + 10_000)
        expect([...errors]).toEqual([[linkHash('https://a.example/2'), { reason: 'dns', detail: 'no such host' }]])
        expect((await store.crawlLogs.errorsOf(B, runId, [linkHash('https://a.example/2')], t0 + 10_000)).size).toBe(0)
        expect(await store.crawlLogs.list(B, runId, {}, undefined, 10)).toBeNull()
        expect(await store.crawlLogs.metrics(B, runId, { window: 'day' })).toBeNull()
        expect(await store.crawlLogs.latency(B, runId, { window: 'day' })).toBeNull()
      })

      test('run graph: visits in visit order with their links, edges; null for a run of no tenant’s', async () => {
        const t0 = Date.parse('2030-01-01T00:00:00Z')
        const runId = await crawled(A, () => ({
          visits: [
            { url: 'https://a.example/', depth: 0, status: 200, at: t0, children: ['https://a.example/1', 'https://b.example/'] },
            { url: 'https://a.example/1', depth: 1, status: 404, at: t0 + 1000 },
            { url: 'https://b.example/', depth: 1, status: null, at: t0 + 2000 },
          ],
        }))
        const { rows, pages } = await walk((after) => store.runGraph.visits(A, runId, {}, after, 2))
        expect(rows.map((v) => [v.url, v.depth, v.status, v.visited_at])).toEqual([
          ['https://a.example/', 0, 200, iso(t0)],
          ['https://a.example/1', 1, 404, iso(t0 + 1000)],
          ['https://b.example/', 1, null, iso(t0 + 2000)],
        ])
        expect(pages).toBe(2)
        expect(rows[2]!.host).toEqual({ hash: hostHash('b.example'), domain: 'b.example' })
        expect((await store.runGraph.visits(A, runId, { hosts: ['b.example'] }, undefined, 10))!.data.map((v) => v.url)).toEqual(['https://b.example/'])
        const edges = await store.runGraph.edges(A, runId, {}, undefined, 10)
        expect(edges!.data.map((e) => [e.parent.url, e.child.url])).toEqual([
          ['https://a.example/', 'https://a.example/1'],
          ['https://a.example/', 'https://b.example/'],
        ])
        expect(await store.runGraph.visits(B, runId, {}, undefined, 10)).toBeNull()
        expect(await store.runGraph.edges(B, runId, {}, undefined, 10)).toBeNull()
      })
    })

    describe('payments', () => {
      const payment = (key: string) => ledgerPayment(key, { version: 2, payload: { signed: key } })

      test('accept once (a replay is false), mark from the state it is in, release only an accepted one, list newest first', async () => {
        // A replay at once is accepted once; 'b' after, so the list's order is defined on every engine.
        expect((await Promise.all([store.payments.accept(payment('a')), store.payments.accept(payment('a')), store.payments.accept(payment('a'))])).sort()).toEqual([false, false, true])
        expect(await store.payments.accept(payment('b'))).toBe(true)
        expect(await store.payments.get('a')).toMatchObject({ key: 'a', status: 'accepted', amount: '1000', version: 2, payload: { signed: 'a' }, valid_before: iso(2_000_000_000_000) })
        expect(await store.payments.mark('a', 'accepted', 'settled', { tx: '0xabc' })).toBe(true)
        expect(await store.payments.mark('a', 'accepted', 'served')).toBe(false)
        expect(await store.payments.get('a')).toMatchObject({ status: 'settled', settle_tx: '0xabc', settle_error: null })
        expect(await store.payments.release('a')).toBe(false)
        expect(await store.payments.accept(payment('c'))).toBe(true)
        expect(await store.payments.release('c')).toBe(true)
        expect(await store.payments.get('c')).toBeNull()
        const keys = async (status?: 'accepted' | 'settled') => (await Array.fromAsync(store.payments.list(status))).map((p) => p.key)
        expect(await keys()).toEqual(['b', 'a'])
        expect(await keys('settled')).toEqual(['a'])
        expect(await keys('accepted')).toEqual(['b'])
      })
    })
  })
}
