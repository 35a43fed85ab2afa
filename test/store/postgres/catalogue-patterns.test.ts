// Pattern sets and data maps on PostgreSQL: the list filters the API tests expect
// (test/api/patterns.test.ts, data-maps.test.ts) and what the contract leaves out, and writes of
// one set or map by several processes at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import { DomainError } from '../../../src/core/errors'
import type { PatternDef } from '../../../src/extract/patterns'
import type { DataMapFilter } from '../../../src/store/data-maps'
import type { PatternFilter, PatternSet } from '../../../src/store/patterns'
import { pgHostStore } from '../../../src/store/postgres/catalogue'
import { pgDataMapStore } from '../../../src/store/postgres/data-maps'
import { openPostgres } from '../../../src/store/postgres/open'
import { pgPatternStore } from '../../../src/store/postgres/patterns'
import type { DataMap } from '../../../src/store/data-maps'
import { freshDatabase } from '../../helpers/postgres'

const opened: SQL[] = []
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
})

const A = 'acme'
const B = 'globex'
const uuid = () => crypto.randomUUID()
const regex = (...patterns: string[]): PatternDef => ({ format: 'regex', patterns })
const urlPattern = (...patterns: string[]): PatternDef => ({ format: 'url_pattern', patterns })
const map = (selector: string) => ({ fields: [{ name: 'title', selector }] })

async function processes(n: number): Promise<SQL[]> {
  const url = freshDatabase()
  const pools: SQL[] = []
  for (let i = 0; i < n; i++) pools.push(await openPostgres(url))
  opened.push(...pools)
  return pools
}

