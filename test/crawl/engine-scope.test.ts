/**
 * What a crawl follows (design.md §4 scope, §5 rule 5): include and exclude regexes
 * (scope.domains is in engine-domains.test.ts), nofollow, frontier dedup on the normalized URL, and redirects
 * (the final URL is seen; loops and long chains end as redirect_limit).
 */
import { describe, expect, test } from 'bun:test'
import { linkHash } from '../../src/core/url'
import { useCrawlEnv, pathOf, type CrawlEnv } from '../helpers/crawl-run'
import { crawlSite, type CrawlSite, withSite } from '../helpers/crawl-site'

const env = useCrawlEnv()

const edgeList = async (runId: string) => (await env.edges(runId)).map((e) => `${e.parent.url} -> ${e.child.url}`).sort()

describe('include and exclude', () => {
  test('include keeps matching URLs, exclude drops matching ones (RE2 on the absolute URL)', () =>
    withSite(
      crawlSite({
        pages: {
          '/docs/': { links: ['/docs/a', '/blog/b', '/docs/c?print=1', '/docs/d'] },
          '/docs/a': { links: ['/blog/e', '/docs/f'] },
          '/docs/d': {},
          '/docs/f': {},
          '/blog/b': {},
          '/blog/e': {},
          '/docs/c?print=1': {},
        },
      }),
      async (site) => {
        const run = await env.crawl({ seeds: [site.url('/docs/')], scope: { include: ['^http://127\\.0\\.0\\.1:\\d+/docs/'], exclude: ['[?&]print=\\d'] } })
        expect(
          site
            .pageRequests()
            .map((r) => r.path)
            .sort(),
        ).toEqual(['/docs/', '/docs/a', '/docs/d', '/docs/f'])
        const edges = await edgeList(run.id)
        expect(edges.some((e) => e.includes('/blog/'))).toBe(false)
        expect(edges.some((e) => e.includes('print'))).toBe(false)
      },
    ))
})

describe('nofollow', () => {
  const pages = {
    '/': { links: [{ href: '/nf', rel: 'nofollow' }, '/f', { href: '/both', rel: 'nofollow' }, '/both', '/meta'] },
    '/nf': {},
    '/f': {},
    '/both': {},
    '/meta': { metaRobots: 'nofollow', links: ['/from-meta'] },
    '/from-meta': {},
  }

  test('rel=nofollow links are recorded as edges but not followed', () =>
    withSite(crawlSite({ pages }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')] })
      expect(
        site
          .pageRequests()
          .map((r) => r.path)
          .sort(),
      ).toEqual(['/', '/both', '/f', '/meta'])
      const edges = await edgeList(run.id)
      expect(edges).toContain(`${site.url('/')} -> ${site.url('/nf')}`)
      expect(edges).toContain(`${site.url('/meta')} -> ${site.url('/from-meta')}`)
    }))

  test('follow_nofollow follows them', () =>
    withSite(crawlSite({ pages }), async (site) => {
      await env.crawl({ seeds: [site.url('/')], scope: { follow_nofollow: true } })
      expect(
        site
          .pageRequests()
          .map((r) => r.path)
          .sort(),
      ).toEqual(['/', '/both', '/f', '/from-meta', '/meta', '/nf'])
    }))
})

describe('dedup by the normalized URL', () => {
  test('spellings of one URL are fetched once; path case and trailing slashes stay distinct', () =>
    withSite(
      crawlSite({
        pages: {
          '/': {
            links: [
              '/a',
              '/a#frag',
              '/%61',
              'http://127.0.0.1:{port}/a',
              'HTTP://127.0.0.1:{port}/a#x',
              '/./a',
              '/x/../a',
              '/a?',
              '/b%7e',
              '/b~',
              '/c%2fd',
              '/c%2Fd',
              '/A',
              '/dir',
              '/dir/',
              '#top',
              '/',
            ],
          },
          '/a': { links: ['/', '/a', '/b%7E', '/A#y'] },
          '/b~': {},
          '/c%2Fd': {},
          '/A': {},
          '/dir': {},
          '/dir/': {},
        },
      }),
      async (site) => {
        const run = await env.crawl({ seeds: [site.url('/'), site.url('/#top'), `http://127.0.0.1:${site.port}`], politeness: { per_host_concurrency: 4 } })
        const paths = site.pageRequests().map((r) => r.path)
        expect(paths.sort()).toEqual(['/', '/A', '/a', '/b~', '/c%2Fd', '/dir', '/dir/'])
        expect(site.pageRequests().filter((r) => r.status === 404).length).toBe(0)
        expect(run.stats.visited).toBe(7)
        const visits = await env.visits(run.id)
        expect(visits.length).toBe(7)
        const edges = await edgeList(run.id)
        expect(new Set(edges).size).toBe(edges.length)
        expect(edges.filter((e) => e.startsWith(`${site.url('/')} -> `)).length).toBe(6)
      },
    ))
})

