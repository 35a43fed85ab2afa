import { describe, expect, test } from 'bun:test'
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync, zstdCompressSync } from 'node:zlib'
import { decodeContent } from '../../src/fetch/body'
import { FetchError } from '../../src/fetch/errors'
import { backoffMs, retryAfterMs, RETRY_AFTER_CAP_MS } from '../../src/fetch/retry'

const text = Buffer.from('hello, '.repeat(1000))

describe('decodeContent', () => {
  test.each([
    ['gzip', gzipSync(text)],
    ['x-gzip', gzipSync(text)],
    ['deflate', deflateSync(text)],
    ['deflate', deflateRawSync(text)],
    ['br', brotliCompressSync(text)],
    ['zstd', zstdCompressSync(text)],
    ['gzip, br', brotliCompressSync(gzipSync(text))],
  ])('%s', async (coding, bytes) => {
    expect(Buffer.from(await decodeContent(bytes, coding, 1 << 20)).equals(text)).toBe(true)
  })

  test('identity and unknown codings come back as sent', async () => {
    expect(await decodeContent(text, 'identity', 100)).toBe(text)
    expect(await decodeContent(text, 'compress', 100)).toBe(text)
  })

  test('a bomb stops at the cap', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024))
    expect(bomb.byteLength).toBeLessThan(100_000)
    const before = process.memoryUsage().rss
    const err = (await decodeContent(bomb, 'gzip', 1_000_000).catch((e) => e)) as FetchError
    expect(err.code).toBe('too_large')
    expect(err.message).toContain('1000000-byte limit')
    expect(process.memoryUsage().rss - before).toBeLessThan(32 * 1024 * 1024)
  })

  test('a corrupt body is bad_response', async () => {
    const err = (await decodeContent(Buffer.from('not gzip at all'), 'gzip', 1000).catch((e) => e)) as FetchError
    expect(err.code).toBe('bad_response')
  })
})

describe('retry timing', () => {
  test('backoff doubles, with jitter between half and all of it', () => {
    expect([0, 1, 2, 3].map((n) => backoffMs(n, () => 0))).toEqual([100, 200, 400, 800])
    expect([0, 1, 2, 3].map((n) => backoffMs(n, () => 1))).toEqual([200, 400, 800, 1600])
  })

  test('Retry-After in seconds or as a date, capped', () => {
    const now = Date.parse('2026-11-22T12:00:00Z')
    expect(retryAfterMs('2', now)).toBe(2000)
    expect(retryAfterMs('Sun, 22 Nov 2026 12:00:03 GMT', now)).toBe(3000)
    expect(retryAfterMs('Sun, 22 Nov 2026 11:00:00 GMT', now)).toBe(0)
    expect(retryAfterMs('3600', now)).toBe(RETRY_AFTER_CAP_MS)
    expect(retryAfterMs('soon', now)).toBeNull()
    expect(retryAfterMs(null, now)).toBeNull()
  })
})
