import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { checksumOf } from '../../src/blob/checksum'
import { linkHash } from '../../src/core/url'
import type { NewArtifact } from '../../src/store/artifacts'
import { job, qs, testApi, type TestApi } from '../helpers/api'
import { Runner } from '../../src/crawl/runner'
import { createLogger } from '../../src/log'
import { waitFor } from '../helpers/wait'

let api: TestApi
let runA: string
let runB: string
let otherRun: string
const T0 = Date.parse('2026-03-01T12:00:00.000Z')
// The artifacts' URLs are in the catalogue, as the engine puts them there first (migration 015:
// an artifact is found by URL through its link).
const urlA = 'https://example.com/a'
const urlB = 'https://example.com/b'
const hashA = linkHash(urlA)
const hashB = linkHash(urlB)

// A 1x1 PNG, with bytes that are not valid UTF-8, so a text round trip would corrupt it.
const PNG = Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'))

/** Stores `body` as a blob and records its artifact, as the engine does. */
async function record(over: Partial<NewArtifact> & { body?: Uint8Array } = {}): Promise<NewArtifact> {
  const id = over.id ?? crypto.randomUUID()
  const { body = new TextEncoder().encode(`<p>${id}</p>`), ...rest } = over
  const row: NewArtifact = {
    tenant: 'acme',
    id,
    run_id: runA,
    url_hash: hashA,
    blob_key: `runs/${rest.run_id ?? runA}/${id}`,
    kind: 'raw',
    pipeline_id: null,
    content_type: 'text/html; charset=utf-8',
    size: 0,
    checksum: '',
    created_at: T0,
    ...rest,
  }
  const info = await api.blobs.put(row.blob_key, body, row.content_type)
  const stored = { ...row, size: info.size, checksum: info.checksum }
  await api.insertArtifact(stored)
  return stored
}

const newRun = async (tenant = 'acme') => (await api.post('/v1/jobs?create_run=true', job(), { tenant })).body.run.id as string

beforeAll(async () => {
  api = testApi()
  for (const tenant of ['acme', 'other']) await api.store.links.upsert(tenant, [urlA, urlB])
  runA = await newRun()
  runB = await newRun()
  otherRun = await newRun('other')
})
afterAll(() => api.close())

