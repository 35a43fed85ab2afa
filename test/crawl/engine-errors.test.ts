/**
 * Error pages in a crawl (design.md §5-6): 404 and 500 answers (500 retried by the fetcher), pages
 * slower than fetch.timeout, bodies over store.max_body_bytes, a body the blob store refuses
 * (store_error), and content that is not parsed (its raw artifact still stored with its content type).
 */
import { describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { linkHash } from '../../src/core/url'
import { useCrawlEnv, type CrawlEnv } from '../helpers/crawl-run'
import { crawlSite, type CrawlSite, withSite } from '../helpers/crawl-site'

const env = useCrawlEnv()

const PDF = new TextEncoder().encode('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n')
const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='), (c) => c.charCodeAt(0))

async function blobBytes(id: string): Promise<{ type: string | null; bytes: Uint8Array }> {
  const res = await env.api.app.handle(new Request(`http://trawl.test/v1/artifacts/${id}/blob`, { headers: { 'x-tenant-id': 'acme' } }))
  return { type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) }
}

describe('error answers', () => {
  const pages = {
    '/': { links: ['/missing', '/broken', '/ok'] },
    '/broken': { status: 500, body: 'internal error' },
    '/ok': {},
  }

  test('404: a fetch error http_status with the status; nothing parsed; the run goes on', () =>
    withSite(crawlSite({ pages }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')] })
      expect(site.hits('/missing')).toBe(1)
      expect(site.hits('/ok')).toBe(1)
      const logs = (await env.logs(run.id)).filter((l) => l.url === site.url('/missing'))
      const fetch = logs.find((l) => l.step === 'fetch')
      expect(fetch.status).toBe('error')
      expect(fetch.error_reason).toBe('http_status')
      expect(fetch.http_status).toBe(404)
      expect(typeof fetch.latency_ms).toBe('number')
      expect(logs.some((l) => l.step === 'parse' || l.step === 'discover')).toBe(false)
      const visit = (await env.visits(run.id)).find((v) => v.url === site.url('/missing'))
      expect(visit?.status).toBe(404)
    }))

  test('500 is retried by the fetcher (max_retries 2: three requests), then logged as an error', () =>
    withSite(crawlSite({ pages }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')] })
      expect(site.hits('/broken')).toBe(3)
      const fetch = (await env.logs(run.id, 'steps=fetch&statuses=error')).filter((l) => l.url === site.url('/broken'))
      expect(fetch.length).toBe(1)
      expect(fetch[0].error_reason).toBe('http_status')
      expect(fetch[0].http_status).toBe(500)
    }))

  test('fetch.max_retries 0: a 500 is requested once', () =>
    withSite(crawlSite({ pages }), async (site) => {
      await env.crawl({ seeds: [site.url('/')], fetch: { max_retries: 0 } })
      expect(site.hits('/broken')).toBe(1)
    }))
})

describe('slow and large pages', () => {
  test('a page slower than fetch.timeout fails with timeout; the rest of the crawl goes on', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/slow', '/ok'] }, '/slow': { delayMs: 5_000 }, '/ok': {} } }), async (site) => {
      const t0 = Date.now()
      const run = await env.crawl({ seeds: [site.url('/')], fetch: { timeout: '500ms' } })
      expect(Date.now() - t0).toBeLessThan(3_000)
      expect(site.hits('/ok')).toBe(1)
      const err = await env.logs(run.id, 'steps=fetch&statuses=error')
      expect(err.map((l) => [l.url, l.error_reason])).toEqual([[site.url('/slow'), 'timeout']])
      expect(run.stats).toMatchObject({ visited: 2, failed: 1, queued: 0 })
    }))

  test('a URL whose fetch failed is listed among the run links with status null (visits.status: null when the fetch failed)', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/slow'] }, '/slow': { delayMs: 5_000 } } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], fetch: { timeout: '300ms' } })
      const visits = await env.visits(run.id)
      const slow = visits.find((v) => v.url === site.url('/slow'))
      expect(slow).toBeDefined()
      expect(slow.status).toBeNull()
      expect(slow.depth).toBe(1)
    }))

  test('a body over store.max_body_bytes fails with too_large', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/big'] }, '/big': { html: 'x'.repeat(5_000) } } }), async (site) => {
      const run = await env.crawl({ seeds: [site.url('/')], store: { max_body_bytes: 2048 } })
      const err = await env.logs(run.id, 'steps=fetch&statuses=error')
      expect(err.map((l) => [l.url, l.error_reason])).toEqual([[site.url('/big'), 'too_large']])
      expect(run.stats.failed).toBe(1)
    }))
})

