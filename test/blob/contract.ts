import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { BlobError, type BlobStore } from '../../src/blob/blob-store'
import { bodyOf, failingStream, readAll, checksumOf, streamOf } from './bodies'

export type ContractStore = {
  store: BlobStore
  cleanup(): Promise<void>
  /** The store's body limit, when it has one small enough to test (too_large checks run then). */
  maxBytes?: number
}

/** Expects `p` to reject with a BlobError of `code`. */
export async function expectBlobError(p: Promise<unknown>, code: BlobError['code']) {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  )
  expect(e).toBeInstanceOf(BlobError)
  expect((e as BlobError).code).toBe(code)
}

const INVALID_KEYS = ['', 'k'.repeat(513), '/t/a', 't/../a', '..', 'a/..', 't/./x', '.', 'x/.', 't/a b', 't/ä', 't/a?b', 't\\a', 't/a%2F']
const VALID_KEYS = ['k'.repeat(512), 't/tenant-1/run_2/art.ifact:3', 'a', 't/.../x', 't/.x/y', 't/a..b', 't/x/']

/**
 * The behaviour every BlobStore must have. Registers its own describe block; `make` gives a
 * fresh, empty store per test.
 */
export function blobStoreContract(name: string, make: () => Promise<ContractStore>) {
  describe(`BlobStore contract: ${name}`, () => {
    let ctx: ContractStore
    let store: BlobStore
    beforeEach(async () => {
      ctx = await make()
      store = ctx.store
    })
    afterEach(async () => {
      await ctx.cleanup()
    })

    test('put returns size, checksum and content type; head and get agree; bytes round-trip', async () => {
      const body = bodyOf(1, 3000)
      const info = await store.put('t/a/r/1', body, 'text/html; charset=utf-8')
      expect(info).toEqual({ size: 3000, checksum: checksumOf(body), contentType: 'text/html; charset=utf-8' })
      expect(await store.head('t/a/r/1')).toEqual(info)
      const got = await store.get('t/a/r/1')
      expect(got!.info).toEqual(info)
      expect(await readAll(got!.stream)).toEqual(body)
    })

    test('every byte value survives, and only the bytes of a subarray view are stored', async () => {
      const all = Uint8Array.from({ length: 256 }, (_, i) => i)
      await store.put('t/bytes', all, 'application/octet-stream')
      expect(await readAll((await store.get('t/bytes'))!.stream)).toEqual(all)
      const view = bodyOf(2, 1000).subarray(100, 600)
      expect((await store.put('t/view', view, 'x/y')).size).toBe(500)
      expect(await readAll((await store.get('t/view'))!.stream)).toEqual(view.slice())
    })

    test('an empty body is a blob of size 0', async () => {
      const info = await store.put('t/empty', new Uint8Array(0), 'text/plain')
      expect(info).toEqual({ size: 0, checksum: checksumOf(new Uint8Array(0)), contentType: 'text/plain' })
      expect((await readAll((await store.get('t/empty'))!.stream)).byteLength).toBe(0)
      const streamed = await store.put('t/empty2', streamOf(new Uint8Array(0)), 'text/plain')
      expect(streamed.size).toBe(0)
    })

    test('a missing key: get and head are null, delete is false', async () => {
      expect(await store.get('t/none')).toBeNull()
      expect(await store.head('t/none')).toBeNull()
      expect(await store.delete('t/none')).toBe(false)
    })

    test('a put of an existing key replaces body and content type', async () => {
      await store.put('t/k', bodyOf(3, 100), 'text/plain')
      const info = await store.put('t/k', bodyOf(4, 200), 'application/json')
      expect(await store.head('t/k')).toEqual(info)
      expect(info.contentType).toBe('application/json')
      expect(await readAll((await store.get('t/k'))!.stream)).toEqual(bodyOf(4, 200))
    })

    test('delete removes the blob and says so once', async () => {
      await store.put('t/d', bodyOf(5, 10), 'text/plain')
      expect(await store.delete('t/d')).toBe(true)
      expect(await store.head('t/d')).toBeNull()
      expect(await store.get('t/d')).toBeNull()
      expect(await store.delete('t/d')).toBe(false)
    })

    test('a 5 MB streamed put in odd chunks: right size, checksum, bytes', async () => {
      const body = bodyOf(6, 5_000_000)
      const info = await store.put('t/big', streamOf(body, 65_537), 'application/octet-stream')
      expect(info.size).toBe(5_000_000)
      expect(info.checksum).toBe(checksumOf(body))
      expect(await store.head('t/big')).toEqual(info)
      expect(await readAll((await store.get('t/big'))!.stream)).toEqual(body)
    })

    test('a streamed body of many tiny chunks, and a large Uint8Array body', async () => {
      const small = bodyOf(7, 5000)
      expect((await store.put('t/tiny', streamOf(small, 7), 'a/b')).checksum).toBe(checksumOf(small))
      expect(await readAll((await store.get('t/tiny'))!.stream)).toEqual(small)
      const large = bodyOf(8, 1_500_000)
      expect((await store.put('t/large', large, 'a/b')).checksum).toBe(checksumOf(large))
      expect(await readAll((await store.get('t/large'))!.stream)).toEqual(large)
    })

    test('many concurrent puts of distinct keys are all stored', async () => {
      const keys = Array.from({ length: 100 }, (_, i) => `t/c/${i}`)
      const infos = await Promise.all(keys.map((k, i) => store.put(k, bodyOf(i, 500 + i), 'text/plain')))
      infos.forEach((info, i) => expect(info.checksum).toBe(checksumOf(bodyOf(i, 500 + i))))
      for (const [i, k] of keys.entries()) expect(await readAll((await store.get(k))!.stream)).toEqual(bodyOf(i, 500 + i))
    })

    test('a stream that fails mid-body rejects and leaves the previous blob in place', async () => {
      const before = await store.put('t/f', bodyOf(9, 100), 'text/plain')
      const err = await store.put('t/f', failingStream(700_000), 'text/plain').catch((e: unknown) => e)
      expect(err).toBeInstanceOf(Error)
      expect(await store.head('t/f')).toEqual(before)
      await store.put('t/g', failingStream(100), 'text/plain').catch(() => {})
      expect(await store.head('t/g')).toBeNull()
    })

    test('invalid keys are refused by every operation; edge-case valid keys work', async () => {
      for (const key of INVALID_KEYS) {
        await expectBlobError(store.put(key, new Uint8Array(1), 'text/plain'), 'invalid_key')
        await expectBlobError(store.get(key), 'invalid_key')
        await expectBlobError(store.head(key), 'invalid_key')
        await expectBlobError(store.delete(key), 'invalid_key')
      }
      for (const [i, key] of VALID_KEYS.entries()) {
        await store.put(key, bodyOf(i, 10), 'text/plain')
        expect(await readAll((await store.get(key))!.stream)).toEqual(bodyOf(i, 10))
      }
    })

    test('bodies over the limit are refused with too_large, as bytes or as a stream', async () => {
      const max = ctx.maxBytes
      if (max === undefined) return
      await store.put('t/limit', bodyOf(10, 10), 'text/plain')
      const before = await store.head('t/limit')
      await expectBlobError(store.put('t/limit', new Uint8Array(max + 1), 'text/plain'), 'too_large')
      await expectBlobError(store.put('t/limit', streamOf(new Uint8Array(max + 1)), 'text/plain'), 'too_large')
      expect(await store.head('t/limit')).toEqual(before)
      expect((await store.put('t/exact', streamOf(new Uint8Array(max)), 'text/plain')).size).toBe(max)
    })

    test('list: the keys under a prefix, in order, page by page, and nothing else', async () => {
      const keys = ['runs/r1/c', 'runs/r1/a', 'runs/r1/b/x', 'runs/r10/a', 'runs/r2/a', 'runs/r0/z', 'other/r1/a', 'runs/r1.x']
      for (const k of keys) await store.put(k, bodyOf(1, 10), 'text/plain')
      expect(await store.list('runs/r1/', null, 1000)).toEqual(['runs/r1/a', 'runs/r1/b/x', 'runs/r1/c'])
      // Page by page, each after the last key of the one before.
      expect(await store.list('runs/r1/', null, 2)).toEqual(['runs/r1/a', 'runs/r1/b/x'])
      expect(await store.list('runs/r1/', 'runs/r1/b/x', 2)).toEqual(['runs/r1/c'])
      expect(await store.list('runs/r1/', 'runs/r1/c', 2)).toEqual([])
      // A prefix need not end at a slash; the empty prefix is every key.
      expect(await store.list('runs/r1', null, 1000)).toEqual(['runs/r1.x', 'runs/r1/a', 'runs/r1/b/x', 'runs/r1/c', 'runs/r10/a'])
      expect(await store.list('', null, 1000)).toEqual(keys.slice().sort())
      // A deleted blob is no longer listed.
      await store.delete('runs/r1/a')
      expect(await store.list('runs/r1/', null, 1000)).toEqual(['runs/r1/b/x', 'runs/r1/c'])
      expect(await store.list('nothing/', null, 10)).toEqual([])
      await expectBlobError(store.list('runs/ä', null, 10), 'invalid_key')
      await expect(store.list('runs/', null, 0)).rejects.toBeInstanceOf(RangeError)
      await expect(store.list('runs/', null, 1001)).rejects.toBeInstanceOf(RangeError)
    })

    test('close waits for puts already started; later calls reject', async () => {
      const puts = Array.from({ length: 20 }, (_, i) => store.put(`t/close/${i}`, bodyOf(i, 100), 'text/plain'))
      await store.close()
      expect((await Promise.allSettled(puts)).every((r) => r.status === 'fulfilled')).toBe(true)
      await expect(store.put('t/after', new Uint8Array(1), 'text/plain')).rejects.toBeInstanceOf(BlobError)
      await expect(store.head('t/after')).rejects.toBeInstanceOf(BlobError)
    })
  })
}