describe('GET /v1/artifacts', () => {
  let rows: NewArtifact[]
  beforeAll(async () => {
    rows = [
      await record({ created_at: T0 }),
      await record({ kind: 'parsed', pipeline_id: 'default', content_type: 'application/json', created_at: T0 + 1000 }),
      await record({ kind: 'parsed', pipeline_id: 'articles', content_type: 'application/json', created_at: T0 + 2000, url_hash: hashB }),
      await record({ kind: 'asset', content_type: 'image/png', body: PNG, created_at: T0 + 3000, run_id: runB, url_hash: hashB }),
      await record({ created_at: T0 + 4000, run_id: runB }),
    ]
    await record({ tenant: 'other', run_id: otherRun, created_at: T0 + 5000 })
  })
  const ids = async (q: [string, string | number][]) => {
    const r = await api.get(`/v1/artifacts${qs([['per_page', 100], ['run_ids', runA], ['run_ids', runB], ...q])}`)
    expect(r.status).toBe(200)
    return r.body.data.map((a: any) => rows.findIndex((x) => x.id === a.id))
  }

  test('an artifact of a URL the catalogue lacks: listed with url null, found by run but not by url_hashes', async () => {
    const run = await newRun('lost')
    const lost = 'c'.repeat(32)
    const a = await record({ tenant: 'lost', run_id: run, url_hash: lost, created_at: T0 + 500 })
    const r = await api.get(`/v1/artifacts?run_ids=${run}`, { tenant: 'lost' })
    expect(r.body.data).toEqual([expect.objectContaining({ id: a.id, url: null, url_hash: lost })])
    expect((await api.get(`/v1/artifacts?run_ids=${run}&url_hashes=${lost}`, { tenant: 'lost' })).body.data).toEqual([])
  })

  test('answers the artifact shape, newest first, this tenant only', async () => {
    const r = await api.get('/v1/artifacts?per_page=2')
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual([
      {
        id: rows[4]!.id,
        run_id: runB,
        url: urlA,
        url_hash: hashA,
        blob_key: rows[4]!.blob_key,
        kind: 'raw',
        pipeline_id: null,
        content_type: 'text/html; charset=utf-8',
        size: rows[4]!.size,
        created_at: '2026-03-01T12:00:04.000Z',
      },
      expect.objectContaining({ id: rows[3]!.id, kind: 'asset', content_type: 'image/png', size: PNG.byteLength }),
    ])
    expect(r.body.next_page).toEqual(expect.any(String))
    const other = await api.get('/v1/artifacts', { tenant: 'other' })
    expect(other.body.data.map((a: any) => a.run_id)).toEqual([otherRun])
  })

  test('every filter', async () => {
    expect(await ids([])).toEqual([4, 3, 2, 1, 0])
    expect(
      await ids([
        ['include_ids', rows[1]!.id],
        ['include_ids', rows[3]!.id],
      ]),
    ).toEqual([3, 1])
    expect(
      await ids([
        ['exclude_ids', rows[1]!.id],
        ['exclude_ids', rows[3]!.id],
      ]),
    ).toEqual([4, 2, 0])
    expect((await api.get(`/v1/artifacts${qs([['run_ids', runB]])}`)).body.data.map((a: any) => a.id)).toEqual([rows[4]!.id, rows[3]!.id])
    expect(await ids([['url_hashes', hashB]])).toEqual([3, 2])
    expect(
      await ids([
        ['url_hashes', hashB],
        ['url_hashes', hashA],
      ]),
    ).toEqual([4, 3, 2, 1, 0])
    expect(
      await ids([
        ['blob_keys', rows[0]!.blob_key],
        ['blob_keys', rows[4]!.blob_key],
      ]),
    ).toEqual([4, 0])
    expect(await ids([['kinds', 'parsed']])).toEqual([2, 1])
    expect(
      await ids([
        ['kinds', 'raw'],
        ['kinds', 'asset'],
      ]),
    ).toEqual([4, 3, 0])
    expect(await ids([['pipeline_ids', 'articles']])).toEqual([2])
    expect(await ids([['content_types', 'text/html']])).toEqual([4, 0])
    expect(
      await ids([
        ['content_types', 'image/png'],
        ['content_types', 'application/json'],
      ]),
    ).toEqual([3, 2, 1])
    expect(await ids([['created_after', '2026-03-01T12:00:01Z']])).toEqual([4, 3, 2])
    expect(await ids([['created_before', '2026-03-01T12:00:01Z']])).toEqual([0])
    expect(await ids([['created_after', '2026-03-01T13:00:00+01:00']])).toEqual([4, 3, 2, 1])
    // filters combine with AND
    expect(
      await ids([
        ['kinds', 'parsed'],
        ['url_hashes', hashA],
      ]),
    ).toEqual([1])
    expect(
      await ids([
        ['run_ids', runB],
        ['kinds', 'parsed'],
      ]),
    ).toEqual([2, 1])
    expect(
      (
        await api.get(
          `/v1/artifacts${qs([
            ['run_ids', runB],
            ['kinds', 'parsed'],
          ])}`,
        )
      ).body.data,
    ).toEqual([])
    // another tenant's run, ids and keys match nothing here
    expect((await api.get(`/v1/artifacts${qs([['run_ids', otherRun]])}`)).body.data).toEqual([])
  })

  test.each([
    [[['per_page', '0']], 'per_page', 'must be >= 1'],
    [[['per_page', '101']], 'per_page', 'must be <= 100'],
    [[['page', 'nope']], 'page', 'is not a cursor this service issued'],
    [[['kinds', 'html']], 'kinds[0]', 'must be one of "raw", "parsed", "asset"'],
    [[['run_ids', 'r1']], 'run_ids[0]', 'must be a uuid'],
    [
      [
        ['include_ids', crypto.randomUUID()],
        ['include_ids', 'x'],
      ],
      'include_ids[1]',
      'must be a uuid',
    ],
    [[['url_hashes', 'XYZ']], 'url_hashes[0]', 'must be 32 lowercase hex characters'],
    [[['created_after', 'yesterday']], 'created_after', 'must be an RFC 3339 date-time'],
    [[['blob_keys', '']], 'blob_keys[0]', 'must not be empty'],
    [[['kind', 'raw']], 'kind', 'is not a known query parameter'],
  ] as [[string, string][], string, string][])('%j is a 422 on %s', async (q, field, message) => {
    const r = await api.get(`/v1/artifacts${qs(q)}`)
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ error: 'validation', fields: [{ field, errors: [message] }] })
  })
})

