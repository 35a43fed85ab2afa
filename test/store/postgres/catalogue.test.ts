// The catalogue (hosts, links, their labels) on PostgreSQL: what the engine-neutral contract
// (test/store/contract.ts) leaves out, from the behaviours the API tests expect (filters, label
// filters, ordering, pages, the label limit) and what only several processes sharing one
// database can show (concurrent upserts and crawl commits of the same URLs).
import { afterAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { DomainError } from '../../../src/core/errors'
import { hostHash, linkHash } from '../../../src/core/url'
import { pgHostStore, pgLinkStore } from '../../../src/store/postgres/catalogue'
import { openPostgres } from '../../../src/store/postgres/open'
import { numeric } from '../../../src/store/postgres/pg'
import type { Page } from '../../../src/store/types'
import { freshDatabase } from '../../helpers/postgres'

const opened: SQL[] = []
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
})

const A = 'acme'
const B = 'globex'

/** A database and `n` processes' pools over it. */
async function processes(n: number): Promise<SQL[]> {
  const url = freshDatabase()
  const pools: SQL[] = []
  for (let i = 0; i < n; i++) pools.push(await openPostgres(url))
  opened.push(...pools)
  return pools
}
const catalogue = (sql: SQL) => ({ hosts: pgHostStore(sql), links: pgLinkStore(sql) })
const fresh = async () => catalogue((await processes(1))[0]!)

async function walk<T>(list: (after: number | undefined) => Promise<Page<T> | null>): Promise<{ rows: T[]; pages: number }> {
  const rows: T[] = []
  let after: number | undefined
  for (let pages = 1; ; pages++) {
    const page = (await list(after))!
    rows.push(...page.data)
    if (page.next === null) return { rows, pages }
    after = page.next
  }
}

const count = async (sql: SQL, table: 'hosts' | 'links' | 'labels') => numeric<{ n: number }>(await sql.unsafe(`SELECT count(*) AS n FROM ${table}`))[0]!.n
const labels = (n: number, prefix = 'k') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, 'v']))

describe('hosts on PostgreSQL', () => {
  test('upsert answers a domain given twice twice, keeps created_at, and numbers new rows in the order given', async () => {
    const { hosts } = await fresh()
    // Hash order differs from the order given: seqs must still follow the input.
    const domains = Array.from({ length: 30 }, (_, i) => `h${i}.example`)
    const answered = await hosts.upsert(A, [...domains, 'h3.example'])
    expect(answered.map((h) => h.domain)).toEqual([...domains, 'h3.example'])
    expect(answered[30]).toEqual(answered[3]!)
    expect(answered[0]).toEqual({ hash: hostHash('h0.example'), domain: 'h0.example', labels: {}, created_at: expect.any(String) })
    await Bun.sleep(2)
    expect(await hosts.upsert(A, ['h5.example'])).toEqual([answered[5]!])
    const listed = await walk((after) => hosts.list(A, {}, after, 7))
    expect(listed.rows.map((h) => h.domain)).toEqual([...domains].reverse())
    expect(listed.pages).toBe(5)
    expect(await hosts.upsert(A, [])).toEqual([])
  })

  test('filters: hashes and domains (normalized) must both hold; labels each hold; the index follows edits', async () => {
    const { hosts } = await fresh()
    const [, f2, f3] = await hosts.upsert(A, ['f1.example', 'f2.example', 'f3.example'])
    await hosts.upsert(B, ['f2.example'])
    const domains = async (f: Parameters<typeof hosts.list>[1]) => (await hosts.list(A, f, undefined, 10)).data.map((h) => h.domain)
    expect(await domains({ host_hashes: [f2!.hash] })).toEqual(['f2.example'])
    expect(await domains({ hosts: ['F1.example.', 'f3.example'] })).toEqual(['f3.example', 'f1.example'])
    expect(await domains({ hosts: ['f1.example'], host_hashes: [f2!.hash] })).toEqual([])
    expect(await domains({ hosts: ['f1.example', 'f2.example'], host_hashes: [f2!.hash, f3!.hash] })).toEqual(['f2.example'])
    expect(await domains({ hosts: [] })).toEqual([])
    await hosts.labels.merge(A, f2!.hash, { env: 'prod', team: 'a' })
    await hosts.labels.merge(B, f2!.hash, { env: 'prod' })
    expect((await hosts.list(A, { labels: { env: 'prod' } }, undefined, 10)).data).toEqual([{ ...f2!, labels: { env: 'prod', team: 'a' } }])
    expect(await domains({ labels: { env: 'prod', team: 'b' } })).toEqual([])
    expect(await domains({ labels: { env: 'prod', team: 'a' } })).toEqual(['f2.example'])
    expect(await domains({ labels: { env: 'prod' }, hosts: ['f1.example'] })).toEqual([])
    await hosts.labels.remove(A, f2!.hash, ['team'])
    expect(await domains({ labels: { team: 'a' } })).toEqual([])
    await hosts.labels.merge(A, f2!.hash, { env: 'dev' })
    expect(await domains({ labels: { env: 'prod' } })).toEqual([])
    expect(await domains({ labels: { env: 'dev' } })).toEqual(['f2.example'])
    expect((await hosts.list(B, { labels: { env: 'prod' } }, undefined, 10)).data.map((h) => h.labels)).toEqual([{ env: 'prod' }])
  })
})

