/**
 * Discovery (src/crawl/discovery.ts): the run's seen set and what a page's links come to, on
 * parse results made by hand, without an engine.
 */
import { describe, expect, test } from 'bun:test'
import { linkHash } from '../../src/core/url'
import { Discovery } from '../../src/crawl/discovery'
import { resolveConfig, type CrawlConfig } from '../../src/crawl/manifest'
import { Scope } from '../../src/crawl/scope'
import type { ParseResult } from '../../src/parse/pipeline'
import type { LinkOut } from '../../src/parse/scan'
import { NO_CONTEXT } from '../../src/parse/pipeline'
import { ASSET, PAGE, type Claimed } from '../../src/store/frontier'

const SITE = 'https://a.example'
const u = (path: string) => `${SITE}${path}`

function discovery(config: Partial<CrawlConfig> = {}) {
  const cfg = resolveConfig({ seeds: [u('/')], ...config })
  return new Discovery(cfg, new Scope(cfg.seeds!, { domains: cfg.scope!.domains!, include: cfg.scope!.include ?? [], exclude: cfg.scope!.exclude ?? [] }), NO_CONTEXT)
}

const link = (url: string, nofollow = false): LinkOut => ({ url, text: '', rel: nofollow ? ['nofollow'] : [], nofollow })

function parsed(links: LinkOut[], extra: { canonical?: string; assets?: string[] } = {}): ParseResult {
  const metadata = { canonical: extra.canonical ?? null } as never
  return {
    url: u('/'),
    base_url: u('/'),
    content_type: 'text/html',
    charset: 'utf-8',
    pipelines: [{ identifier: 'default', priority: 0, status: 'ran', skipped_reason: null, links, steps: [{ kind: 'metadata', metadata }] }],
    assets: extra.assets,
  }
}

const page = (path: string, depth = 0): Claimed => ({ hash: linkHash(u(path)), url: u(path), host: 'a.example', depth, parent: null, kind: PAGE, attempts: 0, seq: 1 })

