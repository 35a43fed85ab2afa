import { afterAll, describe, expect, test } from 'bun:test'
import { parseDocument, ParseFailure, type ParseContext, type ParseInput } from '../../src/parse/pipeline'
import { matchPaths } from '../../src/extract/patterns'
import { ParsePool, ParseTimeout, PoolError, snapshotContext } from '../../src/parse/pool'

const NO_LOOKUPS: ParseContext = { patternSets: () => [], dataMap: () => null }
const bytes = (s: string) => new TextEncoder().encode(s)
const input = (html: string, over: Partial<ParseInput> = {}): ParseInput => ({
  url: 'https://a.example/doc',
  body: bytes(html),
  content_type: 'text/html',
  pipelines: [{ identifier: 'all', steps: [{ kind: 'markdown' }, { kind: 'metadata' }, { kind: 'links' }, { kind: 'text' }] }],
  ...over,
})
// Big enough that markdown takes a good part of a second.
const BIG = `<title>Big</title>${'<p>Some <a href="/x">linked</a> <b>text</b> in a paragraph of a long page.</p>\n'.repeat(20_000)}`

const pools: ParsePool[] = []
const pool = (size = 2, timeoutMs = 60_000) => {
  const p = new ParsePool(size, timeoutMs)
  pools.push(p)
  return p
}
afterAll(() => pools.forEach((p) => p.close()))

