import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { join } from 'node:path'
import { BlobError, DiskBlobStore, openBlobStore, S3BlobStore, type S3BlobStoreOptions } from '../../src/blob'
import { s3ClientOptions } from '../../src/blob/s3-settings'
import { ConfigError, parseBlobUrl } from '../../src/config'
import { startS3Server, type S3TestServer } from '../helpers/s3-server'
import { bodyOf, checksumOf, failingStream, readAll, streamOf } from './bodies'
import { blobStoreContract, expectBlobError } from './contract'

const MiB = 1024 * 1024
let server: S3TestServer
const dirs: string[] = []
beforeAll(async () => {
  server = await startS3Server(['trawl-test', 'other-bucket'])
})
afterAll(async () => {
  await server?.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'trawl-s3blob-'))
  dirs.push(d)
  return d
}

/** A store over the test server under its own prefix (`s3://trawl-test/<prefix>`), with a fresh index dir. */
function s3Store(prefix = `p-${crypto.randomUUID()}`, opts: S3BlobStoreOptions = {}, env = server.env(prefix), dir = tempDir()) {
  const store = openBlobStore({ dataDir: dir, blobUrl: env.TRAWL_BLOB_URL!, s3Endpoint: env.TRAWL_S3_ENDPOINT ?? null }, { s3: opts, env })
  if (!(store instanceof S3BlobStore)) throw new Error('openBlobStore did not choose S3')
  return { store, prefix, dir }
}

/** The bytes of an object as the server holds them. */
const serverBytes = async (name: string): Promise<Uint8Array> => new Uint8Array(await server.client().file(name).arrayBuffer())