describe('one artifact', () => {
  test('GET answers it; 404 when unknown or another tenant’s; 422 for a malformed id', async () => {
    // The artifact carries the URL of its hash, read from the link catalogue.
    const link = (await api.put('/v1/links', { urls: ['https://example.com/a?b=1'] })).body.data[0]
    const a = await record({ kind: 'parsed', pipeline_id: 'p1', content_type: 'application/json', body: new TextEncoder().encode('{"a":1}'), url_hash: link.hash })
    const r = await api.get(`/v1/artifacts/${a.id}`)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      id: a.id,
      run_id: runA,
      url: 'https://example.com/a?b=1',
      url_hash: link.hash,
      blob_key: a.blob_key,
      kind: 'parsed',
      pipeline_id: 'p1',
      content_type: 'application/json',
      size: 7,
      created_at: '2026-03-01T12:00:00.000Z',
    })
    expect((await api.get(`/v1/artifacts/${a.id}`, { tenant: 'other' })).body).toEqual({ error: 'not_found', message: 'artifact not found' })
    expect((await api.get(`/v1/artifacts/${crypto.randomUUID()}`)).status).toBe(404)
    const bad = await api.get('/v1/artifacts/123')
    expect(bad.status).toBe(422)
    expect(bad.body.fields).toEqual([{ field: 'artifact_id', errors: ['must be a uuid'] }])
  })

  test('DELETE removes the blob, then the row: 204, then 404', async () => {
    const a = await record()
    expect(await api.blobs.head(a.blob_key)).not.toBeNull()
    expect((await api.del(`/v1/artifacts/${a.id}`, { tenant: 'other' })).status).toBe(404)
    expect(await api.blobs.head(a.blob_key)).not.toBeNull()

    const r = await api.del(`/v1/artifacts/${a.id}`)
    expect(r.status).toBe(204)
    expect(r.text).toBe('')
    expect(await api.blobs.head(a.blob_key)).toBeNull()
    expect((await api.get(`/v1/artifacts/${a.id}`)).status).toBe(404)
    expect((await api.del(`/v1/artifacts/${a.id}`)).body).toEqual({ error: 'not_found', message: 'artifact not found' })
  })

  test('DELETE keeps a blob that another artifact still points at', async () => {
    const a = await record()
    const twin = { ...a, id: crypto.randomUUID() }
    await api.insertArtifact(twin)
    expect((await api.del(`/v1/artifacts/${a.id}`)).status).toBe(204)
    expect(await api.blobs.head(a.blob_key)).not.toBeNull()
    expect((await api.del(`/v1/artifacts/${twin.id}`)).status).toBe(204)
    expect(await api.blobs.head(a.blob_key)).toBeNull()
  })

  test('DELETE of an artifact whose blob is already gone still removes the row', async () => {
    const a = await record()
    await api.blobs.delete(a.blob_key)
    expect((await api.del(`/v1/artifacts/${a.id}`)).status).toBe(204)
    expect(await api.store.artifacts.get('acme', a.id)).toBeNull()
  })
})