describe('pattern sets on PostgreSQL', () => {
  let sql: SQL
  const sets: Record<string, PatternSet> = {}
  const h: Record<string, string> = {}
  beforeAll(async () => {
    ;[sql] = (await processes(1)) as [SQL]
    for (const x of await pgHostStore(sql).upsert(A, ['one.example', 'two.example', 'three.example'])) h[x.domain] = x.hash
    await pgHostStore(sql).upsert(B, ['one.example'])
    const plan: [string, string, string, PatternDef][] = [
      ['s1', 'one.example', 'products', urlPattern('/p/:id')],
      ['s2', 'one.example', 'articles', regex('/a/')],
      ['s3', 'two.example', 'products', regex('/p/')],
      ['s4', 'two.example', 'forums', urlPattern('/f/*')],
      ['s5', 'three.example', 'blogs', regex('/b/')],
    ]
    for (const [key, domain, category, patterns] of plan) {
      sets[key] = (await pgPatternStore(sql).create(A, h[domain]!, { id: uuid(), category, patterns }))!
      await Bun.sleep(3) // distinct created_at, for the time filters
    }
    await pgPatternStore(sql).create(B, h['one.example']!, { id: sets.s1!.id, category: 'others', patterns: regex('/twin/') })
  })
  const ids = async (f: PatternFilter) => (await pgPatternStore(sql).list(A, f, undefined, 100)).data.map((s) => s.id)
  const ofHost = async (domain: string, f: PatternFilter) => (await pgPatternStore(sql).listOfHost(A, h[domain]!, f, undefined, 100))!.data.map((s) => s.id)
  const names = (...keys: string[]) => keys.map((k) => sets[k]!.id)

  test('newest first; keyset pages walk every set once; the other tenant’s twin id is its own', async () => {
    const patterns = pgPatternStore(sql)
    expect(await ids({})).toEqual(names('s5', 's4', 's3', 's2', 's1'))
    const first = await patterns.list(A, {}, undefined, 2)
    expect(first.data).toEqual([sets.s5!, sets.s4!])
    const second = await patterns.list(A, {}, first.next!, 2)
    expect(second.data).toEqual([sets.s3!, sets.s2!])
    expect(await patterns.list(A, {}, second.next!, 2)).toEqual({ data: [sets.s1!], next: null })
    expect((await patterns.get(B, sets.s1!.id))!.category).toBe('others')
    expect(await patterns.get(A, sets.s1!.id)).toEqual(sets.s1!)
    expect((await patterns.list(B, {}, undefined, 10)).data.map((s) => s.patterns)).toEqual([regex('/twin/')])
    expect(await patterns.listOfHost(B, h['one.example']!, {}, undefined, 10)).toEqual({ data: [expect.objectContaining({ category: 'others' })], next: null })
  })

  test('every filter of the tenant’s list', async () => {
    expect(await ids({ include_ids: names('s1', 's4') })).toEqual(names('s4', 's1'))
    expect(await ids({ exclude_ids: names('s1', 's4') })).toEqual(names('s5', 's3', 's2'))
    expect(await ids({ include_ids: names('s1', 's4'), exclude_ids: names('s4') })).toEqual(names('s1'))
    expect(await ids({ categories: ['products', 'blogs'] })).toEqual(names('s5', 's3', 's1'))
    expect(await ids({ formats: ['url_pattern'] })).toEqual(names('s4', 's1'))
    expect(await ids({ host_hashes: [h['two.example']!, h['three.example']!] })).toEqual(names('s5', 's4', 's3'))
    expect(await ids({ hosts: ['ONE.Example.'] })).toEqual(names('s2', 's1'))
    expect(await ids({ hosts: ['one.example'], host_hashes: [h['two.example']!] })).toEqual([])
    expect(await ids({ hosts: ['nowhere.example'] })).toEqual([])
    expect(await ids({ created_after: sets.s3!.created_at })).toEqual(names('s5', 's4'))
    expect(await ids({ created_before: sets.s3!.created_at })).toEqual(names('s2', 's1'))
    expect(await ids({ categories: ['products'], formats: ['regex'], created_after: sets.s1!.created_at })).toEqual(names('s3'))
  })

  test('a host’s list: every filter but the host ones, its pages; null for a host of no tenant’s', async () => {
    const patterns = pgPatternStore(sql)
    expect(await patterns.listOfHost(A, h['two.example']!, {}, undefined, 10)).toEqual({ data: [sets.s4!, sets.s3!], next: null })
    const page = (await patterns.listOfHost(A, h['two.example']!, {}, undefined, 1))!
    expect(page.data).toEqual([sets.s4!])
    expect((await patterns.listOfHost(A, h['two.example']!, {}, page.next!, 1))!).toEqual({ data: [sets.s3!], next: null })
    expect(await ofHost('two.example', { include_ids: names('s3', 's1') })).toEqual(names('s3'))
    expect(await ofHost('two.example', { exclude_ids: names('s3') })).toEqual(names('s4'))
    expect(await ofHost('two.example', { categories: ['forums'] })).toEqual(names('s4'))
    expect(await ofHost('two.example', { formats: ['regex'] })).toEqual(names('s3'))
    expect(await ofHost('two.example', { created_before: sets.s4!.created_at })).toEqual(names('s3'))
    expect(await ofHost('two.example', { created_after: sets.s3!.created_at })).toEqual(names('s4'))
    expect(await ofHost('two.example', { categories: ['blogs'] })).toEqual([])
    expect(await patterns.listOfHost(A, '0'.repeat(32), {}, undefined, 10)).toBeNull()
  })

  test('replace keeps id, category, host and created_at; delete once; forHost follows both', async () => {
    const patterns = pgPatternStore(sql)
    const [host] = await pgHostStore(sql).upsert(A, ['shop.example'])
    const first = (await patterns.create(A, host!.hash, { id: uuid(), category: 'products', patterns: urlPattern('/p/:id') }))!
    const second = (await patterns.create(A, host!.hash, { id: uuid(), category: 'articles', patterns: regex('/blog/') }))!
    const replaced = await patterns.replace(A, first.id, regex('^/item/'))
    expect(replaced).toEqual({ ...first, patterns: regex('^/item/') })
    expect(await patterns.forHost(A, host!.hash)).toEqual([replaced!, second])
    expect(await patterns.forHost(A, '0'.repeat(32))).toEqual([])
    expect(await patterns.replace(A, uuid(), regex('x'))).toBeNull()
    expect(await patterns.delete(A, first.id)).toBe(true)
    expect(await patterns.delete(A, first.id)).toBe(false)
    expect(await patterns.replace(A, first.id, regex('x'))).toBeNull()
    expect(await patterns.forHost(A, host!.hash)).toEqual([second])
  })

  test('two creates of one id at once from two processes: one set, and a conflict', async () => {
    const [p1, p2] = await processes(2)
    const [host] = await pgHostStore(p1!).upsert(A, ['race.example'])
    for (let round = 0; round < 10; round++) {
      const id = uuid()
      const results = await Promise.allSettled([
        pgPatternStore(p1!).create(A, host!.hash, { id, category: 'products', patterns: regex('/one/') }),
        pgPatternStore(p2!).create(A, host!.hash, { id, category: 'articles', patterns: regex('/two/') }),
      ])
      const won = results.filter((r) => r.status === 'fulfilled')
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      expect(won).toHaveLength(1)
      expect(lost[0]!.reason).toBeInstanceOf(DomainError)
      expect((lost[0]!.reason as DomainError).code).toBe('conflict')
      expect((lost[0]!.reason as DomainError).message).toBe(`pattern set ${id} already exists`)
      expect(await pgPatternStore(p2!).get(A, id)).toEqual((won[0] as PromiseFulfilledResult<PatternSet>).value)
    }
  })
})

