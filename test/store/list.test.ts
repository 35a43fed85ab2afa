import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteRepositories } from '../../src/store'
import { openDatabase } from '../../src/store/db'
import { ListQuery } from '../../src/store/list'

const dir = mkdtempSync(join(tmpdir(), 'trawl-list-'))
const db = openDatabase(dir)
const store = createSqliteRepositories(db)
afterAll(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

/** The query plan of a page, as SQLite's EXPLAIN QUERY PLAN lines. */
function plan(q: ListQuery, after?: number): string[] {
  const built = q.build(db, 't.seq', after, 10)
  if (!built) return ['(no query: nothing can match)']
  return (db.query(`EXPLAIN QUERY PLAN ${built.sql}`).all(...built.params) as { detail: string }[]).map((r) => r.detail)
}
const scansTenant = (lines: string[]) => lines.some((l) => /USING (COVERING )?INDEX \w+_by_tenant \(tenant=\?/.test(l))
const sorts = (lines: string[]) => lines.some((l) => l.includes('TEMP B-TREE FOR ORDER BY'))

// Every page is an index walk or a lookup of a bounded set: never a scan of a tenant's rows
// tested one by one (design.md §3: "any page costs O(log n), however deep").
describe('list query plans', () => {
  test('no filter: an ordered walk of (tenant, seq), also from a cursor, with no sort', () => {
    for (const cursor of [undefined, 5000]) {
      const p = plan(new ListQuery('links', 't', 'link'), cursor)
      expect(p.join('\n')).toMatch(/SEARCH t USING (COVERING )?INDEX links_by_tenant \(tenant=\?( AND seq<\?)?\)/)
      expect(sorts(p)).toBe(false)
    }
  })

  test('a label filter walks the label index in seq order, with no sort', () => {
    const p = plan(new ListQuery('jobs', 't', 'job').labels({ team: 'x' }), 99)
    expect(p[0]).toMatch(/SEARCH lf USING PRIMARY KEY \(kind=\? AND tenant=\? AND key=\? AND value=\? AND ref<\?\)/)
    expect(sorts(p)).toBe(false)
  })

  test.each([
    ['links by hash', () => new ListQuery('links', 't', 'link').in('t.hash', ['a'], true), /USING (COVERING )?INDEX sqlite_autoindex_links_1 \(tenant=\? AND hash=\?\)/],
    ['hosts by hash', () => new ListQuery('hosts', 't', 'host').in('t.hash', ['a'], true), /USING (COVERING )?INDEX sqlite_autoindex_hosts_1 \(tenant=\? AND hash=\?\)/],
    ['hosts by domain', () => new ListQuery('hosts', 't', 'host').in('t.domain', ['a'], true), /USING (COVERING )?INDEX hosts_by_domain \(tenant=\? AND domain=\?\)/],
    ['jobs by id', () => new ListQuery('jobs', 't', 'job').in('t.id', ['a'], true), /USING (COVERING )?INDEX sqlite_autoindex_jobs_1 \(tenant=\? AND id=\?\)/],
    ['jobs by name', () => new ListQuery('jobs', 't', 'job').in('t.name', ['a'], true).labels({ a: 'b' }), /USING (COVERING )?INDEX jobs_by_name \(tenant=\? AND name=\?\)/],
    ['runs by id', () => new ListQuery('runs', 't', 'run').in('t.id', ['a'], true), /USING (COVERING )?INDEX sqlite_autoindex_runs_1 \(tenant=\? AND id=\?\)/],
    ['links of several hosts', () => new ListQuery('links', 't', 'link').parents('t.host_seq', [1, 2]), /USING (COVERING )?INDEX links_by_host \(host_seq=\?\)/],
    ['runs of several jobs', () => new ListQuery('runs', 't', 'run').parents('t.job_seq', [1, 2]), /USING (COVERING )?INDEX runs_by_job \(job_seq=\?\)/],
  ] as [string, () => ListQuery, RegExp][])('a selective filter looks its rows up by index: %s', (_name, make, expected) => {
    const p = plan(make())
    expect(p.join('\n')).toMatch(expected)
    expect(scansTenant(p)).toBe(false)
  })

  test('one parent is an ordered walk of its index, with no sort', () => {
    const p = plan(new ListQuery('links', 't', 'link').parents('t.host_seq', [7]), 50)
    expect(p.join('\n')).toMatch(/USING (COVERING )?INDEX links_by_host \(host_seq=\? AND seq<\?\)/)
    expect(sorts(p)).toBe(false)
  })

  test('with several labels the rarest leads, and an unmatched label answers without a query', async () => {
    const a = store.jobs.create('t', { id: crypto.randomUUID(), name: 'a', config: {}, labels: { common: 'yes', rare: 'yes' } })
    for (let i = 0; i < 20; i++) store.jobs.create('t', { id: crypto.randomUUID(), name: `c${i}`, config: {}, labels: { common: 'yes' } })
    const q = () => new ListQuery('jobs', 't', 'job').labels({ common: 'yes', rare: 'yes' })
    const built = q().build(db, 't.seq', undefined, 10)!
    expect(built.params.slice(0, 4)).toEqual([3, 't', 'rare', 'yes'])
    expect(q().page(db, 't.id', undefined, 10, (r: { id: string }) => r.id).data).toEqual([a.id])
    expect(new ListQuery('jobs', 't', 'job').labels({ common: 'yes', absent: 'x' }).build(db, 't.seq', undefined, 10)).toBeNull()
  })
})