describe('ParsePool', () => {
  test('a worker answers exactly what parsing in this thread answers', async () => {
    const doc = input('<html lang="de"><title>T</title><h1>Über</h1><p>a <a href="/b">b</a></p><table><tr><th>x</th></tr><tr><td>1</td></tr></table>')
    expect(await pool().parse(doc, NO_LOOKUPS)).toEqual(await parseDocument(doc, NO_LOOKUPS))
  })

  test('the main thread keeps running while a worker parses', async () => {
    const events: string[] = []
    const parsing = pool()
      .parse(input(BIG, { pipelines: [{ steps: [{ kind: 'markdown' }] }] }), NO_LOOKUPS)
      .then((r) => {
        events.push('parsed')
        return r
      })
    setTimeout(() => events.push('timer'), 1)
    const result = await parsing
    expect(events).toEqual(['timer', 'parsed'])
    expect((result.pipelines[0]!.steps[0] as { content: string }).content).toStartWith('Some [linked](https://a.example/x) **text** in a paragraph')
  })

  test('in this thread the same parse holds the timer back: the reason for the pool', async () => {
    const events: string[] = []
    const parsing = parseDocument(input(BIG, { pipelines: [{ steps: [{ kind: 'markdown' }] }] }), NO_LOOKUPS).then(() => events.push('parsed'))
    setTimeout(() => events.push('timer'), 1)
    await parsing
    await Bun.sleep(5)
    expect(events).toEqual(['parsed', 'timer'])
  })

  test('an unsupported content type comes back as the same ParseFailure', async () => {
    const err = await pool()
      .parse(input('x', { content_type: 'image/png' }), NO_LOOKUPS)
      .catch((e) => e)
    expect(err).toBeInstanceOf(ParseFailure)
    expect(err.code).toBe('unsupported_content_type')
    expect(err.message).toBe('content type image/png is not parsed; HTML, XHTML, plain text and JSON are')
  })

  test('a parse over its time limit fails, and the pool goes on with a fresh worker', async () => {
    // BIG three times over takes seconds; a small page, worker start included, well under the limit.
    const p = pool(1, 600)
    const err = await p.parse(input(BIG.repeat(3)), NO_LOOKUPS).catch((e) => e)
    expect(err).toBeInstanceOf(ParseTimeout)
    expect(err.message).toBe('parsing took longer than 0.6s')
    const again = await p.parse(input('<title>again</title>'), NO_LOOKUPS)
    expect((again.pipelines[0]!.steps[1] as { metadata: { title: string } }).metadata.title).toBe('again')
  })

  test("a new worker's start does not count against its first task's limit", async () => {
    // Loading the worker's modules from source takes 150-400 ms here, over this limit; the
    // small match itself takes a few ms, more when the machine is loaded. (Counted from the
    // spawn, this failed.)
    const p = pool(1, 120)
    const set = { category: 'products', patterns: { format: 'url_pattern' as const, patterns: ['/p/:id'] }, host: { domain: 'shop.example' } }
    const results = await p.match({ set, paths: ['/p/1'] })
    expect(results.map((r) => [r.url, r.matched])).toEqual([['https://shop.example/p/1', true]])
  })

  test('a worker that does not load within the startup limit fails its task, and the pool still closes', async () => {
    const p = new ParsePool(1, 60_000, 1)
    pools.push(p)
    const err = await p.parse(input('<title>x</title>'), NO_LOOKUPS).catch((e) => e)
    expect(err).toBeInstanceOf(PoolError)
    expect(err.message).toBe('the parse worker did not start')
    expect((p as unknown as { slots: unknown[] }).slots).toEqual([]) // the thread was ended, not left running
  })

  test('a worker that dies mid-parse fails its task at once, not at the time limit', async () => {
    const p = pool(1, 60_000)
    const pending = p.parse(input(BIG), NO_LOOKUPS).catch((e) => e)
    await Bun.sleep(50)
    // Stands in for a thread killed from outside (out of memory, say): the slot is private.
    ;(p as unknown as { slots: { worker: Worker }[] }).slots[0]!.worker.terminate()
    const started = Date.now()
    const err = await pending
    expect(err.message).toBe('the parse worker exited')
    expect(Date.now() - started).toBeLessThan(30_000)
    const again = await p.parse(input('<title>after</title>'), NO_LOOKUPS)
    expect((again.pipelines[0]!.steps[1] as { metadata: { title: string } }).metadata.title).toBe('after')
  })

  test('waiting in the queue does not count against the time limit', async () => {
    // One worker, twelve documents of about a tenth of the limit each: together far over it.
    const p = pool(1, 1500)
    const medium = input(BIG.slice(0, BIG.length / 8), { pipelines: [{ steps: [{ kind: 'markdown' }] }] })
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        p.parse(medium, NO_LOOKUPS).then(
          () => 'ok',
          (e) => e.message,
        ),
      ),
    )
    expect(results).toEqual(Array(12).fill('ok'))
  })

  test('a task over its limit fails alone: the tasks queued behind it run on a fresh worker', async () => {
    const p = pool(1, 600)
    const slow = p.parse(input(BIG.repeat(3)), NO_LOOKUPS).then(
      () => 'ok',
      (e) => e.constructor.name,
    )
    const quick = [1, 2, 3].map((i) => p.parse(input(`<title>q${i}</title>`), NO_LOOKUPS).then((r) => (r.pipelines[0]!.steps[1] as { metadata: { title: string } }).metadata.title))
    expect(await slow).toBe('ParseTimeout')
    expect(await Promise.all(quick)).toEqual(['q1', 'q2', 'q3'])
  })

  test("lanes take turns: one tenant's long queue does not hold back another's task", async () => {
    const p = pool(1, 60_000)
    const done: string[] = []
    const doc = (name: string) => input(`<title>${name}</title>${'<p>x</p>'.repeat(2000)}`)
    const a = ['a1', 'a2', 'a3', 'a4', 'a5'].map((n) => p.parse(doc(n), NO_LOOKUPS, 'acme').then(() => done.push(n)))
    const b = p.parse(doc('b1'), NO_LOOKUPS, 'globex').then(() => done.push('b1'))
    await Promise.all([...a, b])
    // a1 was running when the rest arrived; then the lanes alternate while both have work.
    expect(done).toEqual(['a1', 'a2', 'b1', 'a3', 'a4', 'a5'])
  })

  test('closing fails what is pending', async () => {
    const p = new ParsePool(1, 60_000)
    const pending = p.parse(input(BIG), NO_LOOKUPS).catch((e) => e)
    p.close()
    const err = await pending
    expect(err).toBeInstanceOf(Error)
    expect(err.message).toBe('the parse pool was closed')
  })

  test('lookups are made before the hand-off: the pattern sets of the final URL and the named data maps only', () => {
    const asked: string[] = []
    const sets = [{ category: 'products', patterns: { format: 'url_pattern' as const, patterns: ['/moved'] } }]
    const ctx: ParseContext = {
      patternSets: (url) => (asked.push(url), sets),
      dataMap: (id) => (id === 'm1' ? { fields: [{ name: 'x', selector: 'p' }] } : null),
    }
    const doc = input('', {
      redirects: [{ url: 'https://a.example/doc', location: '/moved' }],
      pipelines: [
        {
          guards: [{ kind: 'category', categories: ['products'] }],
          steps: [
            { kind: 'data_map', id: 'm1' },
            { kind: 'data_map', id: 'm2' },
          ],
        },
      ],
    })
    expect(snapshotContext(doc, ctx)).toEqual({ sets, maps: { m1: { fields: [{ name: 'x', selector: 'p' }] } } })
    expect(asked).toEqual(['https://a.example/moved'])
    expect(snapshotContext(input(''), ctx)).toEqual({ sets: [], maps: {} })
    expect(asked).toHaveLength(1) // no category guard, no lookup
  })

  test('pattern matches run on a worker and answer what matching here answers', async () => {
    const set = { category: 'products', patterns: { format: 'regex' as const, patterns: ['/p/\\d+$', 'sale'] }, host: { domain: 'shop.example' } }
    const paths = ['/p/12', '/sale/p/3', '/about', 'https://other.example/p/9#x']
    const results = await pool().match({ set, paths })
    expect(results).toEqual(matchPaths(set, paths))
    expect(results.map((r) => [r.url, r.matched, r.patterns, r.category])).toEqual([
      ['https://shop.example/p/12', true, ['/p/\\d+$'], 'products'],
      ['https://shop.example/sale/p/3', true, ['/p/\\d+$', 'sale'], 'products'],
      ['https://shop.example/about', false, [], null],
      ['https://other.example/p/9', true, ['/p/\\d+$'], 'products'],
    ])
  })
})
