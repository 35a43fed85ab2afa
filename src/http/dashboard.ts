import type { Elysia } from 'elysia'
import { INDEX_HTML, UI_ASSETS, UI_BUILD } from '../dashboard/assets'
import { ApiError } from './errors'

/** The import map, the page's one inline script, allowed by its digest and nothing else inline. */
const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(INDEX_HTML)?.[1] ?? ''
const importMapHash = new Bun.CryptoHasher('sha256').update(importMap).digest('base64')

/**
 * The page shows what crawled sites wrote (titles, URLs, markdown, HTML source): the policy keeps
 * anything in it from running script, loading from elsewhere or framing the page.
 */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-cache',
  'x-content-type-options': 'nosniff',
  'content-security-policy': `default-src 'self'; script-src 'self' 'sha256-${importMapHash}'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'`,
}

/**
 * Each file gzipped once, the first time it is asked for (not at start: most starts serve no
 * browser): a phone on a slow link loads 39 KB instead of 97 KB. A client that does not say it
 * accepts gzip gets the bytes as they are.
 */
const gzipped = new Map<string, Uint8Array>()
const gzippedOf = (path: string, body: string) => gzipped.get(path) ?? gzipped.set(path, Bun.gzipSync(body)).get(path)!
const acceptsGzip = (request: Request) => /\bgzip\b/i.test(request.headers.get('accept-encoding') ?? '')

/**
 * The dashboard's routes on the management surface (docs/dashboard.md): `/` is its page and
 * `/ui/{build}/…` its files. They need no tenant: the page asks for one and sends it with every
 * API call. The page is never cached (it names the build); the files are, for good.
 */
export function mountDashboard(app: Elysia, answer: (error: ApiError) => Response) {
  app.get('/', () => new Response(INDEX_HTML, { headers: PAGE_HEADERS }), { detail: { hide: true } } as never)
  app.get(
    '/ui/:build/*',
    ({ params, request }: { params: Record<string, string>; request: Request }) => {
      const path = params['*'] ?? ''
      const asset = params.build === UI_BUILD ? UI_ASSETS[path] : undefined
      if (!asset) return answer(new ApiError(404, 'not_found', 'no such dashboard file'))
      const headers = { 'content-type': asset.type, 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff', vary: 'accept-encoding' }
      if (acceptsGzip(request)) return new Response(gzippedOf(path, asset.body), { headers: { ...headers, 'content-encoding': 'gzip' } })
      return new Response(asset.body, { headers })
    },
    { detail: { hide: true } } as never,
  )
}
