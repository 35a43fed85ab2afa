/**
 * A run's link graph on PostgreSQL, as test/api/run-graph.test.ts tests it on SQLite: the links
 * a run visited and the edges it found, read from the visit rows recordPages wrote. Both engines
 * get the same writes; each must answer what the test expects, and both the same (keys too).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { hostHash } from '../../../src/core/url'
import type { PageRecord } from '../../../src/store/page-records'
import type { EdgeFilter, VisitFilter } from '../../../src/store/run-graph'
import { pageRecord } from '../../helpers/page-record'
import { bothEngines, closeEngines, deleteRun, links, newRuns, walk, type Engine, type Link } from './crawl-log-engines'

let engines: Engine[]
beforeAll(async () => {
  engines = await bothEngines()
})
afterAll(closeEngines)

const T0 = Date.parse('2026-03-01T12:00:00.000Z')
const A = 'a.example'
const B = 'b.example'

/** A page record as the engine writes it: the visit, and its children (the edges from it). */
const visit = (l: Link, depth: number, status: number | null, at: number, children: Link[] = []): PageRecord =>
  pageRecord(l.hash, l.host.hash, { depth, status, visited_at: at, children: children.map((c) => c.hash) })
const linksOnBoth = async (urls: string[], tenant = 'acme') => {
  let out: Link[] = []
  for (const e of engines) out = await links(e, urls, tenant)
  return out
}
/** A run on both engines; its seq on each. */
const newRun = async (tenant = 'acme') => {
  const runs = await newRuns(engines, tenant)
  return { id: runs[0]!.id, seqs: runs.map((r) => r.seq) }
}
type Run = Awaited<ReturnType<typeof newRun>>
const record = async (run: Run, pages: PageRecord[], tenant?: string) => {
  for (const [k, e] of engines.entries()) await e.recordPages(run.seqs[k]!, pages, tenant)
}
/** The same answer from both engines. */
async function same<T>(read: (e: Engine, k: number) => Promise<T>): Promise<T> {
  const answers: T[] = []
  for (const [k, e] of engines.entries()) answers.push(await read(e, k))
  expect(answers[1]).toEqual(answers[0]!)
  return answers[0]!
}

describe('visits', () => {
  let run: Run
  let ls: Link[]
  beforeAll(async () => {
    run = await newRun()
    ls = await linksOnBoth([`https://${A}/`, `https://${A}/a`, `https://${B}/`, `https://${B}/b?x=1`, `https://${A}/fail`])
    for (const e of engines) await e.exec(`UPDATE links SET labels = '{"type":"article"}' WHERE tenant = 'acme' AND hash = ?`, [ls[1]!.hash])
    const depths = [0, 1, 1, 2, 2]
    const statuses = [200, 200, 301, 404, null]
    await record(
      run,
      ls.map((l, i) => visit(l, depths[i]!, statuses[i]!, T0 + i * 1000)),
    )
    // another run and another tenant visit the same links
    await record(await newRun(), [visit(ls[0]!, 0, 200, T0)])
    const [foreign] = await linksOnBoth([`https://${A}/`], 'other')
    await record(await newRun('other'), [visit(foreign!, 0, 200, T0)], 'other')
  })
  const visited = (f: VisitFilter) => same(async (e) => (await e.graph.visits('acme', run.id, f, undefined, 100))!.data.map((v) => ls.findIndex((l) => l.hash === v.hash)))

  test('visited links in visit order: the link shape plus depth, visited_at and status', async () => {
    const first = await same(async (e) => (await e.graph.visits('acme', run.id, {}, undefined, 2))!)
    expect(first.data).toEqual([
      { hash: ls[0]!.hash, url: `https://${A}/`, host: { hash: hostHash(A), domain: A }, labels: {}, created_at: expect.any(String), depth: 0, visited_at: '2026-03-01T12:00:00.000Z', status: 200 },
      expect.objectContaining({ hash: ls[1]!.hash, labels: { type: 'article' }, depth: 1, visited_at: '2026-03-01T12:00:01.000Z' }),
    ])
    expect(Object.keys(first.data[0]!)).toEqual(['hash', 'url', 'host', 'labels', 'created_at', 'depth', 'visited_at', 'status'])
    expect(first.next).toEqual(expect.any(Number))
    const rest = await same(async (e) => (await e.graph.visits('acme', run.id, {}, first.next!, 10))!)
    expect(rest.data.map((v) => v.status)).toEqual([301, 404, null])
    expect(rest.next).toBeNull()
  })

  test('every filter', async () => {
    expect(await visited({})).toEqual([0, 1, 2, 3, 4])
    expect(await visited({ depth: [1] })).toEqual([1, 2])
    expect(await visited({ depth: [0, 2] })).toEqual([0, 3, 4])
    expect(await visited({ depth: [] })).toEqual([])
    expect(await visited({ visited_after: '2026-03-01T12:00:01Z' })).toEqual([2, 3, 4])
    expect(await visited({ visited_before: '2026-03-01T12:00:01Z' })).toEqual([0])
    expect(await visited({ visited_after: '2026-03-01T12:00:00Z', visited_before: '2026-03-01T12:00:03Z' })).toEqual([1, 2])
    expect(await visited({ url_hashes: [ls[3]!.hash, ls[0]!.hash] })).toEqual([0, 3])
    expect(await visited({ urls: [`HTTPS://${B.toUpperCase()}:443/b?x=1#frag`] })).toEqual([3])
    expect(await visited({ host_hashes: [hostHash(B)] })).toEqual([2, 3])
    expect(await visited({ hosts: [A.toUpperCase()] })).toEqual([0, 1, 4])
    expect(await visited({ hosts: [A, B] })).toEqual([0, 1, 2, 3, 4])
    expect(await visited({ hosts: ['nowhere.example'] })).toEqual([])
    expect(await visited({ hosts: [A], depth: [2] })).toEqual([4])
    expect(await visited({ url_hashes: [ls[0]!.hash, ls[1]!.hash], depth: [1] })).toEqual([1])
    expect(await visited({ urls: [`https://${A}/`], hosts: [B] })).toEqual([])
    expect(await visited({ url_hashes: [ls[2]!.hash], host_hashes: [hostHash(B)], visited_after: '2026-03-01T12:00:01Z' })).toEqual([2])
  })

  test('pages of a selective filter keep visit order', async () => {
    const f = { url_hashes: ls.map((l) => l.hash).reverse() }
    const pages = await same((e) => walk((after) => e.graph.visits('acme', run.id, f, after, 3)))
    expect(pages.rows.map((v) => v.hash)).toEqual(ls.map((l) => l.hash))
    expect(pages.keys).toHaveLength(2)
  })

  test('null for an unknown run or another tenant’s', async () => {
    await same(async (e) => {
      expect(await e.graph.visits('acme', crypto.randomUUID(), {}, undefined, 10)).toBeNull()
      expect(await e.graph.visits('other', run.id, {}, undefined, 10)).toBeNull()
      expect(await e.graph.edges('other', run.id, {}, undefined, 10)).toBeNull()
    })
  })
})

