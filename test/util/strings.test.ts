import { describe, expect, test } from 'bun:test'
import { heapStats } from 'bun:jsc'
import { ownCopy } from '../../src/util/strings'

/** Memory held outside the JS heap cells (string buffers) after a full collection, in MB. */
function extraMb(): number {
  Bun.gc(true)
  return heapStats().extraMemorySize / 1e6
}

describe('ownCopy', () => {
  test('is equal to its input, whatever the characters', () => {
    for (const s of ['', 'a', 'http://x.example/p?q=1', 'ünï©ødé ☃ 𝄞']) expect(ownCopy(s)).toBe(s)
  })

  test('keeps nothing of the text it was sliced from alive, where a slice keeps all of it', () => {
    const pages = 2000
    const page = (i: number) => `<a href="http://x.example/p/${i}">` + 'lorem ipsum '.repeat(1000) + i // ~12 KB each
    const before = extraMb()
    const slices = Array.from({ length: pages }, (_, i) => page(i).slice(9, 35))
    const held = extraMb() - before
    const copies = slices.map(ownCopy)
    slices.length = 0
    const kept = extraMb() - before
    expect(held).toBeGreaterThan(15) // the slices held their pages: ~24 MB
    expect(kept).toBeLessThan(2) // the copies hold 26 characters each
    expect(copies[7]).toBe('http://x.example/p/7">lore')
  })
})
