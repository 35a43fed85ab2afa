/**
 * The default pipeline's parsed artifact is not stored twice (decision 103): its row names the
 * page's raw body, and /blob makes the JSON again from that body, byte for byte what the crawl
 * made (its `size`, counted at crawl time, is the length served). Deleting either artifact leaves
 * the other whole; a user pipeline's JSON is still a blob of its own.
 */
import { describe, expect, test } from 'bun:test'
import { linkHash } from '../../src/core/url'
import { useCrawlEnv } from '../helpers/crawl-run'
import { crawlSite, withSite } from '../helpers/crawl-site'

const env = useCrawlEnv()
const TENANT = 'derived'

const blob = (id: string) => env.api.call('GET', `/v1/artifacts/${id}/blob`, { tenant: TENANT })
const kindOf = (artifacts: any[], url: string, kind: string) => artifacts.find((a) => a.url_hash === linkHash(url) && a.kind === kind)

describe('a default crawl', () => {
  test("a page's parsed artifact names its raw body, and its JSON (made again) is as long as the size counted when crawled", () =>
    withSite(
      crawlSite({
        pages: {
          '/': { title: 'Home', links: ['/a', { href: 'b?x=1', text: 'Bee & more' }], html: '<p>caf\u00e9</p>' },
          '/a': { title: 'Page A', links: ['/'] },
          '/b?x=1': { title: 'B' },
        },
      }),
      async (site) => {
        const run = await env.crawl({ seeds: [site.url('/')] }, { tenant: TENANT })
        expect(run.stats.visited).toBe(3)
        const artifacts = await env.artifacts(run.id, '', TENANT)
        expect(artifacts.length).toBe(6)
        for (const path of ['/', '/a', '/b?x=1']) {
          const raw = kindOf(artifacts, site.url(path), 'raw')
          const parsed = kindOf(artifacts, site.url(path), 'parsed')
          expect(parsed.blob_key).toBe(raw.blob_key)
          expect(parsed.content_type).toBe('application/json')
          const got = await blob(parsed.id)
          expect(got.status).toBe(200)
          expect(got.headers.get('content-type')).toBe('application/json')
          const bytes = new Uint8Array(await new Response(got.text).arrayBuffer())
          expect(bytes.byteLength).toBe(parsed.size)
          expect(got.headers.get('content-length')).toBe(String(parsed.size))
          const doc = JSON.parse(got.text)
          expect(doc.url).toBe(site.url(path))
          expect(doc.base_url).toBe(site.url(path))
          expect(doc.pipeline.identifier).toBe('default')
          expect(doc.pipeline.steps[0].kind).toBe('metadata')
        }
        const root = JSON.parse((await blob(kindOf(artifacts, site.url('/'), 'parsed').id)).text)
        expect(root.pipeline.steps[0].metadata.title).toBe('Home')
        expect(root.pipeline.links.map((l: any) => [l.url, l.text])).toEqual([
          [site.url('/a'), '/a'],
          [site.url('/b?x=1'), 'Bee & more'],
        ])
        // Only the raw bodies were put: one blob a page, of the page's own type.
        const keys = [...new Set(artifacts.map((a) => a.blob_key))]
        expect(keys.length).toBe(3)
        for (const key of keys) expect((await env.api.blobs.head(key))?.contentType).toBe('text/html; charset=utf-8')
      },
    ))

  test("a redirected page's parsed artifact resolves its links against where the redirect led", () =>
    withSite(
      crawlSite({
        pages: {
          '/': { links: ['/old/page'] },
          '/old/page': { redirect: '/new/page', redirectStatus: 301 },
          '/new/page': { title: 'Moved', links: ['sibling'] },
          '/new/sibling': {},
        },
      }),
      async (site) => {
        const run = await env.crawl({ seeds: [site.url('/')] }, { tenant: TENANT })
        const artifacts = await env.artifacts(run.id, '', TENANT)
        const parsed = kindOf(artifacts, site.url('/old/page'), 'parsed')
        expect(parsed).toBeDefined()
        const got = await blob(parsed.id)
        expect(new TextEncoder().encode(got.text).byteLength).toBe(parsed.size)
        const doc = JSON.parse(got.text)
        expect(doc.url).toBe(site.url('/old/page'))
        expect(doc.base_url).toBe(site.url('/new/page'))
        expect(doc.pipeline.links.map((l: any) => l.url)).toEqual([site.url('/new/sibling')])
      },
    ))

  test('deleting the raw artifact keeps the parsed one readable; deleting both removes the body', () =>
    withSite(crawlSite({ pages: { '/': { title: 'Only', links: ['/x'] }, '/x': {} } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], limits: { max_depth: 0 } }, { tenant: TENANT })
      const artifacts = await env.artifacts(run.id, '', TENANT)
      const raw = kindOf(artifacts, site.url('/'), 'raw')
      const parsed = kindOf(artifacts, site.url('/'), 'parsed')
      const before = (await blob(parsed.id)).text
      expect((await env.api.call('DELETE', `/v1/artifacts/${raw.id}`, { tenant: TENANT })).status).toBe(204)
      expect((await blob(raw.id)).status).toBe(404)
      expect(await env.api.blobs.head(raw.blob_key)).not.toBeNull()
      const after = await blob(parsed.id)
      expect(after.status).toBe(200)
      expect(after.text).toBe(before)
      expect(JSON.parse(after.text).pipeline.steps[0].metadata.title).toBe('Only')
      expect((await env.api.call('DELETE', `/v1/artifacts/${parsed.id}`, { tenant: TENANT })).status).toBe(204)
      expect(await env.api.blobs.head(raw.blob_key)).toBeNull()
      expect(await env.artifacts(run.id, '', TENANT)).toEqual([])
    }))

  test('the parsed artifact is not readable by another tenant', () =>
    withSite(crawlSite({ pages: { '/': {} } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')] }, { tenant: TENANT })
      const parsed = kindOf(await env.artifacts(run.id, '', TENANT), site.url('/'), 'parsed')
      const other = await env.api.call('GET', `/v1/artifacts/${parsed.id}/blob`, { tenant: 'someone-else' })
      expect(other.status).toBe(404)
      expect(JSON.parse(other.text)).toEqual({ error: 'not_found', message: 'artifact not found' })
    }))
})

describe('a crawl with its own pipeline', () => {
  test('its parsed JSON is a blob of its own, not the raw body', () =>
    withSite(crawlSite({ pages: { '/': { title: 'Mine', links: ['/a'] }, '/a': {} } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], pipelines: [{ identifier: 'mine', steps: [{ kind: 'metadata' }] }] }, { tenant: TENANT })
      const artifacts = await env.artifacts(run.id, '', TENANT)
      const raw = kindOf(artifacts, site.url('/'), 'raw')
      const parsed = kindOf(artifacts, site.url('/'), 'parsed')
      expect(parsed.pipeline_id).toBe('mine')
      expect(parsed.blob_key).not.toBe(raw.blob_key)
      const stored = await env.api.blobs.head(parsed.blob_key)
      expect(stored?.contentType).toBe('application/json')
      expect(stored?.size).toBe(parsed.size)
      expect(JSON.parse((await blob(parsed.id)).text).pipeline.steps[0].metadata.title).toBe('Mine')
    }))
})
