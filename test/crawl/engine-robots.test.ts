/**
 * robots.txt and sitemaps in a crawl (design.md §5 and its rule 8): robots.txt once per host per
 * run, disallowed URLs never fetched and logged, 404 allows all, respect_robots false ignores it;
 * sitemaps from robots `Sitemap:` lines and /sitemap.xml, indexes and gzip, seeding the frontier
 * at depth 0 within the scope.
 */
import { describe, expect, test } from 'bun:test'
import { linkHash } from '../../src/core/url'
import { useCrawlEnv, pathOf, type CrawlEnv } from '../helpers/crawl-run'
import { crawlSite, type CrawlSite, withSite } from '../helpers/crawl-site'

const env = useCrawlEnv()

describe('robots.txt', () => {
  const pages = {
    '/': { links: ['/a', '/private/x', '/private/ok', '/b?session=1', '/t-only', '/star-only'] },
    '/a': { links: ['/private/y', '/'] },
    '/private/x': {},
    '/private/y': {},
    '/private/ok': {},
    '/b?session=1': {},
    '/t-only': {},
    '/star-only': {},
  }
  // The trawl group wins over `*` for the trawl user agent.
  const robots = 'User-agent: *\nDisallow: /star-only\n\nUser-agent: trawl\nDisallow: /private/\nAllow: /private/ok\nDisallow: /*session=\nDisallow: /t-only\n'

  test('is fetched once per host and run; disallowed URLs are never fetched and are logged', () =>
    withSite(crawlSite({ pages, robots, hosts: { localhost: { pages, robots } } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/'), site.url('/', 'localhost')], politeness: { per_host_concurrency: 3 } })
      for (const host of ['127.0.0.1', 'localhost']) {
        expect(site.hits('/robots.txt', host)).toBe(1)
        expect(
          site
            .pageRequests(host)
            .map((r) => r.path)
            .sort(),
        ).toEqual(['/', '/a', '/private/ok', '/star-only'])
      }
      const skipped = await env.logs(run.id, 'steps=robots&statuses=skipped')
      expect(skipped.length).toBe(8)
      for (const l of skipped) expect(l.error_reason).toBe('robots_disallowed')
      const y = skipped.find((l) => l.url === site.url('/private/y'))
      expect(y.depth).toBe(2)
      expect(y.parent_url_hash).toBe(linkHash(site.url('/a')))
      // The robots.txt fetches themselves are logged with their status.
      const fetched = await env.logs(run.id, 'steps=robots&statuses=ok')
      expect(fetched.map((l) => l.http_status)).toEqual([200, 200])
      expect(run.stats.visited).toBe(8)
    }))

  test('a 404 robots.txt allows everything', () =>
    withSite(crawlSite({ pages }), async (site) => {
      await env.crawl({ seeds: [site.url('/')] })
      expect(site.pageRequests().length).toBe(8)
    }))

  test('respect_robots false fetches what robots.txt disallows', () =>
    withSite(crawlSite({ pages, robots: 'User-agent: *\nDisallow: /\n' }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], politeness: { respect_robots: false } })
      expect(site.pageRequests().length).toBe(8)
      expect((await env.logs(run.id, 'error_reasons=robots_disallowed')).length).toBe(0)
    }))

  test('the robots.txt of a host found through a link is fetched from that host (http) and obeyed', () =>
    withSite(
      crawlSite({
        pages: { '/': { links: ['http://localhost:{port}/x', 'http://localhost:{port}/blocked'] } },
        hosts: { localhost: { pages: { '/x': {}, '/blocked': {} }, robots: 'User-agent: *\nDisallow: /blocked\n' } },
      }),
      async (site) => {
        const run = await env.crawl({ seeds: [site.url('/')], scope: { domains: 'any' } })
        expect(site.hits('/robots.txt', 'localhost')).toBe(1)
        expect(site.hits('/x', 'localhost')).toBe(1)
        expect(site.hits('/blocked', 'localhost')).toBe(0)
        const robotsFetch = (await env.logs(run.id, 'steps=robots')).find((l) => l.url.includes('localhost') && l.url.endsWith('/robots.txt'))
        expect(robotsFetch?.url).toBe(site.url('/robots.txt', 'localhost'))
        expect(robotsFetch?.http_status).toBe(200)
      },
    ))
})

