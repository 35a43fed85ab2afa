import { beforeEach, describe, expect, test } from 'bun:test'
import { hostHash, linkHash } from '../../src/core/url'
import type { Store } from '../../src/store'
import type { Claimed, PageRecord } from '../../src/store/crawl-store'
import { pageRecord } from '../helpers/page-record'
import { sharedCrawlContract } from './shared-crawl-contract'
import { sharedProcessesContract } from './shared-processes-contract'
import { batchOf, entryAt, zeroCounters as zero } from '../helpers/crawl-batch'

const A = 'acme'
const OWNER = 'crawl-contract:1:owner'
const OTHER = 'crawl-contract:2:other'
const THIRD = 'crawl-contract:3:third'
const uuid = () => crypto.randomUUID()
const url = (p: string) => `https://a.example${p}`
const entry = (p: string, depth = 0, parent: string | null = null) => entryAt('a.example', p, depth, parent)
const page = (p: string, over: Partial<PageRecord> = {}): PageRecord =>
  pageRecord(linkHash(url(p)), hostHash('a.example'), {
    visited_at: Date.parse('2030-01-01T00:00:01Z'),
    logged: 1 | 2 | 4 | 8,
    fetch_at: Date.parse('2030-01-01T00:00:00Z'),
    fetch_ms: 12,
    parse_ms: 3,
    store_ms: 2,
    pipeline_id: 'default',
    ...over,
  })

/** A frontier row as the engine gets it to fetch, without its bookkeeping. */
const rowOf = (q: Claimed) => ({ seq: q.seq, url: q.url, depth: q.depth, parent: q.parent })

/**
 * The crawl engine's part of the store (`store.crawl`, src/store/crawl-store.ts): leases, a batch
 * written whole and only by the run's holder, resume, the end of an execution. Written against
 * the interface, for every engine. Where the engines differ on purpose, a test asserts each
 * one's behaviour: a store of one process (SQLite) lets one owner hold a run whole; a shared store
 * (`store.crawl.shared`, PostgreSQL) lets many processes join a run as workers, hands rows out
 * by host queue, and numbers them itself (decision 112). `peer`, when given, opens another
 * process's store on the database of a store `make` gave (the shared part's tests of two processes).
 */
