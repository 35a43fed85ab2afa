import { describe, expect, test } from 'bun:test'
import { untilAborted } from '../../src/util/abort'

describe('untilAborted', () => {
  test('answers what the promise answers while the signal is quiet', async () => {
    const c = new AbortController()
    expect(await untilAborted(Promise.resolve(7), c.signal)).toBe(7)
    expect(await untilAborted(Promise.reject(new Error('no')), c.signal).catch((e) => e.message)).toBe('no')
  })

  test('rejects with the reason as soon as the signal aborts, not when the work ends', async () => {
    const c = new AbortController()
    const slow = Bun.sleep(5_000).then(() => 'late')
    const started = Date.now()
    const waiting = untilAborted(slow, c.signal).catch((e) => e)
    setTimeout(() => c.abort(new Error('stopped')), 10)
    const err = await waiting
    expect(err.message).toBe('stopped')
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  test('an aborted signal rejects at once, with error() when given', async () => {
    const c = new AbortController()
    c.abort(new Error('before'))
    expect(await untilAborted(Promise.resolve(1), c.signal).catch((e) => e.message)).toBe('before')
    expect(await untilAborted(Promise.resolve(1), c.signal, () => new Error('mine')).catch((e) => e.message)).toBe('mine')
  })

  test('the abort listener is removed once the work settles', async () => {
    const c = new AbortController()
    let added = 0
    let removed = 0
    const signal = c.signal
    const add = signal.addEventListener.bind(signal)
    const remove = signal.removeEventListener.bind(signal)
    signal.addEventListener = ((...a: Parameters<typeof add>) => (added++, add(...a))) as typeof signal.addEventListener
    signal.removeEventListener = ((...a: Parameters<typeof remove>) => (removed++, remove(...a))) as typeof signal.removeEventListener
    await untilAborted(Promise.resolve(1), signal)
    await Bun.sleep(0)
    expect([added, removed]).toEqual([1, 1])
  })
})