describe('GET /v1/artifacts/{artifact_id}/blob', () => {
  test('answers the exact bytes with the artifact’s content type and length', async () => {
    const a = await record({ kind: 'asset', content_type: 'image/png', body: PNG })
    const res = await api.app.handle(new Request(`http://trawl.test/v1/artifacts/${a.id}/blob`, { headers: { 'x-tenant-id': 'acme' } }))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    expect(res.headers.get('content-length')).toBe(String(PNG.byteLength))
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(PNG)
  })

  test('the content type is the artifact’s own, parameters included', async () => {
    const html = new TextEncoder().encode('<p>héllo</p>')
    const a = await record({ body: html, content_type: 'text/html; charset=utf-8' })
    const r = await api.get(`/v1/artifacts/${a.id}/blob`)
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(r.text).toBe('<p>héllo</p>')
  })

  test('a body stored as a file (over 256 KiB) streams through whole', async () => {
    const big = new Uint8Array(1_500_000)
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251
    const a = await record({ kind: 'raw', content_type: 'application/octet-stream', body: big })
    const res = await api.app.handle(new Request(`http://trawl.test/v1/artifacts/${a.id}/blob`, { headers: { 'x-tenant-id': 'acme' } }))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-length')).toBe('1500000')
    // streamed in the store's chunks, not read whole first
    const reader = res.body!.getReader()
    const chunks: Uint8Array[] = []
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value)
    expect(chunks.length).toBeGreaterThan(1)
    expect(Math.max(...chunks.map((c) => c.byteLength))).toBeLessThanOrEqual(256 * 1024)
    const got = Buffer.concat(chunks)
    expect(got.byteLength).toBe(big.byteLength)
    expect(checksumOf(got)).toBe(a.checksum)
  })

  test('over a real socket: a small blob carries Content-Length, a large one arrives whole', async () => {
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (req) => api.app.handle(req) })
    try {
      const small = await record({ kind: 'asset', content_type: 'image/png', body: PNG })
      const r1 = await fetch(`${server.url}v1/artifacts/${small.id}/blob`, { headers: { 'x-tenant-id': 'acme' } })
      expect(r1.headers.get('content-length')).toBe(String(PNG.byteLength))
      expect(new Uint8Array(await r1.arrayBuffer())).toEqual(PNG)
      const big = new Uint8Array(700_000).fill(3)
      const large = await record({ body: big, content_type: 'application/octet-stream' })
      const r2 = await fetch(`${server.url}v1/artifacts/${large.id}/blob`, { headers: { 'x-tenant-id': 'acme' } })
      expect(r2.headers.get('content-type')).toBe('application/octet-stream')
      expect((await r2.arrayBuffer()).byteLength).toBe(700_000)
    } finally {
      server.stop(true)
    }
  })

  test('404 JSON for an unknown artifact, another tenant’s, or a missing blob', async () => {
    const a = await record()
    expect((await api.get(`/v1/artifacts/${crypto.randomUUID()}/blob`)).body).toEqual({ error: 'not_found', message: 'artifact not found' })
    const other = await api.get(`/v1/artifacts/${a.id}/blob`, { tenant: 'other' })
    expect(other.status).toBe(404)
    expect(other.headers.get('content-type')).toContain('application/json')
    await api.blobs.delete(a.blob_key)
    const gone = await api.get(`/v1/artifacts/${a.id}/blob`)
    expect(gone.status).toBe(404)
    expect(gone.body).toEqual({ error: 'not_found', message: 'artifact content not found' })
    // a key no store accepts names no blob
    const bad = { ...a, id: crypto.randomUUID(), blob_key: '../escape' }
    await api.insertArtifact(bad)
    expect((await api.get(`/v1/artifacts/${bad.id}/blob`)).status).toBe(404)
    expect((await api.del(`/v1/artifacts/${bad.id}`)).status).toBe(204)
  })
})

describe('pagination', () => {
  test('walks 250 artifacts of a run, newest first, each exactly once, also under a kind filter', async () => {
    const run = await newRun()
    const made: string[] = []
    const rows: NewArtifact[] = []
    for (let i = 0; i < 250; i++) {
      const id = crypto.randomUUID()
      made.push(id)
      rows.push({
        tenant: 'acme',
        id,
        run_id: run,
        url_hash: hashA,
        blob_key: `p/${id}`,
        kind: i % 2 ? 'parsed' : 'raw',
        pipeline_id: i % 2 ? 'default' : null,
        content_type: 'text/html',
        size: 1,
        checksum: '0',
        created_at: T0 + i,
      })
      if (i % 25 === 0)
        rows.push({
          tenant: 'other',
          id,
          run_id: run,
          url_hash: hashA,
          blob_key: `q/${id}`,
          kind: 'raw',
          pipeline_id: null,
          content_type: 'text/html',
          size: 1,
          checksum: '0',
          created_at: T0,
        })
    }
    await api.insertArtifacts(rows)
    const walk = async (extra: string, path = `/v1/artifacts?run_ids=${run}&per_page=9`) => {
      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const r = await api.get(`${path}${extra}${cursor ? `&page=${cursor}` : ''}`)
        expect(r.status).toBe(200)
        seen.push(...r.body.data.map((a: any) => a.id))
        cursor = r.body.next_page
        pages++
      } while (cursor)
      return { seen, pages }
    }
    const all = await walk('')
    expect(all.seen).toEqual([...made].reverse())
    expect(all.pages).toBe(28)
    const parsed = await walk('&kinds=parsed')
    expect(parsed.seen).toEqual(made.filter((_, i) => i % 2).reverse())
    // the tenant-wide list pages the same way, past the rows of the other tests
    const everything = await walk('', '/v1/artifacts?per_page=100')
    const total = await api.count('artifacts', 'tenant = ?', ['acme'])
    expect(everything.seen.slice(0, 250)).toEqual([...made].reverse())
    expect(new Set(everything.seen).size).toBe(total)
  })
})

