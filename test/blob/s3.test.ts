import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { join } from 'node:path'
import { BlobError, openBlobStore, S3BlobStore, type IndexRow, type S3BlobStoreOptions, type S3IndexOpener } from '../../src/blob'
import { openPostgres } from '../../src/store/postgres/open'
import { numeric, type Pg } from '../../src/store/postgres/pg'
import { pgS3Index } from '../../src/store/postgres/s3-index'
import { freshDatabase } from '../helpers/postgres'
import { startS3Server, type S3TestServer } from '../helpers/s3-server'
import { bodyOf, checksumOf, failingStream, readAll, streamOf } from './bodies'
import { blobStoreContract, expectBlobError } from './contract'

const MiB = 1024 * 1024
let server: S3TestServer
let pg: Pg
const dirs: string[] = []
beforeAll(async () => {
  server = await startS3Server(['trawl-test', 'other-bucket'])
  pg = await openPostgres(freshDatabase())
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await pg?.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'trawl-s3blob-'))
  dirs.push(d)
  return d
}

/**
 * Where the index is: blobs-s3.db in the data dir (the SQLite engine's), or the s3_objects table
 * of a PostgreSQL database (that engine's, shared by every process on the database). Every test
 * of the store on the server runs on both.
 */
type IndexKind = {
  name: string
  opener: () => S3IndexOpener | undefined
  /** The index's rows under a name prefix (`bucket/prefix/`), as stored. */
  rows: (dir: string, under: string) => Promise<({ name: string } & IndexRow)[]>
  /** Whether a store on another data dir reads the same index (PostgreSQL), or the data dir's own (SQLite). */
  shared: boolean
}
const INDEXES: IndexKind[] = [
  {
    name: 'blobs-s3.db',
    opener: () => undefined,
    async rows(dir, under) {
      const db = new Database(join(dir, 'blobs-s3.db'), { readonly: true })
      try {
        return db.query<{ name: string } & IndexRow, [string]>('SELECT name, size, checksum, content_type FROM objects WHERE substr(name, 1, length(?1)) = ?1 ORDER BY name').all(under)
      } finally {
        db.close()
      }
    },
    shared: false,
  },
  {
    name: 'PostgreSQL',
    opener: () => pgS3Index(pg),
    rows: async (_dir, under) => numeric<{ name: string } & IndexRow>(await pg`SELECT name, size, checksum, content_type FROM s3_objects WHERE left(name, ${under.length}) = ${under} ORDER BY name`),
    shared: true,
  },
]

/** The index the stores of a describe block use (set by its beforeAll). */
let kind: IndexKind = INDEXES[0]!

/** A store over the test server under its own prefix (`s3://trawl-test/<prefix>`), with a fresh index dir. */
function s3Store(prefix = `p-${crypto.randomUUID()}`, opts: S3BlobStoreOptions = {}, env = server.env(prefix), dir = tempDir()) {
  const s3Index = kind.opener()
  const store = openBlobStore({ dataDir: dir, blobUrl: env.TRAWL_BLOB_URL!, s3Endpoint: env.TRAWL_S3_ENDPOINT ?? null }, { s3: opts, env, ...(s3Index ? { s3Index } : {}) })
  if (!(store instanceof S3BlobStore)) throw new Error('openBlobStore did not choose S3')
  return { store, prefix, dir }
}

/** The bytes of an object as the server holds them. */
const serverBytes = async (name: string): Promise<Uint8Array> => new Uint8Array(await server.client().file(name).arrayBuffer())

