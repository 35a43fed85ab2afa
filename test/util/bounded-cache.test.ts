import { expect, test } from 'bun:test'
import { BoundedCache } from '../../src/util/bounded-cache'

test('computes a key once, hands compute the kept copy, and forgets everything when full', () => {
  const cache = new BoundedCache<string>(3)
  const calls: string[] = []
  const upper = (k: string) => (calls.push(k), k.toUpperCase())
  const page = 'xx a b c d'
  expect([cache.get(page.slice(3, 4), upper), cache.get('a', upper), cache.get('b', upper), cache.get('c', upper)]).toEqual(['A', 'A', 'B', 'C'])
  expect(calls).toEqual(['a', 'b', 'c'])
  // Full at three: the fourth key empties it, so a earlier key is computed again.
  expect(cache.get('d', upper)).toBe('D')
  expect(cache.get('a', upper)).toBe('A')
  expect(calls).toEqual(['a', 'b', 'c', 'd', 'a'])
})

test('null and other falsy values are kept like any other', () => {
  const cache = new BoundedCache<number | null>(10)
  let n = 0
  const compute = () => (n++, null)
  expect(cache.get('x', compute)).toBeNull()
  expect(cache.get('x', compute)).toBeNull()
  expect(n).toBe(1)
})
