/**
 * The artifacts endpoints and the crawl engine's artifact tests with the S3 blob store: the
 * same test files, unchanged, run in a child `bun test` with TRAWL_BLOB_URL pointing at a real
 * S3-compatible server (s3rver under node); and what DELETE does, checked on that server.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { S3BlobStore } from '../../src/blob'
import { job, testApi, testEngine, type TestApi } from '../helpers/api'
import { startS3Server, type S3TestServer } from '../helpers/s3-server'

const ROOT = join(import.meta.dir, '../..')
/** The test files that store, serve and clean up artifacts, run as they are against S3. */
const UNCHANGED = ['test/api/artifacts.test.ts', 'test/crawl/engine-records.test.ts', 'test/crawl/engine-interrupted.test.ts', 'test/crawl/derived-parsed.test.ts']
/** Those that reach into the SQLite engine (its fetch journal files and rows): run on SQLite only. */
const SQLITE_ONLY = ['test/crawl/engine-interrupted.test.ts']
// The child runs on this run's engine (TRAWL_TEST_ENGINE, inherited).
const FILES = testEngine() === 'sqlite' ? UNCHANGED : UNCHANGED.filter((f) => !SQLITE_ONLY.includes(f))

let server: S3TestServer
beforeAll(async () => {
  server = await startS3Server()
})
afterAll(async () => {
  await server?.stop()
})

describe('with TRAWL_BLOB_URL pointing at the S3 server', () => {
  test('the artifact API tests and the engine’s artifact tests pass unchanged', async () => {
    const prefix = `unchanged-${crypto.randomUUID()}`
    const child = Bun.spawn([process.execPath, 'test', ...FILES], {
      cwd: ROOT,
      env: { ...process.env, ...server.env(prefix) },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    const report = `${out}\n${err}`
    const count = (what: 'pass' | 'fail') => Number(new RegExp(`^\\s*(\\d+) ${what}$`, 'm').exec(report)?.[1] ?? NaN)
    if (code !== 0) console.error(report.slice(-6000))
    expect(code).toBe(0)
    expect(count('fail')).toBe(0)
    expect(count('pass')).toBeGreaterThanOrEqual(40)
    // They went to S3: the engine's blobs and the API tests' are objects there (runs/<run>/<id>);
    // the engine's artifact ids are time-ordered (v7) uuids, the API tests' random (v4) ones.
    const keys = await server.keys(`${prefix}/`)
    const version = (k: string) => k.split('/').at(-1)!.charAt(14)
    expect(keys.every((k) => k.startsWith(`${prefix}/runs/`))).toBe(true)
    expect(keys.some((k) => version(k) === '7')).toBe(true)
    expect(keys.some((k) => version(k) === '4')).toBe(true)
  }, 120_000)
})

describe('DELETE on the S3 server', () => {
  let api: TestApi
  let prefix: string
  let run: string
  beforeAll(async () => {
    prefix = `api-${crypto.randomUUID()}`
    api = testApi(server.env(prefix))
    run = (await api.post('/v1/jobs?create_run=true', job())).body.run.id
  })
  afterAll(() => api?.close())

  /** Puts a body and records its artifact, as the engine does. */
  async function record(body: Uint8Array, runId = run) {
    const id = crypto.randomUUID()
    const blob_key = `runs/${runId}/${id}`
    const info = await api.blobs.put(blob_key, body, 'text/html')
    await api.insertArtifact({
      tenant: 'acme',
      id,
      run_id: runId,
      url_hash: 'a'.repeat(32),
      blob_key,
      kind: 'raw',
      pipeline_id: null,
      content_type: 'text/html',
      size: info.size,
      checksum: info.checksum,
      created_at: Date.now(),
    })
    return { id, object: `${prefix}/${blob_key}` }
  }

  test('the test API uses the S3 store', () => {
    expect(api.blobs).toBeInstanceOf(S3BlobStore)
  })

  test('DELETE /v1/artifacts/{id} removes the object from the server', async () => {
    const a = await record(new TextEncoder().encode('<p>a</p>'))
    const b = await record(new TextEncoder().encode('<p>b</p>'))
    expect(await server.keys(`${prefix}/`)).toEqual([a.object, b.object].sort())
    const blob = await api.get(`/v1/artifacts/${a.id}/blob`)
    expect(blob.status).toBe(200)
    expect(blob.text).toBe('<p>a</p>')

    expect((await api.del(`/v1/artifacts/${a.id}`)).status).toBe(204)
    expect(await server.keys(`${prefix}/`)).toEqual([b.object])
    expect(await server.client().exists(a.object)).toBe(false)
    expect((await api.get(`/v1/artifacts/${a.id}/blob`)).status).toBe(404)
    expect((await api.get(`/v1/artifacts/${b.id}/blob`)).text).toBe('<p>b</p>')
  })

  test('DELETE of a run removes its objects from the server, and only its', async () => {
    const other = (await api.post('/v1/jobs?create_run=true', job())).body.run.id
    const mine = [await record(new Uint8Array(10).fill(1), other), await record(new Uint8Array(6 * 1024 * 1024).fill(2), other)]
    const before = await server.keys(`${prefix}/`)
    expect(before).toEqual(expect.arrayContaining(mine.map((m) => m.object)))
    expect((await api.del(`/v1/runs/${other}`)).status).toBe(204)
    expect(await server.keys(`${prefix}/`)).toEqual(before.filter((k) => !mine.some((m) => m.object === k)))
  })

  test('DELETE of a run removes its objects that have no artifact row, and those with no index row either', async () => {
    const other = (await api.post('/v1/jobs?create_run=true', job())).body.run.id
    const kept = await record(new Uint8Array(10).fill(3))
    // Put through the store but never catalogued (a crash before the row's commit) …
    await api.blobs.put(`runs/${other}/${crypto.randomUUID()}`, new Uint8Array(4), 'text/html')
    // … and written to the bucket with no index row either (a crash before the index's commit).
    await server.client().write(`${prefix}/runs/${other}/${crypto.randomUUID()}`, 'raw object')
    expect(await server.keys(`${prefix}/runs/${other}/`)).toHaveLength(2)
    expect((await api.del(`/v1/runs/${other}`)).status).toBe(204)
    expect(await server.keys(`${prefix}/runs/${other}/`)).toEqual([])
    expect(await server.client().exists(kept.object)).toBe(true)
  })
})