describe('links on PostgreSQL', () => {
  test('upsert creates the hosts, answers a URL given twice twice, keeps created_at, and numbers rows in the order given', async () => {
    const [sql] = await processes(1)
    const { hosts, links } = catalogue(sql!)
    const urls = Array.from({ length: 40 }, (_, i) => `https://p${i % 3}.example/page/${i}`)
    const answered = await links.upsert(A, [...urls, urls[7]!])
    expect(answered.map((l) => l.url)).toEqual([...urls, urls[7]!])
    expect(answered[40]).toEqual(answered[7]!)
    expect(answered[1]).toEqual({ hash: linkHash(urls[1]!), url: urls[1]!, host: { hash: hostHash('p1.example'), domain: 'p1.example' }, labels: {}, created_at: expect.any(String) })
    expect([await count(sql!, 'links'), await count(sql!, 'hosts')]).toEqual([40, 3])
    expect((await hosts.list(A, {}, undefined, 10)).data.map((h) => h.domain)).toEqual(['p2.example', 'p1.example', 'p0.example'])
    await Bun.sleep(2)
    expect(await links.upsert(A, [urls[9]!])).toEqual([answered[9]!])
    const listed = await walk((after) => links.list(A, {}, after, 100))
    expect(listed.rows.map((l) => l.url)).toEqual([...urls].reverse())
    const ofHost = await walk((after) => links.listOfHost(A, hostHash('p0.example'), {}, after, 4))
    expect(ofHost.rows.map((l) => l.url)).toEqual(urls.filter((_, i) => i % 3 === 0).reverse())
    expect(ofHost.pages).toBe(4)
    expect(await links.upsert(A, [])).toEqual([])
  })

  test('pages of 250 links: per_page 100 takes three, the last of 50 ends; a full last page ends too', async () => {
    const { hosts, links } = await fresh()
    const urls = Array.from({ length: 250 }, (_, i) => `https://p${i % 7}.example/page/${i}`)
    await links.upsert(A, urls.slice(0, 200))
    await links.upsert(A, urls.slice(200))
    await links.upsert(B, ['https://p0.example/other'])
    const first = await links.list(A, {}, undefined, 100)
    const second = await links.list(A, {}, first.next!, 100)
    const third = await links.list(A, {}, second.next!, 100)
    expect(third.data).toHaveLength(50)
    expect(third.next).toBeNull()
    expect(new Set([...first.data, ...second.data, ...third.data].map((l) => l.hash)).size).toBe(250)
    const seven = await hosts.list(A, {}, undefined, 7)
    expect(seven.data).toHaveLength(7)
    expect(seven.next).toBeNull()
    expect((await walk((after) => links.listOfHost(A, hostHash('p0.example'), {}, after, 4))).rows).toHaveLength(36)
  })

  test('every filter of the list and of a host’s list', async () => {
    const { links } = await fresh()
    const [f1, f2, g1] = await links.upsert(A, ['https://f.example/1', 'https://f.example/2', 'https://g.example/1'])
    await links.upsert(B, ['https://f.example/1', 'https://g.example/1'])
    const urls = async (f: Parameters<typeof links.list>[1]) => (await links.list(A, f, undefined, 10)).data.map((l) => l.url)
    expect(await urls({ url_hashes: [g1!.hash, f2!.hash] })).toEqual(['https://g.example/1', 'https://f.example/2'])
    expect(await urls({ urls: ['HTTPS://F.example:443/1#x'] })).toEqual(['https://f.example/1'])
    expect(await urls({ urls: ['not a url'] })).toEqual([])
    expect(await urls({ url_hashes: [f1!.hash], urls: ['https://f.example/2'] })).toEqual([])
    expect(await urls({ hosts: ['F.Example.'] })).toEqual(['https://f.example/2', 'https://f.example/1'])
    expect(await urls({ host_hashes: [g1!.host.hash] })).toEqual(['https://g.example/1'])
    expect(await urls({ host_hashes: [g1!.host.hash, f1!.host.hash] })).toHaveLength(3)
    expect(await urls({ hosts: ['f.example'], host_hashes: [g1!.host.hash] })).toEqual([])
    expect(await urls({ hosts: ['f.example'], urls: ['https://g.example/1'] })).toEqual([])
    expect(await urls({ hosts: ['nowhere.example'] })).toEqual([])
    await links.labels.merge(A, f2!.hash, { type: 'article', lang: 'en' })
    await links.labels.merge(A, g1!.hash, { type: 'article' })
    await links.labels.merge(B, f1!.hash, { type: 'article' })
    expect(await urls({ labels: { type: 'article' } })).toEqual(['https://g.example/1', 'https://f.example/2'])
    expect(await urls({ labels: { type: 'article', lang: 'en' } })).toEqual(['https://f.example/2'])
    expect(await urls({ labels: { type: 'article' }, hosts: ['g.example'] })).toEqual(['https://g.example/1'])
    expect(await urls({ labels: { type: 'article' }, hosts: ['f.example'], url_hashes: [f1!.hash] })).toEqual([])
    const ofF = async (f: Parameters<typeof links.list>[1]) => (await links.listOfHost(A, f1!.host.hash, f, undefined, 10))!.data.map((l) => l.url)
    expect(await ofF({})).toEqual(['https://f.example/2', 'https://f.example/1'])
    expect(await ofF({ urls: ['https://f.example/1'] })).toEqual(['https://f.example/1'])
    expect(await ofF({ url_hashes: [g1!.hash] })).toEqual([])
    expect(await ofF({ labels: { type: 'article' } })).toEqual(['https://f.example/2'])
    expect(await links.listOfHost(A, '0'.repeat(32), {}, undefined, 10)).toBeNull()
    expect((await links.get(A, f2!.hash))!.labels).toEqual({ type: 'article', lang: 'en' })
  })

  test('labels: up to 64, counted after the merge; a refused merge changes nothing; links too', async () => {
    const [sql] = await processes(1)
    const { hosts, links } = catalogue(sql!)
    const [h] = await hosts.upsert(A, ['l.example'])
    expect(await hosts.labels.merge(A, h!.hash, labels(63))).toEqual(labels(63))
    // Keys already there do not count twice.
    expect(Object.keys((await hosts.labels.merge(A, h!.hash, { ...labels(10), last: 'x' }))!)).toHaveLength(64)
    const e = await hosts.labels.merge(A, h!.hash, { more: 'x' }).catch((err: unknown) => err)
    expect(e).toBeInstanceOf(DomainError)
    expect((e as DomainError).code).toBe('validation')
    expect((e as DomainError).message).toBe('labels: would leave more than 64 labels')
    expect(Object.keys((await hosts.labels.get(A, h!.hash))!)).toHaveLength(64)
    expect(await count(sql!, 'labels')).toBe(64)
    expect(Object.keys((await hosts.labels.remove(A, h!.hash, Object.keys(labels(63))))!)).toEqual(['last'])
    expect(await count(sql!, 'labels')).toBe(1)
    const [l] = await links.upsert(A, ['https://l.example/'])
    await expect(links.labels.merge(A, l!.hash, labels(65))).rejects.toBeInstanceOf(DomainError)
    expect(await links.labels.get(A, l!.hash)).toEqual({})
    expect(await links.labels.merge(A, '0'.repeat(32), { a: 'b' })).toBeNull()
    expect(await links.labels.remove(A, '0'.repeat(32), ['a'])).toBeNull()
    expect(await links.labels.get(A, '0'.repeat(32))).toBeNull()
  })

  test('two merges at once from two processes cannot pass the limit together', async () => {
    const [p1, p2] = await processes(2)
    const [h] = await pgHostStore(p1!).upsert(A, ['race.example'])
    for (let round = 0; round < 5; round++) {
      await pgHostStore(p1!).labels.remove(A, h!.hash, Object.keys((await pgHostStore(p1!).labels.get(A, h!.hash))!))
      const results = await Promise.allSettled([pgHostStore(p1!).labels.merge(A, h!.hash, labels(40, 'a')), pgHostStore(p2!).labels.merge(A, h!.hash, labels(40, 'b'))])
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
      expect(Object.keys((await pgHostStore(p2!).labels.get(A, h!.hash))!)).toHaveLength(40)
      expect(await count(p1!, 'labels')).toBe(40)
    }
  })
})