describe('redirects', () => {
  test('the final URL of a redirect is seen: linking to it later fetches nothing', () =>
    withSite(
      crawlSite({
        pages: {
          '/': { links: ['/old'] },
          '/old': { redirect: '/new', redirectStatus: 301 },
          '/new': { links: ['/other', '/new'] },
          '/other': { links: ['/new', '/old'] },
        },
      }),
      async (site) => {
        const run = await env.crawl({ seeds: [site.url('/')] })
        expect(site.hits('/old')).toBe(1)
        expect(site.hits('/new')).toBe(1)
        expect(site.hits('/other')).toBe(1)
        const raw = (await env.artifacts(run.id, 'kinds=raw')).find((a) => a.url_hash === linkHash(site.url('/old')))
        const blob = await env.api.call('GET', `/v1/artifacts/${raw.id}/blob`)
        expect(blob.text).toBe(new TextDecoder().decode(site.bodyOf('/new')))
        // /other was discovered through the redirected page (its links resolve against /new).
        expect((await env.visits(run.id)).map((v) => pathOf(v.url)).sort()).toEqual(['/', '/old', '/other'])
      },
    ))

  test('a redirect loop ends as a fetch error redirect_limit', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/loop/a', '/fine'] }, '/loop/a': { redirect: '/loop/b' }, '/loop/b': { redirect: '/loop/a' }, '/fine': {} } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')] })
      const err = await env.logs(run.id, 'steps=fetch&statuses=error')
      expect(err.length).toBe(1)
      expect(err[0].url).toBe(site.url('/loop/a'))
      expect(err[0].error_reason).toBe('redirect_limit')
      expect(site.hits('/loop/a') + site.hits('/loop/b')).toBe(6)
      expect(site.hits('/fine')).toBe(1)
      expect(run.stats).toMatchObject({ visited: 2, failed: 1, queued: 0 })
    }))

  test('a chain within fetch.max_redirects ends at its last page; every hop counts as seen, so links to them fetch nothing', () =>
    withSite(
      crawlSite({
        pages: {
          '/': { links: ['/r1', '/side'] },
          '/r1': { redirect: '/r2', redirectStatus: 301 },
          '/r2': { redirect: '/r3', redirectStatus: 302 },
          '/r3': { redirect: '/end', redirectStatus: 307 },
          '/end': { links: ['/r2'] },
          '/side': { links: ['/r3', '/end', '/r1'] },
        },
      }),
      async (site) => {
        const run = await env.crawl({ seeds: [site.url('/')], politeness: { per_host_concurrency: 1 } })
        for (const path of ['/', '/r1', '/r2', '/r3', '/end', '/side']) expect({ path, hits: site.hits(path) }).toEqual({ path, hits: 1 })
        expect(run.stats).toMatchObject({ failed: 0, queued: 0 })
        // The chain is one visit, under the URL that was linked; its raw artifact is the last page's body.
        expect((await env.visits(run.id)).map((v) => pathOf(v.url)).sort()).toEqual(['/', '/r1', '/side'])
        const raw = (await env.artifacts(run.id, 'kinds=raw')).find((a) => a.url_hash === linkHash(site.url('/r1')))
        expect((await env.api.call('GET', `/v1/artifacts/${raw.id}/blob`)).text).toBe(new TextDecoder().decode(site.bodyOf('/end')))
      },
    ))

  test('a chain longer than fetch.max_redirects ends as redirect_limit', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/r1'] }, '/r1': { redirect: '/r2' }, '/r2': { redirect: '/r3' }, '/r3': { redirect: '/end' }, '/end': {} } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], fetch: { max_redirects: 2 } })
      expect(site.hits('/end')).toBe(0)
      const err = await env.logs(run.id, 'error_reasons=redirect_limit')
      expect(err.map((l) => l.url)).toEqual([site.url('/r1')])
    }))
})

describe('categories', () => {
  test('scope.categories follows only links the host’s pattern sets put in those categories; seeds are crawled anyway', () =>
    withSite(
      crawlSite({
        pages: {
          '/': { links: ['/products/1', '/products/2', '/blog/x', '/about'] },
          '/products/1': { links: ['/products/3'] },
          '/products/2': {},
          '/products/3': {},
          '/blog/x': {},
          '/about': {},
        },
      }),
      async (site) => {
        const hosts = await env.api.put('/v1/hosts', { hosts: ['127.0.0.1'] })
        const hash = hosts.body.data[0].hash
        expect((await env.api.post(`/v1/hosts/${hash}/patterns`, { category: 'products', patterns: { format: 'url_pattern', patterns: ['/products/:id'] } })).status).toBe(201)
        expect((await env.api.post(`/v1/hosts/${hash}/patterns`, { category: 'blogs', patterns: { format: 'regex', patterns: ['/blog/'] } })).status).toBe(201)
        const run = await env.crawl({ seeds: [site.url('/')], scope: { categories: ['products'] } })
        expect(run.status).toBe('finished')
        expect(
          site
            .pageRequests()
            .map((r) => r.path)
            .sort(),
        ).toEqual(['/', '/products/1', '/products/2', '/products/3'])
        const edges = await edgeList(run.id)
        expect(edges.some((e) => e.includes('/blog/') || e.includes('/about'))).toBe(false)
      },
    ))
})