describe('a page’s links', () => {
  test('in-scope children once each in the order found, normalized; the page itself and other hosts left out; unseen ones queued one level down', () => {
    const d = discovery()
    const found = d.found(page('/'), parsed([link(u('/a')), link('https://other.example/x'), link(u('/')), link(u('/b')), link('HTTPS://A.EXAMPLE/a'), link(u('/a'))]))
    expect(found.children).toEqual([linkHash(u('/a')), linkHash(u('/b'))])
    expect(found.next.map((e) => [e.url, e.depth, e.parent, e.kind, e.host])).toEqual([
      [u('/a'), 1, linkHash(u('/')), PAGE, 'a.example'],
      [u('/b'), 1, linkHash(u('/')), PAGE, 'a.example'],
    ])
    expect(found).toMatchObject({ uncataloged: [], depthCut: false })
  })

  test('what is queued is seen: a second page linking to it queues nothing, but still names it as a child', () => {
    const d = discovery()
    const first = d.found(page('/'), parsed([link(u('/a'))]))
    expect(d.fresh(first.next)).toEqual({ fresh: first.next, uncataloged: [u('/a')] })
    const second = d.found(page('/b', 1), parsed([link(u('/a'))]))
    expect(second.next).toEqual([])
    expect(second.children).toEqual([linkHash(u('/a'))])
    // Offered again, it is not fresh.
    expect(d.fresh(first.next)).toEqual({ fresh: [], uncataloged: [] })
  })

  test('pipelines sharing links give each URL once; links met on an earlier page are not repeats of this one', () => {
    const d = discovery()
    const two = (links: LinkOut[], more: LinkOut[]): ParseResult => {
      const one = parsed(links)
      return { ...one, pipelines: [one.pipelines[0]!, { ...one.pipelines[0]!, identifier: 'second', links: more }] }
    }
    const found = d.found(page('/'), two([link(u('/a')), link(u('/b'), true)], [link(u('/b')), link(u('/c'))]))
    expect(found.children).toEqual([linkHash(u('/a')), linkHash(u('/b')), linkHash(u('/c'))])
    // /b is nofollow in one pipeline and followed in the other: followed.
    expect(found.next.map((e) => e.url)).toEqual([u('/a'), u('/b'), u('/c')])
    d.fresh(found.next)
    // The same links on the next page, each once: each is one child, none new.
    const again = d.found(page('/x'), parsed([link(u('/c')), link(u('/a')), link(u('/d'))]))
    expect(again.children).toEqual([linkHash(u('/c')), linkHash(u('/a')), linkHash(u('/d'))])
    expect(again.next.map((e) => e.url)).toEqual([u('/d')])
  })

  test('a resumed run’s frontier is seen from the start', () => {
    const d = discovery()
    d.seen([linkHash(u('/a'))])
    const found = d.found(page('/'), parsed([link(u('/a')), link(u('/b'))]))
    expect(found.next.map((e) => e.url)).toEqual([u('/b')])
  })

  test('a nofollow link is a child and gets its catalogue row, but is not queued; a later followed one is queued without a second row', () => {
    const d = discovery()
    const found = d.found(page('/'), parsed([link(u('/a'), true)]))
    expect(found).toMatchObject({ next: [], children: [linkHash(u('/a'))], uncataloged: [u('/a')], depthCut: false })
    // Another page links to it plainly: queued, and its catalogue row is there already.
    const later = d.found(page('/b'), parsed([link(u('/a'))]))
    expect(later.next.map((e) => e.url)).toEqual([u('/a')])
    expect(d.fresh(later.next)).toEqual({ fresh: later.next, uncataloged: [] })
    // A nofollow and a followed spelling of one URL on one page: followed.
    const both = discovery().found(page('/'), parsed([link(u('/c'), true), link(u('/c'))]))
    expect(both.next.map((e) => e.url)).toEqual([u('/c')])
    expect(both.uncataloged).toEqual([])
  })

  test('follow_nofollow queues nofollow links too', () => {
    const d = discovery({ scope: { follow_nofollow: true } })
    expect(d.found(page('/'), parsed([link(u('/a'), true)])).next.map((e) => e.url)).toEqual([u('/a')])
  })

  test('past max_depth: children catalogued once, not queued, and the cut is told only for followable unseen ones', () => {
    const d = discovery({ limits: { max_depth: 1 } })
    const cut = d.found(page('/p', 1), parsed([link(u('/a')), link(u('/b'))]))
    expect(cut).toMatchObject({ next: [], children: [linkHash(u('/a')), linkHash(u('/b'))], uncataloged: [u('/a'), u('/b')], depthCut: true })
    // Met again: no second catalogue row.
    expect(d.found(page('/q', 1), parsed([link(u('/a'))])).uncataloged).toEqual([])
    // Nofollow children are not a cut; seen ones are not either.
    expect(d.found(page('/r', 1), parsed([link(u('/n'), true)])).depthCut).toBe(false)
    d.seen([linkHash(u('/s'))])
    expect(d.found(page('/t', 1), parsed([link(u('/s'))])).depthCut).toBe(false)
  })

  test('rel=canonical is queued at the page’s own depth and parent; assets only when the run stores them', () => {
    const withCanonical = discovery().found({ ...page('/x', 2), parent: linkHash(u('/')) }, parsed([], { canonical: u('/canonical') }))
    expect(withCanonical.next.map((e) => [e.url, e.depth, e.parent])).toEqual([[u('/canonical'), 2, linkHash(u('/'))]])
    const assets = parsed([], { assets: [u('/s.css'), 'https://cdn.example/x.js'] })
    expect(discovery().found(page('/'), assets).next).toEqual([])
    const stored = discovery({ store: { assets: true } }).found(page('/'), assets)
    expect(stored.next.map((e) => [e.url, e.kind, e.depth])).toEqual([[u('/s.css'), ASSET, 1]])
  })
})

describe('fetched without being queued (a redirect’s target)', () => {
  test('markFetched: new, known as a catalogue row only, or queued already', () => {
    const d = discovery({ limits: { max_depth: 0 } })
    expect(d.markFetched(linkHash(u('/new')))).toEqual({ added: true, cataloged: false })
    expect(d.markFetched(linkHash(u('/new')))).toEqual({ added: false, cataloged: true })
    // Depth-cut: catalogued, not queued; then fetched through a redirect.
    d.found(page('/'), parsed([link(u('/cut'))]))
    expect(d.markFetched(linkHash(u('/cut')))).toEqual({ added: true, cataloged: true })
    // Now seen: linked again past the depth limit, it is no cut and needs no catalogue row.
    expect(d.found(page('/'), parsed([link(u('/cut'))]))).toMatchObject({ depthCut: false, uncataloged: [] })
  })
})
