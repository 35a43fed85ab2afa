/**
 * A configurable fixture site for crawl tests: real sockets on loopback (Bun.serve on 127.0.0.1,
 * port 0), pages generated from a small description, every request recorded.
 *
 * One server answers every host name that resolves to loopback, so `127.0.0.1`, `localhost` and
 * `a.site.localhost` are different hosts of one site. A description names the pages of the
 * default host (`pages`, `robots`, `sitemaps`, `calendar`) and may give any host name its own
 * description in `hosts` (it then answers only what that description says).
 *
 * Every text the site sends (links, robots.txt, sitemaps, Location headers) has `{port}` replaced
 * by the site's port, so a description can name absolute URLs before the port is known:
 * `http://localhost:{port}/x`.
 *
 * Each request records its host name, path, arrival and end times and how many requests were in
 * flight (to its host and in all) when it arrived; `maxInFlight()` answers the most seen at once.
 */
import { sleep } from './fixture-site'

/** A link on a page: an href as written, or an href with a rel and a text. */
export type LinkSpec = string | { href: string; rel?: string; text?: string }

export type PageSpec = {
  title?: string
  links?: LinkSpec[]
  /** `<link rel="canonical" href>` in the head. */
  canonical?: string
  /** References the page makes: `<img src>`, `<script src>`, `<link rel="stylesheet" href>`. */
  assets?: { img?: string[]; script?: string[]; stylesheet?: string[] }
  /** `<meta name="robots" content>` in the head. */
  metaRobots?: string
  /** Extra HTML in the body. */
  html?: string
  /** A body to send as it is instead of the generated HTML. */
  body?: string | Uint8Array
  status?: number
  /** Default `text/html; charset=utf-8`. */
  contentType?: string
  headers?: Record<string, string>
  /** Waits this long before answering (ends early when the client goes away). */
  delayMs?: number
  /** Answers a redirect to this location (relative allowed) instead of a page. */
  redirect?: string
  /** Default 302. */
  redirectStatus?: number
  /** The first `times` requests answer `status` (default 429) with an optional Retry-After, then the page. */
  throttle?: { times: number; status?: number; retryAfter?: string }
}

/** A sitemap: a urlset of `urls`, or an index of `sitemaps`; gzipped (no Content-Encoding) when `gzip`. */
export type SitemapSpec = { urls?: string[]; sitemaps?: string[]; gzip?: boolean }

export type HostSpec = {
  /** Pages by path: pathname and query as requested (`/a?b=1`), else the pathname alone. */
  pages?: Record<string, PageSpec>
  /** robots.txt: its text (200), or a status and an optional body; absent → 404. */
  robots?: string | { status: number; body?: string; delayMs?: number }
  /** Sitemaps by path. */
  sitemaps?: Record<string, SitemapSpec>
  /** A calendar trap under this prefix (`/cal/`): `/cal/2026-01-01` links to the next day, forever. */
  calendar?: string
  /** Delay of every page of this host that sets none. */
  delayMs?: number
}

export type CrawlSiteSpec = HostSpec & {
  /** Descriptions of other host names (`localhost`, `b.site.localhost`); the rest get the default one. */
  hosts?: Record<string, HostSpec>
}

export type CrawlRequest = {
  /** Host name of the Host header, without the port. */
  host: string
  /** Pathname and query as received. */
  path: string
  pathname: string
  /** performance.now() at arrival and when the answer was handed over (null while in flight). */
  at: number
  end: number | null
  /** Requests to the same host in flight at arrival, this one included. */
  inFlightHost: number
  /** Requests to the whole site in flight at arrival, this one included. */
  inFlightAll: number
  /** Status answered (0 while in flight or when the client went away first). */
  status: number
  /** Body bytes answered. */
  bytes: number
  userAgent: string | null
}

export type CrawlSite = {
  port: number
  /** `http://<host>:<port><path>`; host defaults to 127.0.0.1. */
  url(path?: string, host?: string): string
  readonly requests: CrawlRequest[]
  /** Requests of one host (default 127.0.0.1) for this exact path (pathname and query). */
  hits(path: string, host?: string): number
  /** Requests of one host (default 127.0.0.1) other than robots.txt and sitemaps, in arrival order. */
  pageRequests(host?: string): CrawlRequest[]
  /** Most requests in flight at once: to one host, or to the whole site when host is omitted. */
  maxInFlight(host?: string): number
  /** Most page requests (robots.txt and sitemaps left out) overlapping in time, of some hosts (default all). */
  maxPagesAtOnce(hosts?: string[]): number
  /** Gaps in ms between the arrivals of consecutive page requests of one host. */
  gaps(host?: string): number[]
  /** Bytes of the body this site sends for a path (what a crawl must store). */
  bodyOf(path: string, host?: string): Uint8Array
  reset(): void
  close(): Promise<void>
}

const DEFAULT_HOST = '127.0.0.1'
const enc = new TextEncoder()

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')

