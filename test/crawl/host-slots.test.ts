/**
 * HostSlots (src/crawl/host-slots.ts): each host's queue, slots, delay, backoff and failures,
 * without an engine. The engine's politeness tests (engine-politeness.test.ts) hold the same
 * rules against a fixture server; these pin each rule alone.
 */
import { describe, expect, test } from 'bun:test'
import { HostSlots } from '../../src/crawl/host-slots'
import { ALLOW_ALL_RULES } from '../../src/crawl/robots'
import type { FetchResult } from '../../src/fetch/types'
import type { Claimed } from '../../src/store/frontier'

const entry = (seq: number) => ({ seq, url: `https://a.example/${seq}`, attempts: 0 }) as unknown as Claimed
const answer = (retryAfter?: string) => ({ status: 429, headers: retryAfter === undefined ? [] : [['retry-after', retryAfter]] }) as unknown as FetchResult

describe('hosts', () => {
  test('a host is made once, with the run delay, and robots rules to load only when the run respects them', () => {
    const slots = new HostSlots(250, true)
    expect(slots.find('a.example:443')).toBeUndefined()
    const a = slots.get('a.example:443')
    expect(slots.get('a.example:443')).toBe(a)
    expect(slots.find('a.example:443')).toBe(a)
    expect({ delayMs: a.delayMs, robots: a.robots, inFlight: a.inFlight, nextAt: a.nextAt, failures: a.failures, throttled: a.throttled }).toEqual({
      delayMs: 250,
      robots: null,
      inFlight: 0,
      nextAt: 0,
      failures: 0,
      throttled: 0,
    })
    slots.get('b.example:443')
    expect([...slots.all()].map((h) => h.key)).toEqual(['a.example:443', 'b.example:443'])
    expect(new HostSlots(0, false).get('a.example:443').robots).toBe(ALLOW_ALL_RULES)
  })
})

describe('queues', () => {
  test('requeued URLs go back to their host queue when their time comes, in the order requeued', () => {
    const slots = new HostSlots(0, false)
    const h = slots.get('a.example:443')
    h.buffer.push(entry(1))
    h.delayed.push({ entry: entry(2), at: 1_000 }, { entry: entry(3), at: 3_000 }, { entry: entry(4), at: 2_000 })
    slots.release(h, 500)
    expect(h.buffer.map((e) => e.seq)).toEqual([1])
    slots.release(h, 2_000)
    expect(h.buffer.map((e) => e.seq)).toEqual([1, 2, 4])
    expect(h.delayed.map((d) => d.entry.seq)).toEqual([3])
    slots.release(h, 10_000)
    expect(h.buffer.map((e) => e.seq)).toEqual([1, 2, 4, 3])
    expect(h.delayed).toEqual([])
  })

  test('queued counts every host queue, delayed URLs included', () => {
    const slots = new HostSlots(0, false)
    slots.get('a').buffer.push(entry(1), entry(2))
    slots.get('b').delayed.push({ entry: entry(3), at: 9 })
    slots.get('c')
    expect(slots.queued()).toBe(3)
  })

  test('ready: a host with a queue whose next start has come, or a delayed URL whose time has come', () => {
    const slots = new HostSlots(0, false)
    expect(slots.ready(0)).toBe(false)
    const a = slots.get('a')
    a.buffer.push(entry(1))
    a.nextAt = 100
    expect(slots.ready(99)).toBe(false)
    expect(slots.ready(100)).toBe(true)
    a.buffer.length = 0
    a.nextAt = 0
    a.delayed.push({ entry: entry(2), at: 50 })
    expect(slots.ready(49)).toBe(false)
    expect(slots.ready(50)).toBe(true)
  })

  test('robotsLoading says whether some host loads its robots.txt', () => {
    const slots = new HostSlots(0, true)
    slots.get('a')
    const b = slots.get('b')
    expect(slots.robotsLoading()).toBe(false)
    b.robotsLoading = true
    expect(slots.robotsLoading()).toBe(true)
  })
})

describe('backoff after 429 and 503', () => {
  test('Retry-After in seconds or as a date is waited, at most 60 s; the next start never moves earlier', () => {
    const slots = new HostSlots(0, false)
    const h = slots.get('a')
    const t0 = Date.now()
    expect(slots.backoff(h, answer('3'))).toBe(3_000)
    expect(h.nextAt).toBeGreaterThanOrEqual(t0 + 3_000)
    expect(slots.backoff(h, answer('3600'))).toBe(60_000)
    const far = h.nextAt
    expect(slots.backoff(h, answer('0'))).toBe(0)
    expect(h.nextAt).toBe(far)
    const wait = slots.backoff(h, answer(new Date(Date.now() + 20_000).toUTCString()))
    expect(wait).toBeGreaterThan(18_000)
    expect(wait).toBeLessThanOrEqual(20_000)
    expect(h.throttled).toBe(4)
  })

  test('without Retry-After (or with one that cannot be read) the wait doubles from 1 s up to 60 s', () => {
    const slots = new HostSlots(0, false)
    const h = slots.get('a')
    const waits = Array.from({ length: 9 }, (_, k) => slots.backoff(h, answer(k === 3 ? 'soon' : undefined)))
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000])
  })
})

describe('nextWakeMs', () => {
  test("the dispatcher sleeps until the nearest host's next start or delayed URL, 5 ms at least", () => {
    const slots = new HostSlots(0, false)
    expect(slots.nextWakeMs(1_000, 2, 250)).toBe(250)
    const a = slots.get('a')
    a.buffer.push(entry(1))
    a.nextAt = 1_120
    expect(slots.nextWakeMs(1_000, 2, 250)).toBe(120)
    // A host with every slot taken wakes no one: a finished fetch does.
    a.inFlight = 2
    expect(slots.nextWakeMs(1_000, 2, 250)).toBe(250)
    // A delayed URL waits for its time and for its host's next start, whichever is later.
    slots.get('b').delayed.push({ entry: entry(2), at: 1_040 })
    expect(slots.nextWakeMs(1_000, 2, 250)).toBe(40)
    slots.get('b').nextAt = 1_090
    expect(slots.nextWakeMs(1_000, 2, 250)).toBe(90)
    a.inFlight = 0
    a.nextAt = 1_001
    expect(slots.nextWakeMs(1_000, 2, 250)).toBe(5)
  })
})
