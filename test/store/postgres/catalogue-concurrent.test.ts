// Catalogue inserts of the same URLs by several processes at once (API upserts, crawl commits):
// every caller gets every row, each row is written once, and overlapping inserts made in
// different orders inside open transactions neither deadlock nor fail.
import { afterAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { hostHash, linkHash } from '../../../src/core/url'
import { ensureLinks, pgHostStore, pgLinkStore } from '../../../src/store/postgres/catalogue'
import { openPostgres } from '../../../src/store/postgres/open'
import { numeric } from '../../../src/store/postgres/pg'
import { freshDatabase } from '../../helpers/postgres'

const opened: SQL[] = []
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
})

const A = 'acme'

async function processes(n: number): Promise<SQL[]> {
  const url = freshDatabase()
  const pools: SQL[] = []
  for (let i = 0; i < n; i++) pools.push(await openPostgres(url))
  opened.push(...pools)
  return pools
}

const count = async (sql: SQL, table: 'hosts' | 'links') => numeric<{ n: number }>(await sql.unsafe(`SELECT count(*) AS n FROM ${table}`))[0]!.n
const shuffled = <T>(xs: T[]) =>
  xs
    .map((x) => [Math.random(), x] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, x]) => x)
const urlsOf = (n: number, hosts = 10) => Array.from({ length: n }, (_, i) => `https://h${i % hosts}.example/p/${i}`)

describe('catalogue inserts across processes', () => {
  test('two upserts of the same URLs at once: each answers every row, in its order; each row is written once', async () => {
    const [p1, p2] = await processes(2)
    for (let round = 0; round < 5; round++) {
      const urls = urlsOf(200).map((u) => `${u}?r=${round}`)
      const [one, two] = await Promise.all([pgLinkStore(p1!).upsert(A, urls), pgLinkStore(p2!).upsert(A, shuffled(urls))])
      expect(one.map((l) => l.url)).toEqual(urls)
      const byHash = new Map(one.map((l) => [l.hash, l]))
      for (const l of two) expect(l).toEqual(byHash.get(l.hash)!)
      expect(two).toHaveLength(200)
    }
    expect(await count(p1!, 'links')).toBe(1000)
    expect(await count(p1!, 'hosts')).toBe(10)
    const [h1, h2] = await Promise.all([pgHostStore(p1!).upsert(A, ['n1.example', 'n2.example']), pgHostStore(p2!).upsert(A, ['n2.example', 'n1.example'])])
    expect(h2).toEqual([h1[1]!, h1[0]!])
  })

  test('an upsert meeting rows another transaction has not committed waits for it and answers them', async () => {
    const [p1, p2] = await processes(2)
    const urls = urlsOf(50, 3)
    let commit!: () => void
    const committing = new Promise<void>((r) => (commit = r))
    let inserted!: () => void
    const insertedNow = new Promise<void>((r) => (inserted = r))
    const crawl = p1!.begin(async (tx) => {
      await ensureLinks(tx, A, urls)
      inserted()
      await committing
    })
    await insertedNow
    const upsert = pgLinkStore(p2!).upsert(A, [...urls].reverse())
    await Bun.sleep(100)
    commit()
    await crawl
    const answered = await upsert
    expect(answered.map((l) => l.url)).toEqual([...urls].reverse())
    expect(await count(p2!, 'links')).toBe(50)
    // The rows are the crawl's, numbered in its order.
    const listed = (await pgLinkStore(p2!).list(A, {}, undefined, 100)).data.map((l) => l.url)
    expect(listed).toEqual([...urls].reverse())
  })

  test('crawl commits of overlapping URLs in different orders, holding their transactions open, neither deadlock nor fail', async () => {
    const pools = await processes(4)
    const urls = urlsOf(300, 12)
    // Each commit meets the URLs in an order of its own, then holds its rows a while, as a
    // commit does while it writes the rest of its batch.
    const commits = Array.from({ length: 8 }, (_, i) =>
      pools[i % 4]!.begin(async (tx) => {
        await ensureLinks(tx, A, shuffled(urls).slice(0, 250))
        await Bun.sleep(50)
        await ensureLinks(tx, A, []) // nothing to insert: no statement
      }),
    )
    await Promise.all(commits)
    const linkRows = numeric<{ hash: string; url: string; host: string }>(await pools[0]!`SELECT l.hash, l.url, h.domain AS host FROM links l JOIN hosts h ON h.seq = l.host_seq`)
    expect(new Set(linkRows.map((r) => r.hash)).size).toBe(linkRows.length)
    for (const r of linkRows) {
      expect(r.hash).toBe(linkHash(r.url))
      expect(r.host).toBe(new URL(r.url).hostname)
    }
    expect(await count(pools[0]!, 'hosts')).toBe(12)
  })

  test('ensureLinks writes nothing and draws no seq for URLs already catalogued', async () => {
    const [sql] = await processes(1)
    const urls = urlsOf(20, 2)
    await sql!.begin((tx) => ensureLinks(tx, A, urls))
    const seqs = async () => numeric<{ h: number; l: number }>(await sql!`SELECT (SELECT last_value FROM hosts_seq_seq) AS h, (SELECT last_value FROM links_seq_seq) AS l`)[0]!
    const before = await seqs()
    await sql!.begin((tx) => ensureLinks(tx, A, [...urls].reverse()))
    expect(await seqs()).toEqual(before)
    await sql!.begin((tx) => ensureLinks(tx, A, [urls[0]!, 'https://h9.example/new', urls[1]!]))
    expect(await seqs()).toEqual({ h: before.h + 1, l: before.l + 1 })
    const [added] = await pgLinkStore(sql!).upsert(A, ['https://h9.example/new'])
    expect(added!.host).toEqual({ hash: hostHash('h9.example'), domain: 'h9.example' })
    // Another tenant's catalogue is its own.
    await sql!.begin((tx) => ensureLinks(tx, 'globex', urls.slice(0, 3)))
    expect((await pgLinkStore(sql!).list('globex', {}, undefined, 10)).data.map((l) => l.url)).toEqual(urls.slice(0, 3).reverse())
    expect(await count(sql!, 'links')).toBe(24)
  })

  test('a failed transaction takes its catalogue rows with it', async () => {
    const [sql] = await processes(1)
    await expect(
      sql!.begin(async (tx) => {
        await ensureLinks(tx, A, urlsOf(5))
        throw new Error('the rest of the commit failed')
      }),
    ).rejects.toThrow('the rest of the commit failed')
    expect([await count(sql!, 'links'), await count(sql!, 'hosts')]).toEqual([0, 0])
  })
})