describe('edges', () => {
  let run: Run
  let ls: Link[]
  beforeAll(async () => {
    run = await newRun()
    // 0 → 1, 2, 3; 1 → 0, 3; 3 → 3 (a page linking itself); 2 → 4
    ls = await linksOnBoth([`https://${A}/`, `https://${A}/a`, `https://${B}/`, `https://${B}/b`, `https://c.example/`])
    const [l0, l1, l2, l3, l4] = ls as [Link, Link, Link, Link, Link]
    await record(run, [visit(l0, 0, 200, T0, [l1, l2, l3]), visit(l1, 1, 200, T0 + 1000, [l0, l3]), visit(l3, 1, 200, T0 + 2000, [l3]), visit(l2, 1, 200, T0 + 3000, [l4])])
    await record(await newRun(), [visit(l4, 0, 200, T0, [l0])])
  })
  const at = (l: { hash: string }) => ls.findIndex((x) => x.hash === l.hash)
  const pairs = (f: EdgeFilter, perPage = 100) => same(async (e) => (await walk((after) => e.graph.edges('acme', run.id, f, after, perPage))).rows.map((x) => `${at(x.parent)}>${at(x.child)}`))

  test('edges in discovery order, each end a full link', async () => {
    const first = await same(async (e) => (await e.graph.edges('acme', run.id, {}, undefined, 1))!)
    expect(first.data).toEqual([
      {
        parent: { hash: ls[0]!.hash, url: `https://${A}/`, host: { hash: hostHash(A), domain: A }, labels: {}, created_at: expect.any(String) },
        // the link's labels now (set by the visits tests above), not a copy from the crawl
        child: { hash: ls[1]!.hash, url: `https://${A}/a`, host: { hash: hostHash(A), domain: A }, labels: { type: 'article' }, created_at: expect.any(String) },
        created_at: '2026-03-01T12:00:00.000Z',
      },
    ])
    expect(await pairs({})).toEqual(['0>1', '0>2', '0>3', '1>0', '1>3', '3>3', '2>4'])
    expect(await pairs({}, 2)).toEqual(['0>1', '0>2', '0>3', '1>0', '1>3', '3>3', '2>4'])
  })

  test('every filter keeps the edges touching a matching link, at either end', async () => {
    expect(await pairs({ url_hashes: [ls[3]!.hash] })).toEqual(['0>3', '1>3', '3>3'])
    expect(await pairs({ url_hashes: [ls[1]!.hash] })).toEqual(['0>1', '1>0', '1>3'])
    expect(await pairs({ url_hashes: [ls[0]!.hash, ls[1]!.hash] })).toEqual(['0>1', '0>2', '0>3', '1>0', '1>3'])
    expect(await pairs({ urls: [`https://C.example`] })).toEqual(['2>4'])
    expect(await pairs({ host_hashes: [hostHash(B)] })).toEqual(['0>2', '0>3', '1>3', '3>3', '2>4'])
    expect(await pairs({ hosts: ['c.example'] })).toEqual(['2>4'])
    expect(await pairs({ hosts: ['C.EXAMPLE', A] })).toEqual(['0>1', '0>2', '0>3', '1>0', '1>3', '2>4'])
    expect(await pairs({ hosts: ['nowhere.example'] })).toEqual([])
    expect(await pairs({ host_hashes: ['f'.repeat(32)] })).toEqual([])
    expect(await pairs({ hosts: [A, A], host_hashes: [hostHash(B)] })).toEqual(['0>2', '0>3', '1>3'])
    expect(await pairs({ url_hashes: [ls[0]!.hash], urls: [`https://${B}/b`] })).toEqual(['0>3'])
    expect(await pairs({ url_hashes: [ls[3]!.hash], hosts: [A] })).toEqual(['0>3', '1>3'])
  })

  test('pages of the url filter keep discovery order', async () => {
    expect(await pairs({ url_hashes: [ls[0]!.hash, ls[3]!.hash] }, 2)).toEqual(['0>1', '0>2', '0>3', '1>0', '1>3', '3>3'])
  })
})