describe('data maps on PostgreSQL', () => {
  test('create as written; update replaces only the supplied fields; updated_at moves strictly forward, also within one millisecond', async () => {
    const [sql] = await processes(1)
    const maps = pgDataMapStore(sql!)
    const [host] = await pgHostStore(sql!).upsert(A, ['blog.example'])
    const schema = uuid()
    const created = (await maps.create(A, host!.hash, { id: uuid(), schema_id: schema, map: map('h1') }))!
    expect(created).toEqual({ id: created.id, schema_id: schema, map: map('h1'), host: { hash: host!.hash, domain: 'blog.example' }, created_at: expect.any(String), updated_at: created.created_at })
    const other = uuid()
    const renamed = (await maps.update(A, created.id, { schema_id: other }))!
    expect(renamed).toEqual({ ...created, schema_id: other, updated_at: expect.any(String) })
    const remapped = (await maps.update(A, created.id, { map: map('h2') }))!
    expect(remapped).toEqual({ ...renamed, map: map('h2'), updated_at: expect.any(String) })
    const untouched = (await maps.update(A, created.id, {}))!
    expect(untouched).toEqual({ ...remapped, updated_at: expect.any(String) })
    const times = [created, renamed, remapped, untouched].map((m) => Date.parse(m.updated_at))
    for (let i = 1; i < times.length; i++) expect(times[i]!).toBeGreaterThan(times[i - 1]!)
    expect(await maps.get(A, created.id)).toEqual(untouched)
    expect(await maps.update(A, uuid(), { schema_id: other })).toBeNull()
    expect(await maps.delete(A, created.id)).toBe(true)
    expect(await maps.delete(A, created.id)).toBe(false)
    expect(await maps.update(A, created.id, {})).toBeNull()
  })

  test('updates at once from two processes each move updated_at forward', async () => {
    const [p1, p2] = await processes(2)
    const [host] = await pgHostStore(p1!).upsert(A, ['busy.example'])
    const created = (await pgDataMapStore(p1!).create(A, host!.hash, { id: uuid(), schema_id: uuid(), map: map('h1') }))!
    const updates = await Promise.all(Array.from({ length: 20 }, (_, i) => pgDataMapStore(i % 2 ? p1! : p2!).update(A, created.id, { schema_id: uuid() })))
    const times = updates.map((m) => Date.parse(m!.updated_at)).sort((a, b) => a - b)
    expect(new Set(times).size).toBe(20)
    expect(times[0]!).toBeGreaterThan(Date.parse(created.updated_at))
    expect(Date.parse((await pgDataMapStore(p2!).get(A, created.id))!.updated_at)).toBe(times[19]!)
  })

  test('every filter of both lists; conflicts; tenants', async () => {
    const [sql] = await processes(1)
    const maps = pgDataMapStore(sql!)
    const [a, b] = await pgHostStore(sql!).upsert(A, ['a.example', 'b.example'])
    await pgHostStore(sql!).upsert(B, ['a.example'])
    const SCHEMA = uuid()
    const OTHER = uuid()
    const m: DataMap[] = []
    for (const [host, schema] of [
      [a!, SCHEMA],
      [b!, SCHEMA],
      [a!, OTHER],
      [b!, OTHER],
    ] as const) {
      m.push((await maps.create(A, host.hash, { id: uuid(), schema_id: schema, map: map('h1') }))!)
      await Bun.sleep(3)
    }
    const twin = (await maps.create(B, a!.hash, { id: m[0]!.id, schema_id: OTHER, map: map('x') }))!
    expect(twin.id).toBe(m[0]!.id)
    await expect(maps.create(A, b!.hash, { id: m[0]!.id, schema_id: SCHEMA, map: map('y') })).rejects.toMatchObject({ code: 'conflict', message: `data map ${m[0]!.id} already exists` })
    expect(await maps.create(A, '0'.repeat(32), { id: uuid(), schema_id: SCHEMA, map: map('y') })).toBeNull()
    const n = (maps: DataMap[]) => maps.map((x) => m.findIndex((y) => y.id === x.id) + 1)
    const ids = async (f: DataMapFilter) => n((await maps.list(A, f, undefined, 100)).data)
    const of = async (host: string, f: DataMapFilter) => n((await maps.listOfHost(A, host, f, undefined, 100))!.data)
    expect(await ids({})).toEqual([4, 3, 2, 1])
    expect(await ids({ include_ids: [m[0]!.id, m[2]!.id] })).toEqual([3, 1])
    expect(await ids({ exclude_ids: [m[3]!.id, m[0]!.id] })).toEqual([3, 2])
    expect(await ids({ host_hashes: [b!.hash] })).toEqual([4, 2])
    expect(await ids({ hosts: ['A.Example'] })).toEqual([3, 1])
    expect(await ids({ hosts: ['a.example'], host_hashes: [b!.hash] })).toEqual([])
    expect(await ids({ schema_ids: [OTHER] })).toEqual([4, 3])
    expect(await ids({ created_after: m[1]!.created_at })).toEqual([4, 3])
    expect(await ids({ created_before: m[1]!.created_at })).toEqual([1])
    expect(await ids({ created_after: m[0]!.created_at, created_before: m[3]!.created_at, schema_ids: [SCHEMA] })).toEqual([2])
    expect(await of(b!.hash, { schema_ids: [SCHEMA] })).toEqual([2])
    expect(await of(a!.hash, { include_ids: [m[1]!.id, m[2]!.id] })).toEqual([3])
    expect(await of(a!.hash, { exclude_ids: [m[2]!.id] })).toEqual([1])
    expect(await of(a!.hash, { created_after: m[0]!.created_at })).toEqual([3])
    expect(await of(a!.hash, { created_before: m[2]!.created_at })).toEqual([1])
    const page = (await maps.list(A, {}, undefined, 3))!
    expect(n(page.data)).toEqual([4, 3, 2])
    expect(n((await maps.list(A, {}, page.next!, 3)).data)).toEqual([1])
    expect(await maps.listOfHost(A, '0'.repeat(32), {}, undefined, 10)).toBeNull()
    expect((await maps.list(B, {}, undefined, 10)).data).toEqual([twin])
    expect((await maps.list(B, { include_ids: [m[1]!.id] }, undefined, 10)).data).toEqual([])
    expect(await maps.get(B, m[1]!.id)).toBeNull()
    expect(await maps.delete(B, m[1]!.id)).toBe(false)
    expect(await maps.get(A, m[0]!.id)).toEqual(m[0]!)
  })
})
