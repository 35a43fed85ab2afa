import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteRepositories } from '../../src/store'
import type { ArtifactFilter, NewArtifact } from '../../src/store/artifacts'
import { openDatabase } from '../../src/store/db'

const dir = mkdtempSync(join(tmpdir(), 'trawl-artifacts-'))
const db = openDatabase(dir)
const store = createSqliteRepositories(db)
afterAll(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

// Artifacts are found by URL through the catalogue (migration 015): the engine catalogues a URL
// before its artifacts, and so do these tests.
const [PAGE_A, PAGE_B] = store.links.upsert('acme', ['https://example.com/a', 'https://example.com/b']).map((l) => l.hash)

const RUN = '00000000-0000-4000-8000-000000000001'
const OTHER_RUN = '00000000-0000-4000-8000-000000000002'
const T0 = Date.parse('2026-03-01T12:00:00.000Z')

function artifact(over: Partial<NewArtifact> = {}): NewArtifact {
  const id = crypto.randomUUID()
  return {
    tenant: 'acme',
    id,
    run_id: RUN,
    url_hash: PAGE_A!,
    blob_key: `artifacts/${id}`,
    kind: 'raw',
    pipeline_id: null,
    content_type: 'text/html; charset=utf-8',
    size: 42,
    checksum: 'xxh64:' + 'f'.repeat(16),
    created_at: T0,
    ...over,
  }
}
const count = () => (db.query('SELECT count(*) AS n FROM artifacts').get() as { n: number }).n

describe('artifact repository', () => {
  test('insert then get answers the API shape; another tenant sees nothing', () => {
    const a = artifact({ kind: 'parsed', pipeline_id: 'default', content_type: 'application/json', size: 7, url_hash: 'a'.repeat(32) })
    store.artifacts.insert(a)
    expect(store.artifacts.get('acme', a.id)).toEqual({
      id: a.id,
      run_id: RUN,
      url: null,
      url_hash: 'a'.repeat(32),
      blob_key: a.blob_key,
      kind: 'parsed',
      pipeline_id: 'default',
      content_type: 'application/json',
      size: 7,
      created_at: '2026-03-01T12:00:00.000Z',
    })
    expect(store.artifacts.get('other', a.id)).toBeNull()
    expect(store.artifacts.get('acme', crypto.randomUUID())).toBeNull()
  })

  test('ids are unique per tenant: a duplicate throws, the same id in another tenant does not', () => {
    const a = artifact()
    store.artifacts.insert(a)
    expect(() => store.artifacts.insert({ ...a, blob_key: 'x/1' })).toThrow()
    store.artifacts.insert({ ...a, tenant: 'other' })
    expect(store.artifacts.get('other', a.id)?.blob_key).toBe(a.blob_key)
  })

  test('insertMany writes every row of a batch past a full chunk, each with its own values and its link', () => {
    // 70 rows: two full statements of 32 and one of 6; every column must land on its own row.
    const rows = Array.from({ length: 70 }, (_, i) =>
      artifact({ run_id: OTHER_RUN, url_hash: i % 2 ? PAGE_A! : PAGE_B!, kind: i % 3 ? 'raw' : 'parsed', size: 1000 + i, created_at: T0 + i, source_url: i === 69 ? 'https://example.com/b' : null }),
    )
    const before = count()
    store.artifacts.insertMany(rows)
    expect(count()).toBe(before + 70)
    for (const [i, a] of rows.entries()) {
      const got = db.query('SELECT run_id, url_hash, kind, size, created_at, source_url, link_seq FROM artifacts WHERE tenant = ? AND id = ?').get('acme', a.id)
      const link = db.query('SELECT seq FROM links WHERE tenant = ? AND hash = ?').get('acme', a.url_hash) as { seq: number }
      expect(got).toEqual({ run_id: OTHER_RUN, url_hash: a.url_hash, kind: a.kind, size: 1000 + i, created_at: T0 + i, source_url: i === 69 ? 'https://example.com/b' : null, link_seq: link.seq })
    }
    // A duplicate id anywhere in a batch fails the whole statement: none of its rows are written.
    const dup = [artifact(), artifact(), rows[5]!]
    expect(() => store.transaction(() => store.artifacts.insertMany(dup))).toThrow()
    expect(count()).toBe(before + 70)
    for (const a of rows) db.query('DELETE FROM artifacts WHERE tenant = ? AND id = ?').run('acme', a.id)
  })

  test("insert joins the caller's transaction: a rollback leaves no row", () => {
    const before = count()
    const a = artifact()
    expect(() =>
      store.transaction(() => {
        store.artifacts.insert(a)
        throw new Error('engine batch failed')
      }),
    ).toThrow('engine batch failed')
    expect(count()).toBe(before)
    expect(store.artifacts.get('acme', a.id)).toBeNull()
  })

  test('delete answers the row once; another tenant cannot delete it', () => {
    const a = artifact()
    store.artifacts.insert(a)
    expect(store.artifacts.delete('other', a.id)).toBeNull()
    expect(store.artifacts.delete('acme', a.id)).toMatchObject({ id: a.id, blob_key: a.blob_key, created_at: '2026-03-01T12:00:00.000Z' })
    expect(store.artifacts.delete('acme', a.id)).toBeNull()
    expect(store.artifacts.get('acme', a.id)).toBeNull()
  })

  test('blobShared: another row, of any tenant, pointing at the same blob keeps it', () => {
    const a = artifact({ blob_key: 'shared/one' })
    const b = artifact({ tenant: 'other', blob_key: 'shared/one' })
    store.artifacts.insert(a)
    store.artifacts.insert(b)
    expect(store.artifacts.blobShared('acme', a)).toBe(true)
    store.artifacts.delete('other', b.id)
    expect(store.artifacts.blobShared('acme', a)).toBe(false)
  })

  test('deleteForRun removes the run’s rows and answers each blob key no row still points at', () => {
    const run = crypto.randomUUID()
    const mine = [artifact({ run_id: run }), artifact({ run_id: run, kind: 'parsed', pipeline_id: 'p' })]
    const sameBlobTwice = artifact({ run_id: run, blob_key: 'dup/key' })
    const sameBlobAgain = artifact({ run_id: run, blob_key: 'dup/key' })
    const keptElsewhere = artifact({ run_id: run, blob_key: 'kept/key' })
    const otherRun = artifact({ run_id: crypto.randomUUID(), blob_key: 'kept/key' })
    const otherTenant = artifact({ tenant: 'other', run_id: run })
    for (const a of [...mine, sameBlobTwice, sameBlobAgain, keptElsewhere, otherRun, otherTenant]) store.artifacts.insert(a)

    const keys = store.artifacts.deleteForRun('acme', run)
    expect(keys.sort()).toEqual([...mine.map((a) => a.blob_key), 'dup/key'].sort())
    expect(store.artifacts.list('acme', { run_ids: [run] }, undefined, 100).data).toEqual([])
    expect(store.artifacts.get('acme', otherRun.id)).not.toBeNull()
    expect(store.artifacts.get('other', otherTenant.id)).not.toBeNull()
    expect(store.artifacts.deleteForRun('acme', run)).toEqual([])
    expect(store.artifacts.deleteForRun('acme', crypto.randomUUID())).toEqual([])
  })

  test('list: newest first, content types matched on the media type', () => {
    const run = crypto.randomUUID()
    const rows = [
      artifact({ run_id: run, content_type: 'text/html; charset=UTF-8' }),
      artifact({ run_id: run, content_type: 'TEXT/HTML' }),
      artifact({ run_id: run, content_type: 'application/json' }),
    ]
    for (const a of rows) store.artifacts.insert(a)
    const ids = (f: ArtifactFilter) => store.artifacts.list('acme', { run_ids: [run], ...f }, undefined, 100).data.map((a) => a.id)
    expect(ids({})).toEqual(rows.map((a) => a.id).reverse())
    expect(ids({ content_types: ['text/html'] })).toEqual([rows[1]!.id, rows[0]!.id])
    expect(ids({ content_types: ['Text/HTML; charset=latin1'] })).toEqual([rows[1]!.id, rows[0]!.id])
    expect(ids({ content_types: ['application/json', 'image/png'] })).toEqual([rows[2]!.id])
  })
})

/** The query plan of a list page, as SQLite's EXPLAIN QUERY PLAN lines. */
function plan(f: ArtifactFilter, after?: number): string {
  const built = store.artifacts.query('acme', f).build(db, 't.seq', after, 10)
  if (!built) return '(no query)'
  return (db.query(`EXPLAIN QUERY PLAN ${built.sql}`).all(...built.params) as { detail: string }[]).map((r) => r.detail).join('\n')
}
const sorts = (p: string) => p.includes('TEMP B-TREE FOR ORDER BY')
const scansTenant = (p: string) => /INDEX artifacts_by_tenant/.test(p)

// A page is an ordered index walk or a lookup of a bounded set, never a test of every row.
describe('artifact list query plans', () => {
  test.each([
    ['no filter', {}, /SEARCH t USING (COVERING )?INDEX artifacts_by_tenant \(tenant=\? AND seq<\?\)/],
    ['one run', { run_ids: [RUN] }, /SEARCH t USING (COVERING )?INDEX artifacts_by_run \(tenant=\? AND run_id=\? AND seq<\?\)/],
    ['one url hash', { url_hashes: [PAGE_A!] }, /SEARCH t USING (COVERING )?INDEX artifacts_by_link \(link_seq=\? AND seq<\?\)/],
    ['one run and a kind', { run_ids: [RUN], kinds: ['raw'], created_after: '2026-01-01T00:00:00Z' }, /INDEX artifacts_by_run \(tenant=\? AND run_id=\? AND seq<\?\)/],
  ] as [string, ArtifactFilter, RegExp][])('an ordered walk with no sort: %s', (_name, f, expected) => {
    const p = plan(f, 500)
    expect(p).toMatch(expected)
    expect(sorts(p)).toBe(false)
  })

  test.each([
    ['several runs', { run_ids: [RUN, OTHER_RUN] }, /INDEX artifacts_by_run \(tenant=\? AND run_id=\?/],
    ['several url hashes', { url_hashes: [PAGE_A!, PAGE_B!] }, /INDEX artifacts_by_link \(link_seq=\?/],
    ['blob keys', { blob_keys: ['k/1'] }, /INDEX artifacts_by_blob \(blob_key=\? AND tenant=\?/],
    ['ids', { include_ids: [RUN] }, /INDEX sqlite_autoindex_artifacts_1 \(tenant=\? AND id=\?/],
    ['ids beside a run', { include_ids: [RUN], run_ids: [RUN, OTHER_RUN], kinds: ['raw'] }, /INDEX (sqlite_autoindex_artifacts_1|artifacts_by_run) \(tenant=\? AND (id|run_id)=\?/],
  ] as [string, ArtifactFilter, RegExp][])('a bounded lookup by its own index: %s', (_name, f, expected) => {
    const p = plan(f)
    expect(p).toMatch(expected)
    expect(scansTenant(p)).toBe(false)
  })

  test('the delete and blob checks use indexes', () => {
    const lines = (sql: string, ...params: string[]) => (db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('\n')
    expect(lines('SELECT 1 FROM artifacts WHERE blob_key = ? AND NOT (tenant = ? AND id = ?) LIMIT 1', 'k', 'acme', RUN)).toMatch(/INDEX artifacts_by_blob \(blob_key=\?\)/)
    expect(lines('DELETE FROM artifacts WHERE tenant = ? AND run_id = ?', 'acme', RUN)).toMatch(/INDEX artifacts_by_run \(tenant=\? AND run_id=\?\)/)
  })
})
