/**
 * What a run leaves when it is cut short, and what the next process does with it. Every fetch a
 * server saw is in the crawl log, including the ones a run never got to record: fetches an
 * earlier process sent before it died (the run's fetch journal), fetches a stop or a shutdown cut
 * short, and sitemaps that were not there. And no body outlives its artifact row: bodies a dead
 * process put and never catalogued are deleted. The compiled binary killed mid-crawl is in
 * test/e2e/crash-records.test.ts; here a journal left by a dead process is planted by hand.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { journalDir, RunJournal, type JournalEntry } from '../../src/store/fetch-journal'
import { INTERRUPTED_DETAIL } from '../../src/crawl/interrupted'
import { crawlEnv, type CrawlEnv } from '../helpers/crawl-run'
import { crawlSite, tree, type CrawlSite } from '../helpers/crawl-site'
import { waitFor } from '../helpers/wait'

let env: CrawlEnv
let site: CrawlSite
beforeAll(() => {
  env = crawlEnv(2)
  site = crawlSite({ pages: tree(2, 2).pages, sitemaps: {} })
})
afterAll(async () => {
  await env.close()
  await site.close()
})

const seqOf = (id: string) => (env.api.db.query('SELECT seq FROM runs WHERE id = ?').get(id) as { seq: number }).seq
const dir = () => journalDir(env.api.db.filename)!

/** A run created while no runner runs, with the journal a killed holder would have left. */
async function plantedRun(orphans: JournalEntry[], bodies: string[] = []) {
  await env.runner.stop()
  const job = await env.api.post('/v1/jobs?create_run=true', { name: 'planted', config: { seeds: [site.url('/')] } })
  const id = job.body.run.id as string
  const seq = seqOf(id)
  // Running and unheld, as after a kill -9 whose lease ran out.
  env.api.db.query("UPDATE runs SET status = 'running', started_at = ? WHERE seq = ?").run(Date.now() - 60_000, seq)
  const journal = RunJournal.open(dir(), seq)
  for (const o of orphans) journal.start(o)
  for (const key of bodies.map((b) => b.replace('<run>', id))) {
    journal.startBody(key)
    await env.api.blobs.put(key, new TextEncoder().encode('a page body'), 'text/html')
  }
  // No close: the process died with these in flight.
  return { id, seq }
}

const orphan = (path: string, step: JournalEntry['step'], startedAt: number): JournalEntry => ({
  url: site.url(path),
  url_hash: `hash-of-${path}`,
  host: '127.0.0.1',
  step,
  depth: step === 'fetch' ? 1 : undefined,
  parent_url_hash: step === 'fetch' ? 'parent-hash' : undefined,
  started_at: startedAt,
})

describe('fetches a dead holder sent and never recorded', () => {
  test('are logged by the next holder, once each, dated when they started', async () => {
    const t = Date.now() - 30_000
    const { id, seq } = await plantedRun([orphan('/0', 'fetch', t), orphan('/robots.txt', 'robots', t + 1), orphan('/sitemap.xml', 'discover', t + 2)])
    await env.restart()
    await env.finished(id)
    const interrupted = await env.logs(id, 'error_reasons=interrupted')
    expect(interrupted.map((e) => [e.url, e.step, e.status, e.occurred_at, e.error_detail]).sort()).toEqual(
      [
        [site.url('/0'), 'fetch', 'retried', new Date(t).toISOString(), INTERRUPTED_DETAIL],
        [site.url('/robots.txt'), 'robots', 'retried', new Date(t + 1).toISOString(), INTERRUPTED_DETAIL],
        [site.url('/sitemap.xml'), 'discover', 'error', new Date(t + 2).toISOString(), INTERRUPTED_DETAIL],
      ].sort(),
    )
    const page = interrupted.find((e) => e.step === 'fetch')!
    expect(page).toMatchObject({ url_hash: 'hash-of-/0', depth: 1, parent_url_hash: 'parent-hash', host: '127.0.0.1' })
    // Settled: the run's journal is gone once its execution ended with nothing open.
    expect(existsSync(join(dir(), `${seq}.log`))).toBe(false)
    // And a later execution does not log them again.
    await env.restart()
    expect(await env.logs(id, 'error_reasons=interrupted')).toHaveLength(3)
  })

  test('a fetch whose own entry reached the database before the crash gets no second one', async () => {
    const t = Date.now() - 20_000
    const { id, seq } = await plantedRun([orphan('/0', 'fetch', t), orphan('/1', 'fetch', t)])
    // The crash came after the commit of /0's entry and before the journal noted it.
    const writer = env.api.repos.crawlLogs.writer({ manual: true })
    writer.add({ run_seq: seq, url: site.url('/0'), url_hash: 'hash-of-/0', host: '127.0.0.1', step: 'fetch', status: 'ok', http_status: 200, occurred_at: t + 40 })
    writer.flush()
    writer.close()
    await env.restart()
    await env.finished(id)
    const interrupted = await env.logs(id, 'error_reasons=interrupted')
    expect(interrupted.map((e) => e.url_hash)).toEqual(['hash-of-/1'])
  })

  test('the journal of a run finished meanwhile is logged at start-up; one of a deleted run is dropped', async () => {
    const t = Date.now() - 10_000
    const finished = await plantedRun([orphan('/2', 'fetch', t)])
    env.api.db.query("UPDATE runs SET status = 'finished', stop_reason = 'manual', finished_at = ? WHERE seq = ?").run(Date.now(), finished.seq)
    const deleted = await plantedRun([orphan('/3', 'fetch', t)])
    env.api.db.query("UPDATE runs SET status = 'finished', stop_reason = 'manual', finished_at = ? WHERE seq = ?").run(Date.now(), deleted.seq)
    const gone = await env.api.del(`/v1/runs/${deleted.id}`)
    expect(gone.status, gone.text).toBe(204)
    await env.restart()
    const logs = await env.logs(finished.id, 'error_reasons=interrupted')
    expect(logs.map((e) => [e.url, e.status])).toEqual([[site.url('/2'), 'retried']])
    expect(existsSync(join(dir(), `${finished.seq}.log`))).toBe(false)
    expect(existsSync(join(dir(), `${deleted.seq}.log`))).toBe(false)
  })
})