export function crawlStoreContract(name: string, make: () => Promise<Store>, peer?: (store: Store) => Promise<Store>) {
  sharedCrawlContract(name, make)
  if (peer) sharedProcessesContract(name, make, peer)
  describe(`CrawlStore contract: ${name}`, () => {
    let store: Store
    beforeEach(async () => {
      store = await make()
    })

    /** A pending run (unleased), and its seq as the runner sees it. */
    const pending = async () => {
      const { run } = await store.jobs.create(A, { id: uuid(), name: 'docs', config: { seeds: [url('/')] }, labels: {} }, { id: uuid(), config: { seeds: [url('/')] } })
      const claimable = await store.crawl.claimable(Date.now(), 100)
      const row = claimable.find((r) => r.id === run!.id)!
      expect(row).toBeDefined()
      return { runId: run!.id, seq: row.seq }
    }
    /** A run leased to OWNER at its creation. */
    const leased = async () => {
      const created = await store.jobs.create(A, { id: uuid(), name: 'docs', config: {}, labels: {} }, { id: uuid(), config: {}, lease: { owner: OWNER, ms: 60_000 } })
      return { runId: created.run!.id, seq: created.runSeq! }
    }
    /** Who holds (one process) or works on (shared) the run, as a runner sees it at `now`. */
    const holders = async (seq: number, now = Date.now()) =>
      (await store.crawl.heldRunning(now))
        .filter((h) => h.seq === seq)
        .map((h) => h.lease_owner)
        .sort()

    /**
     * The rows `owner`'s execution gets to fetch, due by `at`, in seq order: a store of one
     * process hands them over in resume's queue; a shared store through the host queues the owner
     * claims (or holds already) and the rows it takes of them, which are in flight from then on.
     */
    const fetchable = async (seq: number, owner: string, at = Date.now()) => {
      const shared = store.crawl.shared
      if (!shared) return (await store.crawl.resume(seq)).queued.filter((q) => q.not_before <= at).map(rowOf)
      const now = Date.now()
      await shared.claimHosts(seq, owner, 100, now, now + 60_000, 4, 8)
      const wants = ((await shared.renewHosts(seq, owner, now + 60_000)) ?? []).map((host) => ({ host, n: 1000 }))
      return (await shared.take(seq, owner, wants, at)).map(rowOf)
    }
    /** What is still queued and due by `at`, in seq order, read without taking it: a shared store's rows are given back, and hosts claimed for the look released. */
    const queued = async (seq: number, owner: string, at = Date.now()) => {
      const shared = store.crawl.shared
      if (!shared) return fetchable(seq, owner, at)
      const heldBefore = new Set((await shared.renewHosts(seq, owner, Date.now() + 60_000)) ?? [])
      const rows = await fetchable(seq, owner, at)
      const seqs = rows.map((r) => r.seq)
      await shared.giveBack(seq, owner, seqs)
      const claimed = ((await shared.renewHosts(seq, owner, Date.now() + 60_000)) ?? []).filter((h) => !heldBefore.has(h)).map((host) => ({ host, nextAt: 0 }))
      await shared.releaseHosts(seq, owner, claimed)
      return rows
    }

    test('a pending run is claimed by one owner (joined by many, shared); leases are renewed by their holders only', async () => {
      const { runId, seq } = await pending()
      const second = await pending()
      const now = Date.now()
      expect(await store.crawl.claimRun(seq, OWNER, now, now + 60_000)).toBe(true)
      const started = (await store.crawl.run(seq))!.started_at
      expect(started).toBe(now)
      expect((await store.crawl.status(seq))!.status).toBe('running')
      expect((await store.crawl.run(seq))!.id).toBe(runId)
      if (store.crawl.shared) {
        // Every claim joins the run as one more worker; the run row names no single holder.
        expect(await store.crawl.claimRun(seq, OTHER, now + 1, now + 60_000)).toBe(true)
        expect(await store.crawl.run(seq)).toMatchObject({ status: 'running', started_at: started, lease_owner: null })
        expect(await store.crawl.renew(seq, OWNER, now + 90_000)).toBe(true)
        expect(await store.crawl.renew(seq, OTHER, now + 90_000)).toBe(true)
        expect(await store.crawl.renew(seq, THIRD, now + 90_000)).toBe(false)
        expect(await holders(seq, now)).toEqual([OWNER, OTHER].sort())
        // A running run stays claimable, to be joined, and comes before pending ones.
        expect((await store.crawl.claimable(now, 100)).map((r) => r.seq)).toEqual([seq, second.seq])
        // A worker known to be dead stops being one at once.
        expect(await store.crawl.claimRun(seq, THIRD, now, now + 60_000, OWNER)).toBe(true)
        expect(await store.crawl.renew(seq, OWNER, now + 90_000)).toBe(false)
        expect(await holders(seq, now)).toEqual([OTHER, THIRD].sort())
      } else {
        expect(await store.crawl.claimRun(seq, OTHER, now + 1, now + 60_000)).toBe(false)
        expect(await store.crawl.renew(seq, OWNER, now + 90_000)).toBe(true)
        expect(await store.crawl.renew(seq, OTHER, now + 90_000)).toBe(false)
        expect(await holders(seq, now)).toEqual([OWNER])
        expect((await store.crawl.run(seq))!.lease_owner).toBe(OWNER)
        expect((await store.crawl.claimable(now, 100)).map((r) => r.seq)).toEqual([second.seq])
        // A holder known to be dead gives its lease up at once.
        expect(await store.crawl.claimRun(seq, THIRD, now, now + 60_000, OWNER)).toBe(true)
        expect(await store.crawl.renew(seq, OWNER, now + 90_000)).toBe(false)
        expect(await holders(seq, now)).toEqual([THIRD])
      }
      expect((await store.crawl.run(seq))!.started_at).toBe(started)
      // Leases that lapsed are no one's.
      expect(await holders(seq, now + 120_000)).toEqual([])
    })

    test("a batch is written under its run's tenant, though the run's seq was a deleted run's of another tenant", async () => {
      const first = await leased()
      expect((await store.crawl.commit(first.seq, OWNER, batchOf({ links: [url('/a')] }))).held).toBe(true)
      expect(await store.runs.delete(A, first.runId)).toBe(true)
      // SQLite hands the deleted newest run's seq to the next run; any engine may.
      const created = await store.jobs.create('other', { id: uuid(), name: 'docs', config: {}, labels: {} }, { id: uuid(), config: {}, lease: { owner: OWNER, ms: 60_000 } })
      const seq = created.runSeq!
      expect((await store.crawl.commit(seq, OWNER, batchOf({ links: [url('/b')], pages: [page('/b')] }))).held).toBe(true)
      expect((await store.links.get('other', linkHash(url('/b'))))?.url).toBe(url('/b'))
      expect(await store.links.get(A, linkHash(url('/b')))).toBeNull()
      const visits = await store.runGraph.visits('other', created.run!.id, { url_hashes: [linkHash(url('/b'))] }, undefined, 10)
      expect(visits!.data.map((v) => v.url)).toEqual([url('/b')])
    })

    test('a batch of another owner writes nothing', async () => {
      const { runId, seq } = await leased()
      const out = await store.crawl.commit(
        seq,
        OTHER,
        batchOf({ links: [url('/')], enqueued: [{ entries: [entry('/')], first: 1, done: false }], pages: [page('/')], counters: { ...zero, visited: 1 } }),
      )
      expect(out.held).toBe(false)
      expect((await store.runGraph.visits(A, runId, {}, undefined, 10))!.data).toEqual([])
      expect((await store.crawl.resume(seq)).hashes).toEqual([])
      expect((await store.runs.get(A, runId))!.stats.visited).toBe(0)
    })

    test('a batch lands whole: frontier moves in order, pages with their children and entries, logs, counters; resume reads it back', async () => {
      const { runId, seq } = await leased()
      const notBefore = Date.now() + 60_000
      const counters = { queued: 1, visited: 1, failed: 1, bytes: 300, fetched: 2, depth_cut: 1 }
      // The rows first: a shared store numbers them itself, and the engine moves only rows it was handed.
      await store.crawl.commit(
        seq,
        OWNER,
        batchOf({
          links: [url('/'), url('/a'), url('/b'), url('/c')],
          enqueued: [
            { entries: [entry('/'), entry('/a', 1, linkHash(url('/'))), entry('/b', 1, linkHash(url('/')))], first: 1, done: false },
            { entries: [entry('/c', 0)], first: 4, done: true },
          ],
          counters: { ...zero, queued: 3 },
        }),
      )
      const rows = await queued(seq, OWNER)
      // In the order found; the fetched redirect target (/c) is not to fetch.
      expect(rows.map((r) => [r.url, r.depth, r.parent])).toEqual([
        [url('/'), 0, null],
        [url('/a'), 1, linkHash(url('/'))],
        [url('/b'), 1, linkHash(url('/'))],
      ])
      expect(rows[0]!.seq).toBeLessThan(rows[1]!.seq)
      expect(rows[1]!.seq).toBeLessThan(rows[2]!.seq)
      const [root, a, b] = rows.map((r) => r.seq) as [number, number, number]
      const out = await store.crawl.commit(
        seq,
        OWNER,
        batchOf({
          // A requeue then a done of one seq: the done wins, as the engine made them in that order.
          marks: [
            { seq: root, to: 'requeued', notBefore },
            { seq: root, to: 'done' },
            { seq: a, to: 'failed' },
            { seq: b, to: 'requeued', notBefore },
          ],
          hostFailures: new Map([['a.example', 2]]),
          pages: [
            page('/', { children: [linkHash(url('/a')), linkHash(url('/b'))] }),
            page('/a', { status: null, logged: 0, depth: 1, parent: linkHash(url('/')), visited_at: Date.parse('2030-01-01T00:00:02Z') }),
          ],
          logs: [
            {
              run_seq: seq,
              url: url('/a'),
              url_hash: linkHash(url('/a')),
              host: 'a.example',
              step: 'fetch',
              status: 'error',
              error_reason: 'dns',
              error_detail: 'no such host',
              occurred_at: Date.parse('2030-01-01T00:00:02Z'),
            },
          ],
          counters,
          errorCounts: { dns: 1 },
        }),
      )
      expect(out).toEqual({ held: true, counters })
      const state = await store.crawl.resume(seq)
      expect(state.counters).toEqual(counters)
      expect(state.errorCounts).toEqual({ dns: 1 })
      expect(state.hashes.sort()).toEqual(['/', '/a', '/b', '/c'].map((p) => linkHash(url(p))).sort())
      expect(state.maxSeq).toBe(4)
      const shared = store.crawl.shared
      if (shared) {
        // Rows and host failures reach a process through the hosts it claims, not through resume.
        expect(state.queued).toEqual([])
        expect(state.hostFailures).toEqual([])
        const now = Date.now()
        expect(await shared.claimHosts(seq, OWNER, 5, now, now + 60_000, 2, 8)).toEqual([{ host: 'a.example', slots: 2, nextAt: 0, failures: 2, interrupted: [] }])
        expect(await shared.take(seq, OWNER, [{ host: 'a.example', n: 10 }], now)).toEqual([])
        expect((await shared.take(seq, OWNER, [{ host: 'a.example', n: 10 }], notBefore)).map((q) => [q.seq, q.attempts])).toEqual([[b, 1]])
      } else {
        expect(state.queued.map((q) => [q.seq, q.url, q.depth, q.parent, q.not_before, q.attempts])).toEqual([[b, url('/b'), 1, linkHash(url('/')), notBefore, 1]])
        expect(state.hostFailures).toEqual([{ host: 'a.example', failures: 2 }])
        expect(await queued(seq, OWNER, notBefore - 1)).toEqual([])
        expect(await queued(seq, OWNER, notBefore)).toEqual([{ seq: b, url: url('/b'), depth: 1, parent: linkHash(url('/')) }])
      }
      // The page record stands for its successful entries; the error is a row of its own.
      const logs = (await store.crawlLogs.list(A, runId, {}, undefined, 20))!.data
      expect(logs.map((e) => [e.url, e.step, e.status])).toEqual([
        [url('/a'), 'fetch', 'error'],
        [url('/'), 'discover', 'ok'],
        [url('/'), 'store', 'ok'],
        [url('/'), 'parse', 'ok'],
        [url('/'), 'fetch', 'ok'],
      ])
      expect(logs.find((e) => e.step === 'fetch' && e.status === 'ok')).toMatchObject({ http_status: 200, latency_ms: 12, occurred_at: '2030-01-01T00:00:00.000Z' })
      const edges = (await store.runGraph.edges(A, runId, {}, undefined, 10))!.data
      expect(edges.map((e) => [e.parent.url, e.child.url])).toEqual([
        [url('/'), url('/a')],
        [url('/'), url('/b')],
      ])
      expect(await store.crawl.loggedSince(seq, linkHash(url('/')), 'fetch', Date.parse('2030-01-01T00:00:00Z'))).toBe(true)
      expect(await store.crawl.loggedSince(seq, linkHash(url('/a')), 'fetch', Date.parse('2030-01-01T00:00:02Z'))).toBe(true)
      expect(await store.crawl.loggedSince(seq, linkHash(url('/b')), 'fetch', 0)).toBe(false)
      expect(await store.crawl.pageFetched(seq)).toBe(true)
      expect((await store.runs.get(A, runId))!.stats).toEqual({ queued: 1, visited: 1, failed: 1, bytes: 300 })
    })

    test('the end: leftovers fail and are counted, the run finishes with its outcome, the lease goes', async () => {
      const { runId, seq } = await leased()
      await store.crawl.commit(seq, OWNER, batchOf({ links: [url('/'), url('/x')], enqueued: [{ entries: [entry('/'), entry('/x')], first: 1, done: false }], counters: { ...zero, queued: 2 } }))
      // Both handed to the owner; /x is still in flight (shared: taken) at the end.
      const [root, x] = await fetchable(seq, OWNER)
      expect([root!.url, x!.url]).toEqual([url('/'), url('/x')])
      await store.crawl.commit(
        seq,
        OWNER,
        batchOf({ marks: [{ seq: root!.seq, to: 'done' }], pages: [page('/')], counters: { ...zero, queued: 1, visited: 1, fetched: 1 }, errorCounts: { http_404: 3 } }),
      )
      expect(await store.crawl.pageFetched(seq)).toBe(true)
      const out = await store.crawl.commit(seq, OWNER, batchOf({ counters: { ...zero, queued: 1, visited: 1, fetched: 1 } }), {
        finish: { reason: 'max_empty_evaluations', outcome: 'stalled' },
        failQueued: true,
      })
      expect(out.held).toBe(true)
      expect(out.counters).toMatchObject({ queued: 0, failed: 1, visited: 1 })
      const run = (await store.runs.get(A, runId))!
      expect(run).toMatchObject({ status: 'finished', stop_reason: 'max_empty_evaluations', outcome: 'stalled', error_counts: { http_404: 3, left_queued: 1 } })
      expect(Object.keys(run.error_counts)).toEqual(['http_404', 'left_queued'])
      expect(await holders(seq)).toEqual([])
      expect(await store.crawl.renew(seq, OWNER, Date.now() + 60_000)).toBe(false)
      const shared = store.crawl.shared
      if (shared) {
        // Nothing queued or in flight, no worker, no host held.
        expect(await shared.outlook(seq, Date.now())).toEqual({ remaining: 0, freeHosts: 0, workers: 0 })
        expect(await shared.renewHosts(seq, OWNER, Date.now() + 60_000)).toBeNull()
      } else expect((await store.crawl.resume(seq)).queued).toEqual([])
      // Finished and released: a later batch of the old holder writes nothing.
      expect((await store.crawl.commit(seq, OWNER, batchOf({ pages: [page('/x')] }))).held).toBe(false)
      expect(await store.crawl.claimRun(seq, OTHER, Date.now(), Date.now() + 60_000)).toBe(false)
    })

    test('an end that leaves the run running requeues what was leased and releases it for the next holder', async () => {
      const { seq } = await leased()
      await store.crawl.commit(seq, OWNER, batchOf({ links: [url('/')], enqueued: [{ entries: [entry('/')], first: 1, done: false }], counters: { ...zero, queued: 1 } }))
      // Handed to the owner (shared: taken), and not settled before its end.
      expect((await fetchable(seq, OWNER)).map((r) => r.url)).toEqual([url('/')])
      const out = await store.crawl.commit(seq, OWNER, batchOf({ counters: { ...zero, queued: 1 } }), { finish: null, failQueued: false })
      expect(out).toMatchObject({ held: true, counters: { queued: 1, failed: 0 } })
      expect((await store.crawl.status(seq))!.status).toBe('running')
      expect(await holders(seq)).toEqual([])
      expect(await store.crawl.renew(seq, OWNER, Date.now() + 60_000)).toBe(false)
      const now = Date.now()
      const shared = store.crawl.shared
      // Shared: the row is queued again, its host free, and no process works on the run.
      if (shared) expect(await shared.outlook(seq, now)).toEqual({ remaining: 1, freeHosts: 1, workers: 0 })
      expect(await store.crawl.claimRun(seq, OTHER, now, now + 60_000)).toBe(true)
      expect(await holders(seq)).toEqual([OTHER])
      // Given back by its end, not left behind by a process that died: nothing to name as interrupted.
      if (shared) expect((await shared.claimHosts(seq, OTHER, 5, now, now + 60_000, 2, 8)).map((g) => [g.host, g.interrupted])).toEqual([['a.example', []]])
      expect((await fetchable(seq, OTHER)).map((r) => r.url)).toEqual([url('/')])
    })

    test('many moves land in the order made: runs of one end state, rows moved twice ending as last moved', async () => {
      const { seq } = await leased()
      const paths = ['/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8']
      const notBefore = Date.now() + 60_000
      await store.crawl.commit(seq, OWNER, batchOf({ links: paths.map(url), enqueued: [{ entries: paths.map((p) => entry(p)), first: 1, done: false }] }))
      const rows = await queued(seq, OWNER)
      expect(rows.map((r) => r.url)).toEqual(paths.map(url))
      const s = rows.map((r) => r.seq) as [number, number, number, number, number, number, number, number]
      await store.crawl.commit(
        seq,
        OWNER,
        batchOf({
          marks: [
            { seq: s[0], to: 'done' },
            { seq: s[1], to: 'done' },
            { seq: s[2], to: 'requeued', notBefore },
            { seq: s[2], to: 'done' },
            { seq: s[3], to: 'done' },
            { seq: s[4], to: 'failed' },
            { seq: s[5], to: 'failed' },
            { seq: s[5], to: 'requeued', notBefore },
            { seq: s[6], to: 'done' },
            { seq: s[6], to: 'failed' },
          ],
        }),
      )
      // Queued: /6 (failed, then requeued: due at notBefore) and /8 (never moved); /5 and /7 failed; the rest done.
      expect((await queued(seq, OWNER)).map((r) => r.seq)).toEqual([s[7]])
      expect((await queued(seq, OWNER, notBefore)).map((r) => r.seq)).toEqual([s[5], s[7]])
      const out = await store.crawl.commit(seq, OWNER, batchOf(), { finish: { reason: 'max_urls', outcome: null }, failQueued: true })
      expect(out.counters).toMatchObject({ queued: 0, failed: 4 })
    })

    test('a batch of many artifacts lands whole, each found by its URL', async () => {
      const { runId, seq } = await leased()
      // More rows than a statement takes in SQLite's multi-row inserts (32), and not a multiple of it.
      const paths = Array.from({ length: 35 }, (_, i) => `/p${i}`)
      const artifacts = paths.flatMap((p, i) =>
        (['raw', 'parsed'] as const).map((kind) => ({
          tenant: A,
          id: Bun.randomUUIDv7(),
          run_id: runId,
          url_hash: linkHash(url(p)),
          blob_key: `runs/${runId}/${i}`,
          kind,
          pipeline_id: kind === 'parsed' ? 'default' : null,
          content_type: kind === 'raw' ? 'text/html' : 'application/json',
          size: 100 + i,
          checksum: 'xxh64:0',
          created_at: Date.now(),
        })),
      )
      await store.crawl.commit(seq, OWNER, batchOf({ links: paths.map(url), artifacts }))
      const listed = (await store.artifacts.list(A, { run_ids: [runId] }, undefined, 100)).data
      // Newest first.
      expect(listed.map((a) => [a.id, a.kind, a.url, a.size])).toEqual(artifacts.map((a, i) => [a.id, a.kind, url(paths[i >> 1]!), a.size]).reverse())
      const of = (p: string) => store.artifacts.list(A, { url_hashes: [linkHash(url(p))] }, undefined, 10)
      expect((await of('/p0')).data.map((a) => a.id)).toEqual(
        artifacts
          .slice(0, 2)
          .map((a) => a.id)
          .reverse(),
      )
      expect((await of('/p34')).data.map((a) => a.id)).toEqual(
        artifacts
          .slice(68)
          .map((a) => a.id)
          .reverse(),
      )
    })

    test('robots records, claimed bodies, a run finished from outside', async () => {
      const { runId, seq } = await leased()
      expect(await store.crawl.robots(seq, 'a.example')).toBeNull()
      await store.crawl.saveRobots(seq, 'a.example', { status: 200, body: 'User-agent: *\nDisallow: /x' })
      expect(await store.crawl.robots(seq, 'a.example')).toEqual({ status: 200, body: 'User-agent: *\nDisallow: /x' })
      const artifact = {
        tenant: A,
        id: uuid(),
        run_id: runId,
        url_hash: linkHash(url('/')),
        blob_key: `runs/${runId}/kept`,
        kind: 'raw' as const,
        pipeline_id: null,
        content_type: 'text/html',
        size: 3,
        checksum: 'xxh64:0',
        created_at: Date.now(),
      }
      await store.crawl.commit(seq, OWNER, batchOf({ artifacts: [artifact] }))
      expect(await store.crawl.claimedBodies([`runs/${runId}/kept`, `runs/${runId}/lost`])).toEqual(new Set([`runs/${runId}/kept`]))
      await store.crawl.finish(seq, 'unknown', Date.now(), 'failed')
      expect(await store.runs.get(A, runId)).toMatchObject({ status: 'finished', stop_reason: 'unknown', outcome: 'failed' })
    })
  })
}