/** The HTML of a page description. */
export function pageHtml(path: string, page: PageSpec): string {
  const head: string[] = [`<meta charset="utf-8"><title>${escape(page.title ?? path)}</title>`]
  if (page.canonical) head.push(`<link rel="canonical" href="${escape(page.canonical)}">`)
  if (page.metaRobots) head.push(`<meta name="robots" content="${escape(page.metaRobots)}">`)
  for (const s of page.assets?.stylesheet ?? []) head.push(`<link rel="stylesheet" href="${escape(s)}">`)
  for (const s of page.assets?.script ?? []) head.push(`<script src="${escape(s)}"></script>`)
  const body: string[] = [`<h1>${escape(page.title ?? path)}</h1>`]
  for (const l of page.links ?? []) {
    const link = typeof l === 'string' ? { href: l } : l
    body.push(`<a href="${escape(link.href)}"${link.rel ? ` rel="${escape(link.rel)}"` : ''}>${escape(link.text ?? link.href)}</a>`)
  }
  for (const s of page.assets?.img ?? []) body.push(`<img src="${escape(s)}" alt="">`)
  if (page.html) body.push(page.html)
  return `<!doctype html><html lang="en"><head>${head.join('')}</head><body>${body.join('\n')}</body></html>`
}

function sitemapXml(s: SitemapSpec): string {
  if (s.sitemaps) {
    return `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${s.sitemaps.map((u) => `<sitemap><loc>${escape(u)}</loc></sitemap>`).join('')}</sitemapindex>`
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${(s.urls ?? []).map((u) => `<url><loc>${escape(u)}</loc></url>`).join('')}</urlset>`
}

/** `2026-01-31` → `2026-02-01`. */
export function nextDay(day: string): string {
  const d = new Date(`${day}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() + 1)
  return d.toISOString().slice(0, 10)
}

/**
 * A tree of pages under `prefix`: the root `prefix` (`/` or `/t/`) links to `fanout` children
 * `<prefix>1 … <prefix>n`, each to its own, `depth` levels deep. Answers the pages and the paths
 * of each level (level 0 is the root).
 */
export function tree(fanout: number, depth: number, root = '/', extra: (path: string, level: number) => PageSpec = () => ({})) {
  const pages: Record<string, PageSpec> = {}
  const levels: string[][] = [[root]]
  for (let level = 0; level <= depth; level++) {
    const next: string[] = []
    for (const path of levels[level]!) {
      const children = level < depth ? Array.from({ length: fanout }, (_, i) => `${path === '/' ? '/n' : `${path}-`}${i + 1}`) : []
      const more = extra(path, level)
      pages[path] = { ...more, links: [...children, ...(more.links ?? [])] }
      next.push(...children)
    }
    if (level < depth) levels.push(next)
  }
  return { pages, levels, all: levels.flat() }
}