describe('sitemaps', () => {
  const spec = () => ({
    pages: { '/': { links: ['/linked'] }, '/linked': {}, '/orphan-a': {}, '/orphan-b': {}, '/orphan-gz': {}, '/orphan-std': {} },
    robots: 'User-agent: *\nDisallow: /nothing\nSitemap: http://127.0.0.1:{port}/maps/index.xml\n',
    sitemaps: {
      '/maps/index.xml': { sitemaps: ['http://127.0.0.1:{port}/maps/a.xml', 'http://127.0.0.1:{port}/maps/b.xml.gz'] },
      '/maps/a.xml': { urls: ['http://127.0.0.1:{port}/orphan-a', 'http://127.0.0.1:{port}/orphan-b', 'http://localhost:{port}/elsewhere', 'http://127.0.0.1:{port}/linked'] },
      '/maps/b.xml.gz': { urls: ['http://127.0.0.1:{port}/orphan-gz'], gzip: true },
      '/sitemap.xml': { urls: ['http://127.0.0.1:{port}/orphan-std'] },
    },
  })

  test('robots Sitemap: lines, /sitemap.xml, indexes and gzip seed the frontier at depth 0, within the scope', () =>
    withSite(crawlSite(spec()), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], sitemaps: true })
      for (const p of ['/', '/linked', '/orphan-a', '/orphan-b', '/orphan-gz', '/orphan-std']) expect(site.hits(p), p).toBe(1)
      expect(site.requests.filter((r) => r.host === 'localhost').length).toBe(0)
      for (const p of ['/maps/index.xml', '/maps/a.xml', '/maps/b.xml.gz', '/sitemap.xml', '/robots.txt']) expect(site.hits(p), p).toBe(1)
      const visits = await env.visits(run.id)
      const depth = new Map(visits.map((v) => [pathOf(v.url), v.depth]))
      for (const p of ['/orphan-a', '/orphan-b', '/orphan-gz', '/orphan-std']) expect(depth.get(p), p).toBe(0)
      expect(run.stats.visited).toBe(6)
    }))

  test('without sitemaps: true no sitemap is read', () =>
    withSite(crawlSite(spec()), async (site) => {
      await env.crawl({ seeds: [site.url('/')] })
      expect(
        site
          .pageRequests()
          .map((r) => r.path)
          .sort(),
      ).toEqual(['/', '/linked'])
      expect(site.hits('/sitemap.xml')).toBe(0)
      expect(site.hits('/maps/index.xml')).toBe(0)
    }))

  test('every seed host has its robots Sitemap: lines read', () =>
    withSite(
      crawlSite({
        pages: { '/': {}, '/orphan': {} },
        robots: 'User-agent: *\nDisallow: /nothing\nSitemap: http://127.0.0.1:{port}/custom.xml\n',
        sitemaps: { '/custom.xml': { urls: ['http://127.0.0.1:{port}/orphan'] } },
        hosts: {
          localhost: {
            pages: { '/': {}, '/orphan': {} },
            robots: 'User-agent: *\nDisallow: /nothing\nSitemap: http://localhost:{port}/custom.xml\n',
            sitemaps: { '/custom.xml': { urls: ['http://localhost:{port}/orphan'] } },
          },
        },
      }),
      async (site) => {
        await env.crawl({ seeds: [site.url('/'), site.url('/', 'localhost')], sitemaps: true })
        expect(site.hits('/orphan')).toBe(1)
        expect(site.hits('/orphan', 'localhost')).toBe(1)
        expect(site.hits('/robots.txt')).toBe(1)
        expect(site.hits('/robots.txt', 'localhost')).toBe(1)
      },
    ))
})