describe('a deleted run’s artifacts', () => {
  test('DELETE of the run removes its artifact rows and their blobs; other runs keep theirs', async () => {
    const run = await newRun()
    const mine = [await record({ run_id: run }), await record({ run_id: run, kind: 'asset', content_type: 'image/png', body: PNG })]
    const kept = await record({ run_id: runB })
    for (const a of mine) expect(await api.blobs.head(a.blob_key)).not.toBeNull()
    expect((await api.del(`/v1/runs/${run}`)).status).toBe(204)
    expect(await api.count('artifacts', 'tenant = ? AND run_id = ?', ['acme', run])).toBe(0)
    for (const a of mine) {
      expect(await api.blobs.head(a.blob_key)).toBeNull()
      expect((await api.get(`/v1/artifacts/${a.id}`)).status).toBe(404)
    }
    expect((await api.get(`/v1/artifacts${qs([['run_ids', run]])}`)).body.data).toEqual([])
    expect((await api.get(`/v1/artifacts/${kept.id}/blob`)).status).toBe(200)
  })

  test('DELETE of the run removes every body under it, rows or not; another run’s bodies stay', async () => {
    const run = await newRun()
    const withRow = await record({ run_id: run })
    // Bodies a crash left without rows: put, never catalogued.
    const rowless = [`runs/${run}/${crypto.randomUUID()}`, `runs/${run}/${crypto.randomUUID()}`]
    for (const key of rowless) await api.blobs.put(key, new TextEncoder().encode('left over'), 'text/html')
    const neighbour = `runs/${runB}/${crypto.randomUUID()}`
    await api.blobs.put(neighbour, new TextEncoder().encode('not this run'), 'text/html')
    expect((await api.del(`/v1/runs/${run}`)).status).toBe(204)
    expect(await api.blobs.list(`runs/${run}/`, null, 1000)).toEqual([])
    expect(await api.blobs.head(withRow.blob_key)).toBeNull()
    expect(await api.blobs.head(neighbour)).not.toBeNull()
    // Done: no deletion is left to finish.
    expect(await api.store.artifacts.pendingBodyDeletions()).toEqual([])
  })

  test('a body deletion a stopped process did not finish is finished by the next runner’s start', async () => {
    const run = await newRun()
    const keys = [`runs/${run}/${crypto.randomUUID()}`, `runs/${run}/${crypto.randomUUID()}`]
    for (const key of keys) await api.blobs.put(key, new TextEncoder().encode('x'), 'text/html')
    // What the run's delete committed before the process stopped: the rows gone, the request
    // kept (the store's delete is that one transaction; the route deletes the bodies after it).
    expect(await api.store.runs.delete('acme', run)).toBe(true)
    expect(await api.store.artifacts.pendingBodyDeletions()).toEqual([run])
    // A runner for no run (only: -1): its start-up sweep is all it does here.
    const runner = new Runner({ store: api.store, fetcher: api.fetcher, parser: api.parser, blobs: api.blobs, log: createLogger('error', () => {}) }, 1, -1)
    runner.start()
    await waitFor('the deletion to be finished', async () => (await api.store.artifacts.pendingBodyDeletions()).length === 0, 5_000)
    await runner.stop()
    expect(await api.blobs.list(`runs/${run}/`, null, 1000)).toEqual([])
  })

  test('DELETE of a job removes the artifacts and blobs of all its runs', async () => {
    const job = await api.post('/v1/jobs?create_run=true', { name: 'gone', config: { seeds: ['https://example.com/'] } })
    const runId = job.body.run.id
    const second = (await api.post(`/v1/jobs/${job.body.id}/runs`, {})).body.id
    const mine = [await record({ run_id: runId }), await record({ run_id: second })]
    const kept = await record({ run_id: runB })
    expect((await api.del(`/v1/jobs/${job.body.id}`)).status).toBe(204)
    for (const a of mine) {
      expect(await api.blobs.head(a.blob_key)).toBeNull()
      expect((await api.get(`/v1/artifacts/${a.id}`)).status).toBe(404)
    }
    expect((await api.get(`/v1/artifacts/${kept.id}/blob`)).status).toBe(200)
  })
})