describe('pagination and run deletion', () => {
  test('walks 250 visits and 250 edges, each exactly once, in order', async () => {
    const run = await newRun()
    const other = await newRun()
    const ls = await linksOnBoth(Array.from({ length: 251 }, (_, i) => `https://p${i % 7}.example/page/${i}`))
    for (const [i, l] of ls.slice(0, 250).entries()) {
      // 250 parents (a page's children are recorded once), each pointing at the next page and at ls[250].
      await record(run, [visit(l, i % 4, 200, T0 + i, [ls[(i + 1) % 250]!, ls[250]!])])
      if (i % 10 === 0) await record(other, [visit(l, 0, 200, T0)])
    }
    const visits = await same((e) => walk((after) => e.graph.visits('acme', run.id, {}, after, 11)))
    expect(visits.rows.map((v) => v.hash)).toEqual(ls.slice(0, 250).map((l) => l.hash))
    expect(visits.keys).toHaveLength(23)
    const deep = await same((e) => walk((after) => e.graph.visits('acme', run.id, { depth: [3], hosts: ['p2.example'] }, after, 11)))
    expect(deep.rows.map((v) => v.hash)).toEqual(
      ls
        .slice(0, 250)
        .filter((_, i) => i % 4 === 3 && i % 7 === 2)
        .map((l) => l.hash),
    )
    const edges = await same((e) => walk((after) => e.graph.edges('acme', run.id, {}, after, 11)))
    expect(edges.rows.map((x) => `${x.parent.hash}>${x.child.hash}`)).toEqual(ls.slice(0, 250).flatMap((l, i) => [`${l.hash}>${ls[(i + 1) % 250]!.hash}`, `${l.hash}>${ls[250]!.hash}`]))
    const touching = await same((e) => walk((after) => e.graph.edges('acme', run.id, { url_hashes: [ls[250]!.hash] }, after, 11)))
    expect(touching.rows.map((x) => x.parent.hash)).toEqual(ls.slice(0, 250).map((l) => l.hash))
    // Parent and child ends at once: ls[7] points at ls[8] and ls[250], ls[6] points at ls[7].
    const both = await same((e) => walk((after) => e.graph.edges('acme', run.id, { url_hashes: [ls[7]!.hash] }, after, 11)))
    expect(both.rows.map((x) => `${x.parent.hash}>${x.child.hash}`)).toEqual([`${ls[6]!.hash}>${ls[7]!.hash}`, `${ls[7]!.hash}>${ls[8]!.hash}`, `${ls[7]!.hash}>${ls[250]!.hash}`])
  }, 60_000)

  test('deleting a run deletes its visits and edges; its lists then answer null', async () => {
    const run = await newRun()
    const [p, c] = await linksOnBoth(['https://d.example/', 'https://d.example/1'])
    await record(run, [visit(p!, 0, 200, T0, [c!])])
    await same(async (e, k) => {
      expect((await e.graph.edges('acme', run.id, {}, undefined, 10))!.data).toHaveLength(1)
      await deleteRun(e, run.seqs[k]!)
      expect(await e.graph.visits('acme', run.id, {}, undefined, 10)).toBeNull()
      expect(await e.graph.edges('acme', run.id, {}, undefined, 10)).toBeNull()
      expect(await e.exec('SELECT 1 FROM visits WHERE run_seq = ?', [run.seqs[k]!])).toEqual([])
    })
  })
})
