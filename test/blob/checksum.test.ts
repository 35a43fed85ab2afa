import { describe, expect, test } from 'bun:test'
import { Checksum, checksumOf } from '../../src/blob/checksum'
import { bodyOf } from './bodies'

const chunked = (bytes: Uint8Array, size: number) => {
  const c = new Checksum()
  for (let off = 0; off < bytes.byteLength; off += size) c.update(bytes.subarray(off, off + size))
  return c.digest()
}

describe('blob checksum', () => {
  test('a body within one block is its XXH64 (the reference vectors of xxHash)', () => {
    expect(checksumOf(new TextEncoder().encode('abc'))).toBe('xxh64:44bc2cf5ad770999')
    expect(checksumOf(new Uint8Array(0))).toBe('xxh64:ef46db3751d8e999')
    expect(new Checksum().digest()).toBe('xxh64:ef46db3751d8e999')
  })

  test('larger bodies chain 64 KiB blocks: block one seeds block two', () => {
    const body = bodyOf(1, 100_000)
    const first = Bun.hash.xxHash64(body.subarray(0, 65_536), 0n)
    const expected = Bun.hash.xxHash64(body.subarray(65_536), first).toString(16).padStart(16, '0')
    expect(checksumOf(body)).toBe(`xxh64:${expected}`)
  })

  test('the same checksum however a body is chunked', () => {
    for (const size of [0, 1, 65_535, 65_536, 65_537, 131_072, 200_000, 1_000_003]) {
      const body = bodyOf(size % 251, size)
      const whole = checksumOf(body)
      for (const chunk of [1, 7, 4096, 65_535, 65_536, 65_537, 300_000]) {
        if (size / chunk > 200_000) continue // one-byte chunks of a megabyte take too long for what they add
        expect(`${size}/${chunk}: ${chunked(body, chunk)}`).toBe(`${size}/${chunk}: ${whole}`)
      }
    }
  })

  test('one changed byte anywhere changes it', () => {
    const body = bodyOf(3, 200_000)
    const whole = checksumOf(body)
    for (const at of [0, 65_535, 65_536, 199_999]) {
      const changed = body.slice()
      changed[at] = changed[at]! ^ 1
      expect(checksumOf(changed)).not.toBe(whole)
    }
  })
})
