import { expect, test } from 'bun:test'
import { formatIso } from '../../src/store/time'

test('formatIso matches toISOString across the range and at the edges', () => {
  const edges = [0, 1, 999, 86_399_999, 86_400_000, 951_782_400_000 /* 2000-02-29 */, 4_107_456_000_000 /* 2100-02-28 */, 253_402_300_799_999, -1, -86_400_001, Date.now()]
  for (const ms of edges) expect(formatIso(ms)).toBe(new Date(ms).toISOString())
  let seed = 42
  for (let i = 0; i < 50_000; i++) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    const ms = Math.floor((seed / 2 ** 31) * 253_402_300_799_999)
    expect(formatIso(ms)).toBe(new Date(ms).toISOString())
  }
})