const MAX = 8 * MiB
for (const k of INDEXES) {
  blobStoreContract(`s3, index in ${k.name}`, async () => {
    kind = k
    // 8 MiB over 5 MiB parts: the too_large checks refuse a body in the middle of a multipart upload.
    const { store, dir } = s3Store(undefined, { maxBytes: MAX })
    return {
      store,
      maxBytes: MAX,
      async cleanup() {
        await store.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  })

  describe(`S3BlobStore on the server, index in ${k.name}`, () => {
    beforeAll(() => {
      kind = k
    })
    test('objects are named prefix + key, with the bytes and content type put', async () => {
      const { store } = s3Store('crawls/eu/')
      try {
        const body = bodyOf(1, 2000)
        await store.put('t/acme/run/1', body, 'text/html; charset=utf-8')
        await store.put('t/acme/run/2', bodyOf(2, 10), 'application/json')
        expect(await server.keys('crawls/')).toEqual(['crawls/eu/t/acme/run/1', 'crawls/eu/t/acme/run/2'])
        const object = server.client().file('crawls/eu/t/acme/run/1')
        expect(await serverBytes('crawls/eu/t/acme/run/1')).toEqual(body)
        expect((await object.stat()).type).toBe('text/html; charset=utf-8')
      } finally {
        await store.close()
      }
    })

    test('without a prefix, keys are object names as they are', async () => {
      const key = `t/${crypto.randomUUID()}`
      const { store } = s3Store('', {}, server.env('', 'other-bucket'))
      try {
        await store.put(key, bodyOf(3, 5), 'text/plain')
        expect(await server.keys(key, 'other-bucket')).toEqual([key])
      } finally {
        await store.close()
      }
    })

    test('a body up to a part is one PUT; past it, a multipart upload of 5 MiB parts', async () => {
      const { store, prefix } = s3Store()
      try {
        const small = bodyOf(4, 5 * MiB - 1)
        const before = (await server.requests()).length
        await store.put('t/small', streamOf(small, 100_000), 'application/octet-stream')
        const smallCalls = (await server.requests()).slice(before)
        expect(smallCalls).toEqual([`PUT /trawl-test/${prefix}/t/small`])

        const big = bodyOf(5, 12 * MiB + 3)
        const mid = (await server.requests()).length
        const info = await store.put('t/big', streamOf(big, 65_537), 'application/octet-stream')
        expect(info).toEqual({ size: 12 * MiB + 3, checksum: checksumOf(big), contentType: 'application/octet-stream' })
        const calls = (await server.requests()).slice(mid)
        expect(calls.filter((c) => c.startsWith(`POST /trawl-test/${prefix}/t/big?uploads`))).toHaveLength(1)
        expect(calls.filter((c) => /^PUT .*t\/big\?.*partNumber=\d/.test(c))).toHaveLength(3)
        expect(calls.filter((c) => /^POST .*t\/big\?uploadId=/.test(c))).toHaveLength(1)
        expect(await serverBytes(`${prefix}/t/big`)).toEqual(big)

        // a large Uint8Array body goes the same way
        const bytes = bodyOf(6, 11 * MiB)
        expect((await store.put('t/bytes', bytes, 'a/b')).checksum).toBe(checksumOf(bytes))
        expect(await serverBytes(`${prefix}/t/bytes`)).toEqual(bytes)
      } finally {
        await store.close()
      }
    })

    test('too_large in the middle of a multipart upload leaves the object on the server as it was', async () => {
      const { store, prefix } = s3Store(undefined, { maxBytes: 7 * MiB })
      try {
        const old = bodyOf(7, 1000)
        await store.put('t/k', old, 'text/plain')
        await expectBlobError(store.put('t/k', streamOf(new Uint8Array(9 * MiB)), 'text/plain'), 'too_large')
        await expect(store.put('t/k', failingStream(6 * MiB), 'text/plain')).rejects.toBeInstanceOf(Error)
        expect(await serverBytes(`${prefix}/t/k`)).toEqual(old)
        expect(await store.head('t/k')).toEqual({ size: 1000, checksum: checksumOf(old), contentType: 'text/plain' })
        await expectBlobError(store.put('t/new', streamOf(new Uint8Array(9 * MiB)), 'text/plain'), 'too_large')
        expect(await server.keys(`${prefix}/`)).toEqual([`${prefix}/t/k`])
        // Bun aborts the multipart upload it had begun (it may do so after the put has rejected).
        const aborted = async () => (await server.requests()).some((r) => r.startsWith(`DELETE /trawl-test/${prefix}/t/new?uploadId=`))
        for (let i = 0; i < 100 && !(await aborted()); i++) await Bun.sleep(20)
        expect(await aborted()).toBe(true)
      } finally {
        await store.close()
      }
    })

    test('delete removes the object from the server', async () => {
      const { store, prefix } = s3Store()
      try {
        await store.put('t/d', bodyOf(8, 300), 'text/plain')
        await store.put('t/keep', bodyOf(9, 300), 'text/plain')
        expect(await server.keys(`${prefix}/`)).toEqual([`${prefix}/t/d`, `${prefix}/t/keep`])
        expect(await store.delete('t/d')).toBe(true)
        expect(await server.keys(`${prefix}/`)).toEqual([`${prefix}/t/keep`])
        expect(await server.client().exists(`${prefix}/t/d`)).toBe(false)
      } finally {
        await store.close()
      }
    })

    test('the index survives the store: a store opened again finds what was put', async () => {
      const first = s3Store()
      const body = bodyOf(10, 4000)
      const info = await first.store.put('t/r', body, 'text/plain')
      await first.store.close()
      const again = s3Store(first.prefix, {}, server.env(first.prefix), first.dir)
      try {
        expect(await again.store.head('t/r')).toEqual(info)
        expect(await readAll((await again.store.get('t/r'))!.stream)).toEqual(body)
        expect(await k.rows(first.dir, `trawl-test/${first.prefix}/`)).toEqual([{ name: `trawl-test/${first.prefix}/t/r`, size: 4000, checksum: checksumOf(body), content_type: 'text/plain' }])
      } finally {
        await again.store.close()
      }
    })

    test(k.shared ? 'stores on two data dirs share the index: each reads and deletes what the other put' : 'a store on another data dir has an index of its own', async () => {
      const one = s3Store()
      const two = s3Store(one.prefix)
      try {
        const body = bodyOf(21, 3000)
        const info = await one.store.put('t/shared', body, 'text/html')
        if (!k.shared) {
          expect(await two.store.head('t/shared')).toBeNull()
          return
        }
        expect(await two.store.head('t/shared')).toEqual(info)
        expect(await readAll((await two.store.get('t/shared'))!.stream)).toEqual(body)
        expect(await two.store.delete('t/shared')).toBe(true)
        expect(await one.store.head('t/shared')).toBeNull()
        expect(await one.store.get('t/shared')).toBeNull()
        expect(await server.keys(`${one.prefix}/`)).toEqual([])
      } finally {
        await one.store.close()
        await two.store.close()
      }
    })

    test('an object removed behind the store reads as missing, and a delete still succeeds', async () => {
      const { store, prefix } = s3Store()
      try {
        await store.put('t/x', bodyOf(11, 100), 'text/plain')
        await server.client().delete(`${prefix}/t/x`)
        expect(await store.get('t/x')).toBeNull()
        expect(await store.delete('t/x')).toBe(true)
        expect(await store.head('t/x')).toBeNull()
      } finally {
        await store.close()
      }
    })

    test('an object a crash left without its row is removed by a delete of its key', async () => {
      const { store, prefix } = s3Store()
      try {
        await server.client().write(`${prefix}/t/orphan`, 'left over')
        expect(await store.head('t/orphan')).toBeNull()
        expect(await store.delete('t/orphan')).toBe(false)
        expect(await server.keys(`${prefix}/`)).toEqual([])
      } finally {
        await store.close()
      }
    })

    test('list finds what the bucket holds: an object a crash left without its row, under the store prefix only', async () => {
      const { store, prefix } = s3Store()
      try {
        await store.put('runs/r/1', bodyOf(13, 10), 'text/plain')
        await server.client().write(`${prefix}/runs/r/2`, 'left over')
        await server.client().write(`${prefix}x/runs/r/3`, 'another prefix')
        expect(await store.list('runs/r/', null, 1000)).toEqual(['runs/r/1', 'runs/r/2'])
        expect(await store.list('runs/r/', 'runs/r/1', 1000)).toEqual(['runs/r/2'])
      } finally {
        await store.close()
      }
    })

    test('a large GET streams in chunks of at most 64 KiB', async () => {
      const { store } = s3Store()
      try {
        const body = bodyOf(12, 3 * MiB)
        await store.put('t/g', body, 'application/octet-stream')
        const chunks: Uint8Array[] = []
        for await (const c of (await store.get('t/g'))!.stream) chunks.push(c)
        expect(chunks.length).toBeGreaterThan(1)
        expect(Math.max(...chunks.map((c) => c.byteLength))).toBeLessThanOrEqual(64 * 1024)
        expect(checksumOf(Buffer.concat(chunks))).toBe(checksumOf(body))
      } finally {
        await store.close()
      }
    })

    test('puts and deletes of one key end in call order', async () => {
      const { store, prefix } = s3Store()
      try {
        const ops = [store.put('t/o', bodyOf(13, 6 * MiB), 'a/1'), store.delete('t/o'), store.put('t/o', bodyOf(14, 10), 'a/2')]
        await Promise.all(ops)
        expect(await store.head('t/o')).toEqual({ size: 10, checksum: checksumOf(bodyOf(14, 10)), contentType: 'a/2' })
        expect(await serverBytes(`${prefix}/t/o`)).toEqual(bodyOf(14, 10))
      } finally {
        await store.close()
      }
    })
  })

  describe(`S3 failures are io, index in ${k.name}`, () => {
    beforeAll(() => {
      kind = k
    })
    test('a server that is down: put, get and delete reject with io; a replaced key reads as missing, not stale', async () => {
      const { store, prefix, dir } = s3Store()
      await store.put('t/k', bodyOf(15, 100), 'text/plain')
      await store.close()
      // The same index and location, through an endpoint where nothing listens.
      const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
      const deadEndpoint = `http://127.0.0.1:${closed.port}`
      closed.stop(true)
      const down = s3Store(prefix, {}, { ...server.env(prefix), TRAWL_S3_ENDPOINT: deadEndpoint }, dir)
      try {
        await expectBlobError(down.store.get('t/k'), 'io')
        expect(await down.store.head('t/k')).not.toBeNull()
        // A delete drops the row before it asks S3: failing, it leaves an object without a row
        // (removed by the next delete of the key), never a row for bytes that may be gone.
        await expectBlobError(down.store.delete('t/k'), 'io')
        expect(await down.store.head('t/k')).toBeNull()
        await expectBlobError(down.store.put('t/k', bodyOf(16, 100), 'text/plain'), 'io')
        await expectBlobError(down.store.put('t/k2', streamOf(bodyOf(17, 6 * MiB)), 'text/plain'), 'io')
        // The upload may or may not have landed, so no row describes the key any more.
        expect(await down.store.head('t/k')).toBeNull()
        expect(await down.store.head('t/k2')).toBeNull()
      } finally {
        await down.store.close()
      }
      // The server itself still holds the first body: nothing reached it.
      expect(await serverBytes(`${prefix}/t/k`)).toEqual(bodyOf(15, 100))
    })

    test('a server that accepts and never answers: every operation fails with io after timeoutMs, none hangs', async () => {
      const { store, prefix, dir } = s3Store()
      await store.put('t/k', bodyOf(18, 100), 'text/plain')
      await store.close()
      // Reads whatever it is sent and never answers, as a wedged S3 gateway does.
      const sockets: Socket[] = []
      const silent = createServer((socket) => {
        sockets.push(socket)
        socket.on('data', () => {})
      })
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
      const endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`
      const hung = s3Store(prefix, { timeoutMs: 300 }, { ...server.env(prefix), TRAWL_S3_ENDPOINT: endpoint }, dir)
      const failure = async (p: Promise<unknown>) => {
        const started = performance.now()
        const e = await p.then(
          () => null,
          (err: unknown) => err,
        )
        return { code: (e as BlobError | null)?.code, timedOut: /S3 did not answer within 0\.3 s/.test(String((e as Error | null)?.message)), ms: performance.now() - started }
      }
      try {
        for (const [what, op] of [
          ['get', () => hung.store.get('t/k')],
          ['one PUT', () => hung.store.put('t/small', bodyOf(19, 100), 'text/plain')],
          ['multipart', () => hung.store.put('t/big', streamOf(bodyOf(20, 6 * MiB)), 'text/plain')],
          ['delete', () => hung.store.delete('t/k')],
        ] as const) {
          const f = await failure(op())
          expect([what, f.code, f.timedOut]).toEqual([what, 'io', true])
          expect(f.ms).toBeGreaterThanOrEqual(250)
          expect(f.ms).toBeLessThan(5000)
        }
        // As with a server that is down: the failed puts and the delete left no row behind.
        for (const key of ['t/k', 't/small', 't/big']) expect(await hung.store.head(key)).toBeNull()
      } finally {
        await hung.store.close()
        for (const socket of sockets) socket.destroy()
        silent.close()
      }
    })

    test('wrong credentials: io naming the S3 error, and nothing stored', async () => {
      const prefix = `p-${crypto.randomUUID()}`
      const { store } = s3Store(prefix, {}, { ...server.env(prefix), AWS_ACCESS_KEY_ID: 'NOT-A-KEY' })
      try {
        const err = await store.put('t/a', bodyOf(18, 10), 'text/plain').catch((e: unknown) => e)
        await expectBlobError(Promise.reject(err), 'io')
        expect((err as Error).message).toContain('InvalidAccessKeyId')
        expect(await store.head('t/a')).toBeNull()
        await expectBlobError(store.delete('t/a'), 'io')
        expect(await server.keys(`${prefix}/`)).toEqual([])
      } finally {
        await store.close()
      }
    })

    test('a bucket that does not exist: io naming NoSuchBucket', async () => {
      const prefix = 'p'
      const { store } = s3Store(prefix, {}, server.env(prefix, 'no-such-bucket'))
      try {
        const err = await store.put('t/a', bodyOf(19, 10), 'text/plain').catch((e: unknown) => e)
        await expectBlobError(Promise.reject(err), 'io')
        expect((err as Error).message).toContain('NoSuchBucket')
        await expectBlobError(store.put('t/b', streamOf(bodyOf(20, 6 * MiB)), 'text/plain'), 'io')
      } finally {
        await store.close()
      }
    })
  })
}