describe('bodies a dead holder put and never catalogued', () => {
  test('are deleted by the next holder; a body whose row did commit stays', async () => {
    const { id } = await plantedRun([], ['runs/<run>/lost-1', 'runs/<run>/lost-2', 'runs/<run>/kept'])
    // The crash came after the commit of this one's row.
    const info = (await env.api.blobs.head(`runs/${id}/kept`))!
    env.api.repos.artifacts.insert({
      tenant: 'acme',
      id: crypto.randomUUID(),
      run_id: id,
      url_hash: 'h'.repeat(32),
      blob_key: `runs/${id}/kept`,
      kind: 'raw',
      pipeline_id: null,
      content_type: 'text/html',
      size: info.size,
      checksum: info.checksum,
      created_at: Date.now(),
    })
    await env.restart()
    await env.finished(id)
    // The run's own crawl stored bodies too: every body under the run now has its row.
    const keys = await env.api.blobs.list(`runs/${id}/`, null, 1000)
    // (A page's parsed artifact names its raw body: decision 103.)
    const rows = [...new Set((await env.artifacts(id)).map((a) => a.blob_key))]
    expect(keys.sort()).toEqual(rows.sort())
    expect(keys).toContain(`runs/${id}/kept`)
    expect(keys).not.toContain(`runs/${id}/lost-1`)
    expect(keys).not.toContain(`runs/${id}/lost-2`)
  })

  test('of a finished or deleted run, are deleted at start-up', async () => {
    const finished = await plantedRun([], ['runs/<run>/lost'])
    env.api.db.query("UPDATE runs SET status = 'finished', stop_reason = 'manual', finished_at = ? WHERE seq = ?").run(Date.now(), finished.seq)
    const deleted = await plantedRun([], ['runs/<run>/lost'])
    env.api.db.query('DELETE FROM runs WHERE seq = ?').run(deleted.seq)
    await env.restart()
    await waitFor('the sweep', async () => (await env.api.blobs.list(`runs/${finished.id}/`, null, 10)).length + (await env.api.blobs.list(`runs/${deleted.id}/`, null, 10)).length === 0, 5_000)
    expect(existsSync(join(dir(), `${finished.seq}.log`))).toBe(false)
    expect(existsSync(join(dir(), `${deleted.seq}.log`))).toBe(false)
  })

  test('a run deleted while it crawls leaves no body behind', async () => {
    const slow = crawlSite({ pages: { '/': { links: ['/a', '/b', '/c'] }, '/a': { delayMs: 300 }, '/b': { delayMs: 300 }, '/c': { delayMs: 300 } } })
    try {
      const id = await env.start({ seeds: [slow.url('/')], politeness: { concurrency: 4, per_host_concurrency: 4 } })
      await waitFor('the slow pages in flight', () => slow.pageRequests().filter((r) => r.path !== '/').length === 3, 5_000)
      // Just before they are answered: their bodies are put after the delete has emptied the run's prefix.
      await Bun.sleep(200)
      expect((await env.api.del(`/v1/runs/${id}`)).status).toBe(204)
      await waitFor('the execution to leave', () => env.runner.execution(seqOrNull(id) ?? -1) === null, 5_000)
      await Bun.sleep(400)
      expect(await env.api.blobs.list(`runs/${id}/`, null, 1000)).toEqual([])
    } finally {
      await slow.close()
    }
  })
})