describe('hosts that cannot be reached', () => {
  test('a name that does not resolve fails with dns, https to a plain-http server with tls; the rest of the crawl goes on', () =>
    withSite(crawlSite({ pages: { '/': { links: ['/ok'] }, '/ok': {} } }), async (site) => {
      const noName = 'http://nonexistent.invalid/page'
      const notTls = `https://127.0.0.1:${site.port}/ok`
      // Seeds of their own hosts are in scope; robots.txt off, so the pages themselves are fetched.
      const run = await env.crawl({ seeds: [site.url('/'), noName, notTls], politeness: { respect_robots: false }, fetch: { max_retries: 0 } })
      const errors = await env.logs(run.id, 'steps=fetch&statuses=error')
      expect(errors.map((l) => [l.url, l.error_reason]).sort()).toEqual(
        [
          [noName, 'dns'],
          [notTls, 'tls'],
        ].sort(),
      )
      for (const l of errors) expect(l.error_detail).toBeTruthy()
      expect(run.stats).toMatchObject({ failed: 2, queued: 0 })
      // Failed fetches are visits with status null; the reachable pages are visits with 200.
      const visits = await env.visits(run.id)
      expect(visits.map((v) => [v.url, v.status ?? null]).sort()).toEqual(
        [
          [site.url('/'), 200],
          [site.url('/ok'), 200],
          [noName, null],
          [notTls, null],
        ].sort(),
      )
    }))
})

describe('a body the blob store cannot keep', () => {
  test("store_error: the artifact the store refused is logged with why, the page's other artifact keeps its row, and the crawl goes on", () =>
    withSite(crawlSite({ pages: { '/': { links: ['/huge', '/ok'] }, '/huge': { html: 'x'.repeat(300_000) }, '/ok': {} } }), async (site) => {
      // Bodies over 256 KiB are files under <data>/blobs/; a file in the way of that directory
      // makes the disk store refuse them (as a full or read-only disk would), whoever runs the test.
      const blobsDir = join(env.api.dir, 'blobs')
      rmSync(blobsDir, { recursive: true, force: true })
      writeFileSync(blobsDir, 'in the way')
      try {
        const run = await env.crawl({ seeds: [site.url('/')] })
        const stores = await env.logs(run.id, 'steps=store')
        const byUrl = new Map(stores.map((l) => [l.url, l]))
        expect(stores).toHaveLength(3)
        expect(byUrl.get(site.url('/huge'))).toMatchObject({ status: 'error', error_reason: 'store_error' })
        expect(byUrl.get(site.url('/huge')).error_detail).toMatch(/^1 of 2 artifacts not stored: raw: .*(ENOTDIR|not a directory)/i)
        for (const path of ['/', '/ok']) {
          // error_detail is written for errors, retries and skips only.
          expect(byUrl.get(site.url(path))).toMatchObject({ status: 'ok' })
          expect(byUrl.get(site.url(path)).error_reason).toBeUndefined()
          expect(byUrl.get(site.url(path)).error_detail).toBeUndefined()
        }

        // The page was fetched and parsed: a visit, its links followed, and its parsed artifact kept.
        expect(run.stats).toMatchObject({ visited: 3, failed: 0 })
        const artifacts = await env.artifacts(run.id)
        const kinds = (path: string) =>
          artifacts
            .filter((a) => a.url_hash === linkHash(site.url(path)))
            .map((a) => a.kind)
            .sort()
        expect(kinds('/huge')).toEqual(['parsed'])
        expect(kinds('/')).toEqual(['parsed', 'raw'])
        expect(kinds('/ok')).toEqual(['parsed', 'raw'])
        const parsed = artifacts.find((a) => a.url_hash === linkHash(site.url('/huge')))!
        const blob = await blobBytes(parsed.id)
        expect(blob.type).toBe('application/json')
        expect(JSON.parse(new TextDecoder().decode(blob.bytes)).url).toBe(site.url('/huge'))
      } finally {
        rmSync(blobsDir, { force: true })
      }
    }))
})

describe('content that is not parsed', () => {
  test('non-HTML: parse skipped (unsupported_content_type), raw artifact stored with its content type and bytes', () =>
    withSite(
      crawlSite({
        pages: {
          '/': { links: ['/doc.pdf', '/pic.png'] },
          '/doc.pdf': { body: PDF, contentType: 'application/pdf' },
          '/pic.png': { body: PNG, contentType: 'image/png' },
        },
      }),
      async (site) => {
        const run = await env.crawl({ seeds: [site.url('/')] })
        expect(run.stats).toMatchObject({ visited: 3, failed: 0 })
        const skipped = await env.logs(run.id, 'steps=parse&statuses=skipped')
        expect(skipped.map((l) => l.url).sort()).toEqual([site.url('/doc.pdf'), site.url('/pic.png')])
        for (const l of skipped) expect(l.error_reason).toBe('unsupported_content_type')
        const raws = await env.artifacts(run.id, 'kinds=raw')
        const pdf = raws.find((a) => a.url_hash === linkHash(site.url('/doc.pdf')))
        const png = raws.find((a) => a.url_hash === linkHash(site.url('/pic.png')))
        expect(pdf.content_type).toBe('application/pdf')
        expect(png.content_type).toBe('image/png')
        const pdfBlob = await blobBytes(pdf.id)
        expect(pdfBlob.type).toBe('application/pdf')
        expect(pdfBlob.bytes).toEqual(PDF)
        expect((await blobBytes(png.id)).bytes).toEqual(PNG)
        // Parsed artifacts only for the HTML page.
        const parsed = await env.artifacts(run.id, 'kinds=parsed')
        expect(parsed.map((a) => a.url_hash)).toEqual([linkHash(site.url('/'))])
      },
    ))
})