const MAX = 8 * MiB
blobStoreContract('s3', async () => {
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

describe('S3BlobStore on the server', () => {
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
      expect(await server.keys('t/', 'other-bucket')).toEqual([key])
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

  test('the index survives the store: a store opened again on the data dir finds what was put', async () => {
    const first = s3Store()
    const body = bodyOf(10, 4000)
    const info = await first.store.put('t/r', body, 'text/plain')
    await first.store.close()
    const again = s3Store(first.prefix, {}, server.env(first.prefix), first.dir)
    try {
      expect(await again.store.head('t/r')).toEqual(info)
      expect(await readAll((await again.store.get('t/r'))!.stream)).toEqual(body)
      const rows = new Database(join(first.dir, 'blobs-s3.db'), { readonly: true })
      expect(rows.query('SELECT name, size, checksum, content_type FROM objects').all()).toEqual([
        { name: `trawl-test/${first.prefix}/t/r`, size: 4000, checksum: checksumOf(body), content_type: 'text/plain' },
      ])
      rows.close()
    } finally {
      await again.store.close()
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

describe('S3 failures are io', () => {
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

describe('choosing and configuring the store', () => {
  const aws = { AWS_ACCESS_KEY_ID: 'AKIA1', AWS_SECRET_ACCESS_KEY: 'secret' }

  test('openBlobStore: disk for a bare data dir or no blob URL, S3 for s3://', async () => {
    const dir = tempDir()
    const disk = openBlobStore(dir)
    expect(disk).toBeInstanceOf(DiskBlobStore)
    await disk.close()
    const alsoDisk = openBlobStore({ dataDir: dir, blobUrl: null, s3Endpoint: null })
    expect(alsoDisk).toBeInstanceOf(DiskBlobStore)
    await alsoDisk.close()
    const s3 = openBlobStore({ dataDir: dir, blobUrl: 's3://bucket/x', s3Endpoint: 'http://127.0.0.1:1' }, { env: aws })
    expect(s3).toBeInstanceOf(S3BlobStore)
    expect((s3 as S3BlobStore).objectKey('t/1')).toBe('x/t/1')
    await s3.close()
  })

  test('missing credentials are a ConfigError naming the variable', () => {
    const dir = tempDir()
    const open = (env: Record<string, string>) => () => openBlobStore({ dataDir: dir, blobUrl: 's3://bucket', s3Endpoint: null }, { env })
    expect(open({})).toThrow(new ConfigError('AWS_ACCESS_KEY_ID: must be set when TRAWL_BLOB_URL is s3://…'))
    expect(open({ AWS_ACCESS_KEY_ID: 'k' })).toThrow(new ConfigError('AWS_SECRET_ACCESS_KEY: must be set when TRAWL_BLOB_URL is s3://…'))
    expect(open({ ...aws, AWS_REGION: 'EU West' })).toThrow(ConfigError)
  })

  test('the prefix is a folder: with or without slashes, keys go below it', () => {
    expect(parseBlobUrl('s3://bkt')).toEqual({ bucket: 'bkt', prefix: '' })
    expect(parseBlobUrl('s3://bkt/')).toEqual({ bucket: 'bkt', prefix: '' })
    expect(() => parseBlobUrl('s3://bkt/../other')).toThrow('TRAWL_BLOB_URL: the prefix must not contain . or .. segments, got "s3://bkt/../other"')
    expect(() => parseBlobUrl('s3://bkt/a/./c')).toThrow('segments')
    expect(parseBlobUrl('s3://bkt/crawls')).toEqual({ bucket: 'bkt', prefix: 'crawls/' })
    expect(parseBlobUrl('s3://bkt/crawls/eu/')).toEqual({ bucket: 'bkt', prefix: 'crawls/eu/' })
    expect(parseBlobUrl('s3://bkt//x//')).toEqual({ bucket: 'bkt', prefix: 'x/' })
  })

  test('the bucket is a name S3 takes: 3-63 lowercase letters, digits, dots and hyphens', () => {
    for (const bad of ['s3://b', 's3://', 's3://Bucket', 's3://-bkt', 's3://bkt-', 's3://b_k_t/x', `s3://${'b'.repeat(64)}`, 'gs://bkt']) {
      expect(() => parseBlobUrl(bad)).toThrow(`TRAWL_BLOB_URL: must be s3://bucket/prefix, got "${bad}"`)
    }
    expect(parseBlobUrl(`s3://${'b'.repeat(63)}/x`)).toEqual({ bucket: 'b'.repeat(63), prefix: 'x/' })
    expect(parseBlobUrl('s3://my.bucket-1')).toEqual({ bucket: 'my.bucket-1', prefix: '' })
  })

  test('client options: every value explicit; path-style on an endpoint, virtual-hosted on AWS unless the bucket has a dot', () => {
    const loc = { bucket: 'my-bucket', prefix: '' }
    expect(s3ClientOptions(loc, 'http://127.0.0.1:9000', { ...aws, AWS_SESSION_TOKEN: 'tok', AWS_REGION: 'eu-west-1' })).toEqual({
      accessKeyId: 'AKIA1',
      secretAccessKey: 'secret',
      sessionToken: 'tok',
      region: 'eu-west-1',
      bucket: 'my-bucket',
      endpoint: 'http://127.0.0.1:9000',
      virtualHostedStyle: false,
    })
    expect(s3ClientOptions(loc, null, { ...aws, AWS_DEFAULT_REGION: 'ap-south-1' })).toMatchObject({
      region: 'ap-south-1',
      sessionToken: '',
      endpoint: 'https://my-bucket.s3.ap-south-1.amazonaws.com',
      virtualHostedStyle: true,
    })
    // AWS_REGION wins over AWS_DEFAULT_REGION; us-east-1 without either
    expect(s3ClientOptions(loc, null, { ...aws, AWS_REGION: 'eu-north-1', AWS_DEFAULT_REGION: 'ap-south-1' }).region).toBe('eu-north-1')
    expect(s3ClientOptions(loc, null, aws).region).toBe('us-east-1')
    expect(s3ClientOptions({ bucket: 'my.bucket', prefix: '' }, null, aws)).toMatchObject({
      endpoint: 'https://s3.us-east-1.amazonaws.com',
      virtualHostedStyle: false,
    })
    // what Bun makes of them: the URL a request goes to
    const hosted = new Bun.S3Client(s3ClientOptions(loc, null, aws)).presign('t/a')
    expect(hosted.startsWith('https://my-bucket.s3.us-east-1.amazonaws.com/t/a?')).toBe(true)
    const pathStyle = new Bun.S3Client(s3ClientOptions(loc, 'http://127.0.0.1:9000', aws)).presign('t/a')
    expect(pathStyle.startsWith('http://127.0.0.1:9000/my-bucket/t/a?')).toBe(true)
  })
})
