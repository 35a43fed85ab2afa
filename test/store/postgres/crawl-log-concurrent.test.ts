/**
 * Crawl log writes and reads on PostgreSQL beside other processes' transactions (pools of their
 * own): a run deleted while its entries are being written, entries and page records committed
 * while another process reads the log, and several processes reading one run's log at once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { linkHash } from '../../../src/core/url'
import type { LogEntry } from '../../../src/store/crawl-logs'
import { pgCrawlLogStore, recordPages, writeLogs } from '../../../src/store/postgres/crawl-logs'
import { openPostgres } from '../../../src/store/postgres/open'
import { first, type Pg } from '../../../src/store/postgres/pg'
import { pageRecord } from '../../helpers/page-record'
import { freshDatabase } from '../../helpers/postgres'

let url: string
const pools: Pg[] = []
/** Another process's pool on the same database. */
const pool = async () => {
  const sql = pools.length ? new SQL(url, { max: 4 }) : await openPostgres(url)
  pools.push(sql)
  return sql
}
let a: Pg
let b: Pg
beforeAll(async () => {
  url = freshDatabase()
  a = await pool()
  b = await pool()
})
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()))
})

const BASE = Date.UTC(2026, 0, 4, 23, 0, 0)
/** A job and a run of it; the run's seq. */
async function newRun(id = crypto.randomUUID()): Promise<{ id: string; seq: number }> {
  const job = first<{ seq: number }>(await a`INSERT INTO jobs (tenant, id, name, config, created_at, updated_at) VALUES ('acme', ${crypto.randomUUID()}, 'docs', '{}', 0, 0) RETURNING seq`)!
  const run = first<{ seq: number }>(await a`INSERT INTO runs (tenant, id, job_seq, job_id, status, config, created_at) VALUES ('acme', ${id}, ${job.seq}, 'j', 'running', '{}', 0) RETURNING seq`)!
  return { id, seq: run.seq }
}
const entry = (runSeq: number, i: number): LogEntry => ({
  run_seq: runSeq,
  url: `https://a.example/${i}`,
  url_hash: linkHash(`https://a.example/${i}`),
  host: 'a.example',
  step: 'robots',
  status: 'ok',
  occurred_at: BASE + i,
})
const count = async (runSeq: number) => first<{ n: number }>(await a`SELECT count(*)::int AS n FROM crawl_logs WHERE run_seq = ${runSeq}`)!.n
/** A promise and what settles it. */
const gate = () => {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

describe('a run deleted while its entries are written', () => {
  test('deleted first (committed while the writer waits for the run): its entries are dropped, the others written', async () => {
    const kept = await newRun()
    const gone = await newRun()
    const deleting = gate()
    const done = gate()
    // The deletion holds the run's row until it commits.
    const deletion = b.begin(async (tx) => {
      await tx`DELETE FROM runs WHERE seq = ${gone.seq}`
      deleting.open()
      await done.opened
    })
    await deleting.opened
    const writing = a.begin((tx) => writeLogs(tx, [entry(kept.seq, 1), entry(gone.seq, 2), entry(kept.seq, 3)]))
    await Bun.sleep(50)
    done.open()
    await deletion
    await writing
    expect(await count(kept.seq)).toBe(2)
    expect(await count(gone.seq)).toBe(0)
  })

  test('written first: the deletion waits for the writer’s commit, then takes the entries with the run', async () => {
    const run = await newRun()
    const written = gate()
    const done = gate()
    const writing = a.begin(async (tx) => {
      await writeLogs(tx, [entry(run.seq, 1), entry(run.seq, 2)])
      written.open()
      await done.opened
    })
    await written.opened
    let deleted = false
    const deletion = b`DELETE FROM runs WHERE seq = ${run.seq}`.then(() => (deleted = true))
    await Bun.sleep(50)
    expect(deleted).toBe(false)
    done.open()
    await writing
    await deletion
    expect(await count(run.seq)).toBe(0)
  })
})

describe('reads beside writes', () => {
  test('walks while another process commits newer pages and rows: every entry there was, each once, in order', async () => {
    const run = await newRun()
    await a`INSERT INTO hosts (tenant, hash, domain, created_at) VALUES ('acme', 'h', 'a.example', 0) ON CONFLICT DO NOTHING`
    const host = first<{ seq: number }>(await a`SELECT seq FROM hosts WHERE tenant = 'acme' AND hash = 'h'`)!.seq
    /** One crawl batch from another process: links, their page records and rows, in one transaction. */
    const batch = async (k: number, at: number) => {
      const urls = Array.from({ length: 20 }, (_, i) => `https://a.example/${k}/${i}`)
      await b.begin(async (tx) => {
        await tx`INSERT INTO links (tenant, hash, url, host_seq, created_at) SELECT 'acme', unnest(${tx.array(urls.map(linkHash), 'TEXT')}::text[]), unnest(${tx.array(urls, 'TEXT')}::text[]), ${host}, 0`
        await recordPages(
          tx,
          run.seq,
          urls.map((u, i) => pageRecord(linkHash(u), 'h', { visited_at: at + i * 10, logged: 9, fetch_at: at + i * 10 - 4, fetch_ms: 2 })),
          'acme',
        )
        await writeLogs(
          tx,
          urls.map((u, i) => ({ ...entry(run.seq, i), url: u, url_hash: linkHash(u), occurred_at: at + i * 10 - 2 })),
        )
      })
    }
    for (let k = 0; k < 5; k++) await batch(k, BASE + k * 1000)
    const readers = [pgCrawlLogStore(a), pgCrawlLogStore(await pool())]
    const walk = async (logs: (typeof readers)[number]) => {
      const seen: string[] = []
      let after: number | undefined
      for (;;) {
        const page = (await logs.list('acme', run.id, {}, after, 7))!
        seen.push(...page.data.map((x) => `${x.url} ${x.step}`))
        if (page.next === null) return seen
        after = page.next
      }
    }
    const before = await walk(readers[0]!)
    expect(before).toHaveLength(300)
    // Each reader walks while batches newer than everything are committed: past its first page
    // it sees none of them, and every entry there was before, each once, in order.
    const writes = (async () => {
      for (let k = 5; k < 10; k++) await batch(k, BASE + 3_600_000 + k * 1000)
    })()
    const walks = await Promise.all(readers.map(walk))
    await writes
    for (const seen of walks) {
      expect(new Set(seen).size).toBe(seen.length)
      expect(seen.slice(-300)).toEqual(before)
    }
    const all = (await readers[1]!.metrics('acme', run.id, { window: 'day' }))!.buckets.reduce((n, x) => n + x.count, 0)
    expect(all).toBe(10 * 20 * 3)
  })
})
