// Artifact rows on PostgreSQL: a crawl batch's rows in one statement inside its transaction,
// each with its own values and link; the lists and lookups the API reads them by.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import type { ArtifactFilter, NewArtifact } from '../../../src/store/artifacts'
import { insertArtifacts } from '../../../src/store/postgres/artifacts'
import { openPostgres } from '../../../src/store/postgres/open'
import { numeric } from '../../../src/store/postgres/pg'
import { postgresStore } from '../../../src/store/postgres/store'
import type { Store } from '../../../src/store/types'
import { clusterPort, freshDatabase } from '../../helpers/postgres'

let sql: SQL
let store: Store
let PAGE_A: string
let PAGE_B: string
// The throwaway cluster starts before the tests, which are timed without it.
beforeAll(async () => {
  clusterPort()
  sql = await openPostgres(freshDatabase())
  store = postgresStore(sql, { journalDir: null })
  // Artifacts are found by URL through the catalogue: the engine catalogues a URL before its artifacts.
  ;[PAGE_A, PAGE_B] = (await store.links.upsert('acme', ['https://example.com/a', 'https://example.com/b'])).map((l) => l.hash) as [string, string]
}, 120_000)
afterAll(() => sql.close())

const RUN = '00000000-0000-4000-8000-000000000001'
const T0 = Date.parse('2026-03-01T12:00:00.000Z')

