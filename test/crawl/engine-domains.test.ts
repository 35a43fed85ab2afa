/**
 * scope.domains (design.md §4): same_host, same_domain (registrable domain), any.
 *
 * Several registrable domains need several host names that resolve to loopback. The fetcher
 * resolves names with node:dns/promises lookup, which knows `localhost` but not its subdomains,
 * so this file answers `*.localhost` with 127.0.0.1 and hands every other name to the real
 * lookup (harmless to other files should the module mock outlive this one).
 */
import { describe, expect, mock, test } from 'bun:test'
import * as realDns from 'node:dns/promises'

const realLookup = realDns.lookup
mock.module('node:dns/promises', () => ({
  ...realDns,
  lookup: (host: string, opts?: { all?: boolean }) =>
    host.endsWith('.localhost') ? Promise.resolve(opts?.all ? [{ address: '127.0.0.1', family: 4 }] : { address: '127.0.0.1', family: 4 }) : realLookup(host, opts as never),
}))

const { useCrawlEnv } = await import('../helpers/crawl-run')
const { crawlSite, withSite } = await import('../helpers/crawl-site')
type CrawlSite = import('../helpers/crawl-site').CrawlSite

const env = useCrawlEnv()

const edgeList = async (runId: string) => (await env.edges(runId)).map((e) => `${e.parent.url} -> ${e.child.url}`).sort()

describe('scope.domains', () => {
  // respect_robots false keeps these about scope alone: robots.txt of hosts found through links
  // is the subject of engine-robots.test.ts.
  const hostsSite = () =>
    crawlSite({
      pages: { '/': { links: ['/in', 'http://localhost:{port}/lh', 'http://b.site.localhost:{port}/sib', 'http://other.localhost:{port}/oth', 'http://site.localhost:{port}/apex'] }, '/in': {} },
      hosts: {
        'a.site.localhost': {
          pages: { '/': { links: ['/in', 'http://b.site.localhost:{port}/sib', 'http://other.localhost:{port}/oth', 'http://site.localhost:{port}/apex', 'http://127.0.0.1:{port}/ip'] }, '/in': {} },
        },
        localhost: { pages: { '/lh': {} } },
        'b.site.localhost': { pages: { '/sib': {} } },
        'other.localhost': { pages: { '/oth': {} } },
        'site.localhost': { pages: { '/apex': {} } },
      },
    })
  const fetched = (site: CrawlSite) =>
    site.requests
      .filter((r) => r.pathname !== '/robots.txt')
      .map((r) => `${r.host}${r.path}`)
      .sort()

  test('same_host (the default) follows links of the seed host only', () =>
    withSite(hostsSite(), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], politeness: { respect_robots: false } })
      expect(fetched(site)).toEqual(['127.0.0.1/', '127.0.0.1/in'])
      // Edges are kept for the in-scope links of visited pages.
      expect(await edgeList(run.id)).toEqual([`${site.url('/')} -> ${site.url('/in')}`])
      const discover = (await env.logs(run.id, 'steps=discover')).find((l) => l.url === site.url('/'))
      expect(discover.status).toBe('ok')
      expect(discover.error_detail).toBeUndefined()
    }))

  test('same_domain follows sibling subdomains of the registrable domain', () =>
    withSite(hostsSite(), async (site) => {
      await env.crawl({ seeds: [site.url('/', 'a.site.localhost')], scope: { domains: 'same_domain' }, politeness: { respect_robots: false } })
      expect(fetched(site)).toEqual(['a.site.localhost/', 'a.site.localhost/in', 'b.site.localhost/sib', 'site.localhost/apex'])
    }))

  test('any follows every host', () =>
    withSite(hostsSite(), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], scope: { domains: 'any' }, politeness: { respect_robots: false } })
      expect(fetched(site)).toEqual(['127.0.0.1/', '127.0.0.1/in', 'b.site.localhost/sib', 'localhost/lh', 'other.localhost/oth', 'site.localhost/apex'])
      expect((await edgeList(run.id)).length).toBe(5)
      const hosts = (await env.all('/v1/hosts')).map((h) => h.domain)
      for (const h of ['localhost', 'b.site.localhost', 'other.localhost', 'site.localhost']) expect(hosts).toContain(h)
    }))
})