const seqOrNull = (id: string) => (env.api.db.query('SELECT seq FROM runs WHERE id = ?').get(id) as { seq: number } | null)?.seq ?? null

describe('fetches a shutdown cuts short', () => {
  test('are logged as retried, interrupted, and fetched again by the next execution', async () => {
    const slow = crawlSite({ pages: { '/': { links: ['/a', '/b'] }, '/a': { delayMs: 1_500 }, '/b': { delayMs: 1_500 } } })
    try {
      const id = await env.start({ seeds: [slow.url('/')], politeness: { concurrency: 4, per_host_concurrency: 4 } })
      await waitFor('both slow pages in flight', () => slow.pageRequests().filter((r) => r.path !== '/').length === 2, 5_000)
      await env.restart() // a graceful shutdown, then a new runner
      const logs = await env.logs(id, 'steps=fetch&error_reasons=interrupted')
      expect(logs.map((e) => [e.url, e.status]).sort()).toEqual([
        [slow.url('/a'), 'retried'],
        [slow.url('/b'), 'retried'],
      ])
      await env.until(id, (r) => r.stats.visited === 3, 15_000)
      // Each slow page: its interrupted fetch and the fetch that got it, and the server saw both.
      for (const p of ['/a', '/b']) {
        expect(slow.pageRequests().filter((r) => r.path === p)).toHaveLength(2)
        expect(
          (await env.logs(id, 'steps=fetch'))
            .filter((e) => e.url === slow.url(p))
            .map((e) => e.status)
            .sort(),
        ).toEqual(['ok', 'retried'])
      }
    } finally {
      await slow.close()
    }
  }, 30_000)
})

describe('a page between its answer and its record', () => {
  test('is not in the fetched count a commit saves, so a kill -9 then cannot count it twice', async () => {
    // /n2's raw body is held on its way to the blob store while the rest of the run is committed:
    // what a commit saves then is what a killed process leaves, and /n2 would be fetched again.
    const blobs = env.api.blobs
    const put = blobs.put.bind(blobs)
    let release = () => {}
    const gate = new Promise<void>((r) => (release = r))
    let held = false
    blobs.put = async (key, body, type) => {
      if (!held && body instanceof Uint8Array && new TextDecoder().decode(body).includes('<title>/n2</title>')) {
        held = true
        await gate
      }
      return put(key, body, type)
    }
    try {
      const id = await env.start({ seeds: [site.url('/')], politeness: { concurrency: 4, per_host_concurrency: 4 } })
      const seq = seqOf(id)
      const saved = () =>
        env.api.db.query('SELECT fetched, visited, (SELECT count(*) FROM visits WHERE run_seq = ?1) AS visits FROM runs WHERE seq = ?1').get(seq) as {
          fetched: number
          visited: number
          visits: number
        }
      // /, /n1 and its two children committed; /n2 answered and held; its children not found yet.
      await waitFor('/n2 held, the four others committed', () => held && saved().visits === 4, 10_000)
      expect(saved()).toEqual({ fetched: 4, visited: 4, visits: 4 })
      release()
      const run = await env.until(id, (r) => r.status === 'finished', 10_000)
      expect(run.stats.visited).toBe(7)
      expect(saved()).toEqual({ fetched: 7, visited: 7, visits: 7 })
    } finally {
      blobs.put = put
      release()
    }
  })
})

describe('sitemaps that are not there', () => {
  test('a sitemap that answers 404 is logged, skipped, with its status', async () => {
    const run = await env.crawl({ seeds: [site.url('/')], sitemaps: true })
    const logs = await env.logs(run.id, 'steps=discover')
    const missing = logs.find((e) => e.url === site.url('/sitemap.xml'))
    expect(missing).toMatchObject({ status: 'skipped', error_reason: 'http_status', http_status: 404 })
    expect(site.hits('/sitemap.xml')).toBe(1)
  })
})