function artifact(over: Partial<NewArtifact> = {}): NewArtifact {
  const id = crypto.randomUUID()
  return {
    tenant: 'acme',
    id,
    run_id: RUN,
    url_hash: PAGE_A,
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
const insert = (rows: NewArtifact[]) => sql.begin((tx) => insertArtifacts(tx, rows))
const count = async () => numeric<{ n: number }>(await sql`SELECT count(*) AS n FROM artifacts`)[0]!.n
const ids = async (f: ArtifactFilter) => (await store.artifacts.list('acme', f, undefined, 200)).data.map((a) => a.id)

describe('artifact rows on PostgreSQL', () => {
  test('a batch goes in whole, each row with its own values and its link; a list shows it newest first', async () => {
    const run = crypto.randomUUID()
    const rows = Array.from({ length: 70 }, (_, i) =>
      artifact({
        run_id: run,
        url_hash: i % 2 ? PAGE_A : PAGE_B,
        kind: i % 3 ? 'raw' : 'parsed',
        pipeline_id: i % 3 ? null : 'p',
        size: 1000 + i,
        created_at: T0 + i,
        source_url: i === 69 ? 'https://example.com/b' : null,
      }),
    )
    await insert(rows)
    const links = new Map(numeric<{ hash: string; seq: number }>(await sql`SELECT hash, seq FROM links`).map((l) => [l.hash, l.seq]))
    const stored = numeric<Record<string, unknown>>(
      await sql`SELECT id, url_hash, kind, pipeline_id, size, created_at, source_url, link_seq, checksum FROM artifacts WHERE run_id = ${run} ORDER BY seq`,
    )
    expect(stored).toEqual(
      rows.map((a) => ({
        id: a.id,
        url_hash: a.url_hash,
        kind: a.kind,
        pipeline_id: a.pipeline_id,
        size: a.size,
        created_at: a.created_at,
        source_url: a.source_url,
        link_seq: links.get(a.url_hash)!,
        checksum: a.checksum,
      })),
    )
    expect(await ids({ run_ids: [run] })).toEqual(rows.map((a) => a.id).reverse())
    expect((await store.artifacts.get('acme', rows[1]!.id))!.url).toBe('https://example.com/a')
    expect(await store.artifacts.source('acme', rows[69]!.id)).toBe('https://example.com/b')
  })

  test('a duplicate id anywhere in a batch fails it whole; a failed transaction leaves no row', async () => {
    const a = artifact()
    await insert([a])
    const before = await count()
    await expect(insert([artifact(), artifact(), { ...a, blob_key: 'x/1' }])).rejects.toThrow()
    const b = artifact()
    await expect(
      sql.begin(async (tx) => {
        await insertArtifacts(tx, [b])
        throw new Error('engine batch failed')
      }),
    ).rejects.toThrow('engine batch failed')
    expect(await count()).toBe(before)
    expect(await store.artifacts.get('acme', b.id)).toBeNull()
    // Another tenant may use the id.
    await insert([{ ...a, tenant: 'other' }])
    expect((await store.artifacts.get('other', a.id))!.blob_key).toBe(a.blob_key)
  })

  test('a URL not in the catalogue: no link, no URL; found by no url_hashes filter', async () => {
    const a = artifact({ url_hash: 'a'.repeat(32) })
    await insert([a])
    expect(await store.artifacts.get('acme', a.id)).toMatchObject({ url: null, url_hash: 'a'.repeat(32) })
    expect(await ids({ url_hashes: ['a'.repeat(32)] })).toEqual([])
    expect(await store.artifacts.forUrls('acme', RUN, ['a'.repeat(32)])).toEqual([])
  })

  test('filters: one or several URLs, kinds, pipelines, blob keys, media types, time; forUrls oldest first', async () => {
    const run = crypto.randomUUID()
    const rows = [
      artifact({ run_id: run, content_type: 'text/html; charset=UTF-8' }),
      artifact({ run_id: run, content_type: ' TEXT/HTML ', url_hash: PAGE_B, created_at: T0 + 1000 }),
      artifact({ run_id: run, content_type: 'application/json', kind: 'parsed', pipeline_id: 'p', blob_key: 'shared/k' }),
    ]
    await insert(rows)
    const [html, upper, json] = rows.map((a) => a.id) as [string, string, string]
    expect(await ids({ run_ids: [run], content_types: ['text/html'] })).toEqual([upper, html])
    expect(await ids({ run_ids: [run], content_types: ['Text/HTML; charset=latin1'] })).toEqual([upper, html])
    expect(await ids({ run_ids: [run], content_types: ['application/json', 'image/png'] })).toEqual([json])
    expect(await ids({ run_ids: [run], url_hashes: [PAGE_B] })).toEqual([upper])
    expect(await ids({ run_ids: [run, crypto.randomUUID()], url_hashes: [PAGE_A, PAGE_B] })).toEqual([json, upper, html])
    expect(await ids({ run_ids: [run], kinds: ['parsed'], pipeline_ids: ['p'] })).toEqual([json])
    expect(await ids({ blob_keys: ['shared/k'] })).toEqual([json])
    expect(await ids({ run_ids: [run], created_after: new Date(T0).toISOString() })).toEqual([upper])
    expect(await ids({ run_ids: [run], created_before: new Date(T0 + 1000).toISOString(), exclude_ids: [html] })).toEqual([json])
    expect((await store.artifacts.forUrls('acme', run, [PAGE_A, PAGE_B])).map((a) => a.id)).toEqual([html, upper, json])
    expect(await store.artifacts.claimed(['shared/k', 'none'])).toEqual(new Set(['shared/k']))
    expect(await store.artifacts.claimed([])).toEqual(new Set())
  })

  test('delete answers the row with its URL, once; body deletions are asked once a run, oldest first', async () => {
    const a = artifact()
    await insert([a])
    expect(await store.artifacts.delete('other', a.id)).toBeNull()
    expect(await store.artifacts.delete('acme', a.id)).toMatchObject({ id: a.id, url: 'https://example.com/a', created_at: '2026-03-01T12:00:00.000Z', size: 42 })
    expect(await store.artifacts.delete('acme', a.id)).toBeNull()

    const { job, run } = await store.jobs.create('acme', { id: crypto.randomUUID(), name: 'j', config: {}, labels: {} }, { id: crypto.randomUUID(), config: {} })
    const second = await store.runs.create('acme', job.id, { id: crypto.randomUUID(), config: {} })
    await insert([artifact({ run_id: run!.id }), artifact({ run_id: second!.id })])
    expect(await store.runs.delete('acme', run!.id)).toBe(true)
    await Bun.sleep(2)
    expect(await store.jobs.delete('acme', job.id)).toEqual([second!.id])
    expect(await store.artifacts.pendingBodyDeletions()).toEqual([run!.id, second!.id])
    expect(await ids({ run_ids: [run!.id, second!.id] })).toEqual([])
    await store.artifacts.bodyDeletionDone(run!.id)
    expect(await store.artifacts.pendingBodyDeletions()).toEqual([second!.id])
  })
})