/** Starts a site from its description. */
export function crawlSite(spec: CrawlSiteSpec): CrawlSite {
  const requests: CrawlRequest[] = []
  const inFlight = new Map<string, number>()
  let inFlightAll = 0
  const throttled = new Map<string, number>()
  const closing = new AbortController()
  let port = 0

  const sub = (s: string) => s.replaceAll('{port}', String(port))
  const hostSpec = (host: string): HostSpec => spec.hosts?.[host] ?? spec

  /** What the site answers for a path; null for a 404. */
  function resolve(host: string, path: string, pathname: string): { page?: PageSpec; robots?: true; sitemap?: SitemapSpec; day?: string } | null {
    const h = hostSpec(host)
    if (pathname === '/robots.txt' && h.robots !== undefined) return { robots: true }
    const sm = h.sitemaps?.[path] ?? h.sitemaps?.[pathname]
    if (sm) return { sitemap: sm }
    const page = h.pages?.[path] ?? h.pages?.[pathname]
    if (page) return { page }
    if (h.calendar && pathname.startsWith(h.calendar) && /^\d{4}-\d{2}-\d{2}$/.test(pathname.slice(h.calendar.length))) return { day: pathname.slice(h.calendar.length) }
    return null
  }

  function body(host: string, path: string): { status: number; headers: Record<string, string>; bytes: Uint8Array; delayMs: number; key: string } {
    const url = new URL(path, 'http://x')
    const h = hostSpec(host)
    const what = resolve(host, url.pathname + url.search, url.pathname)
    const key = `${host}${url.pathname}${url.search}`
    if (!what) return { status: 404, headers: { 'content-type': 'text/html; charset=utf-8' }, bytes: enc.encode('<!doctype html><title>404</title><p>not found</p>'), delayMs: 0, key }
    if (what.robots) {
      const r = typeof h.robots === 'string' ? { status: 200, body: h.robots } : h.robots!
      return { status: r.status, headers: { 'content-type': 'text/plain' }, bytes: enc.encode(sub(r.body ?? '')), delayMs: typeof h.robots === 'string' ? 0 : (r.delayMs ?? 0), key }
    }
    if (what.sitemap) {
      const xml = enc.encode(sub(sitemapXml(what.sitemap)))
      return what.sitemap.gzip
        ? { status: 200, headers: { 'content-type': 'application/x-gzip' }, bytes: Bun.gzipSync(xml), delayMs: 0, key }
        : { status: 200, headers: { 'content-type': 'application/xml' }, bytes: xml, delayMs: 0, key }
    }
    if (what.day) {
      const html = pageHtml(url.pathname, { title: what.day, links: [`${h.calendar}${nextDay(what.day)}`] })
      return { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, bytes: enc.encode(html), delayMs: h.delayMs ?? 0, key }
    }
    const page = what.page!
    const delayMs = page.delayMs ?? h.delayMs ?? 0
    if (page.redirect !== undefined) {
      return { status: page.redirectStatus ?? 302, headers: { location: sub(page.redirect), ...page.headers }, bytes: new Uint8Array(0), delayMs, key }
    }
    const bytes = page.body === undefined ? enc.encode(sub(pageHtml(url.pathname, page))) : typeof page.body === 'string' ? enc.encode(sub(page.body)) : page.body
    return { status: page.status ?? 200, headers: { 'content-type': page.contentType ?? 'text/html; charset=utf-8', ...page.headers }, bytes, delayMs, key }
  }

  const server = Bun.serve({
    hostname: DEFAULT_HOST,
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const url = new URL(req.url)
      const host = (req.headers.get('host') ?? DEFAULT_HOST).replace(/:\d+$/, '')
      const path = url.pathname + url.search
      const n = (inFlight.get(host) ?? 0) + 1
      inFlight.set(host, n)
      inFlightAll++
      const rec: CrawlRequest = { host, path, pathname: url.pathname, at: performance.now(), end: null, inFlightHost: n, inFlightAll, status: 0, bytes: 0, userAgent: req.headers.get('user-agent') }
      requests.push(rec)
      try {
        const answer = body(host, path)
        const page = hostSpec(host).pages?.[path] ?? hostSpec(host).pages?.[url.pathname]
        if (answer.delayMs > 0) {
          await sleep(answer.delayMs, AbortSignal.any([req.signal, closing.signal]))
          if (req.signal.aborted) return new Response(null, { status: 499 })
        }
        if (page?.throttle) {
          const seen = throttled.get(answer.key) ?? 0
          if (seen < page.throttle.times) {
            throttled.set(answer.key, seen + 1)
            rec.status = page.throttle.status ?? 429
            rec.bytes = 9
            const headers: Record<string, string> = { 'content-type': 'text/plain' }
            if (page.throttle.retryAfter !== undefined) headers['retry-after'] = page.throttle.retryAfter
            return new Response('throttled', { status: rec.status, headers })
          }
        }
        rec.status = answer.status
        rec.bytes = answer.bytes.byteLength
        return new Response(answer.bytes, { status: answer.status, headers: answer.headers })
      } finally {
        rec.end = performance.now()
        inFlight.set(host, (inFlight.get(host) ?? 1) - 1)
        inFlightAll--
      }
    },
  })
  port = server.port!

  const isMeta = (r: CrawlRequest) => r.pathname === '/robots.txt' || !!(hostSpec(r.host).sitemaps?.[r.path] ?? hostSpec(r.host).sitemaps?.[r.pathname])

  return {
    port,
    url: (path = '/', host = DEFAULT_HOST) => `http://${host}:${port}${path}`,
    requests,
    hits: (path, host = DEFAULT_HOST) => requests.filter((r) => r.host === host && r.path === path).length,
    pageRequests: (host = DEFAULT_HOST) => requests.filter((r) => r.host === host && !isMeta(r)),
    maxInFlight(host?: string) {
      return requests.filter((r) => host === undefined || r.host === host).reduce((m, r) => Math.max(m, host === undefined ? r.inFlightAll : r.inFlightHost), 0)
    },
    maxPagesAtOnce(hosts?: string[]) {
      const events: [number, number][] = []
      for (const r of requests) {
        if (isMeta(r) || (hosts && !hosts.includes(r.host))) continue
        events.push([r.at, 1], [r.end ?? Infinity, -1])
      }
      // Ends before starts at the same instant: touching intervals do not overlap.
      events.sort((a, b) => a[0] - b[0] || a[1] - b[1])
      let now = 0
      let max = 0
      for (const [, d] of events) max = Math.max(max, (now += d))
      return max
    },
    gaps(host = DEFAULT_HOST) {
      const at = requests.filter((r) => r.host === host && !isMeta(r)).map((r) => r.at)
      return at.slice(1).map((t, i) => t - at[i]!)
    },
    bodyOf: (path, host = DEFAULT_HOST) => body(host, path).bytes,
    reset() {
      requests.length = 0
      throttled.clear()
    },
    async close() {
      closing.abort()
      await server.stop(true)
    },
  }
}

/** Runs `fn` against a site and closes it whatever happens. */
export async function withSite<T>(site: CrawlSite, fn: (site: CrawlSite) => Promise<T>): Promise<T> {
  try {
    return await fn(site)
  } finally {
    await site.close()
  }
}
