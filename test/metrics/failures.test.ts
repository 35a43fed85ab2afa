import { expect, test } from 'bun:test'
import { countingFailures } from '../../src/metrics/failures'

class Engine {
  #rows = new Map([['a', 1]])
  readonly name = 'engine'
  async get(key: string) {
    const v = this.#rows.get(key)
    if (v === undefined) throw new Error(`no ${key}`)
    return v
  }
  size() {
    return this.#rows.size
  }
  explode(): number {
    throw new Error('sync failure')
  }
}

test('failures of methods and of nested plain objects are told by path; answers, errors and `this` (private fields too) pass through unchanged', async () => {
  const failed: [string, string][] = []
  const told = (op: string, err: unknown) => failed.push([op, (err as Error).message])
  const store = countingFailures(
    {
      runs: {
        census: async () => [{ runs: 1 }],
        labels: { get: (k: string) => Promise.reject(new Error(`bad ${k}`)) },
      },
      count: 3,
    },
    told,
  )
  // A class instance is wrapped as a whole (the blob stores), its prototype's methods included.
  const engine = countingFailures(new Engine(), told)
  expect(await store.runs.census()).toEqual([{ runs: 1 }])
  expect(store.count).toBe(3)
  expect(store.runs.census).toBe(store.runs.census) // one wrapper a method, not one a read
  expect(await engine.get('a')).toBe(1)
  expect(engine.size()).toBe(1)
  expect(engine.name).toBe('engine')
  expect(failed).toEqual([])
  await expect(engine.get('b')).rejects.toThrow('no b')
  await expect(store.runs.labels.get('x')).rejects.toThrow('bad x')
  expect(() => engine.explode()).toThrow('sync failure')
  expect(failed).toEqual([
    ['get', 'no b'],
    ['runs.labels.get', 'bad x'],
    ['explode', 'sync failure'],
  ])
})
