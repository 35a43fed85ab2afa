/**
 * Fixture HTTP servers for fetch and crawl tests: real sockets on loopback, no mocks.
 *
 * `fixtureSite()` is a Bun.serve on 127.0.0.1 (or another loopback address), port 0, that records
 * every request it gets and answers a fixed set of routes (see ROUTES below); tests may add or
 * override routes. `dropServer()`, `rawServer()`, `unusedPort()` cover what Bun.serve cannot do:
 * connections that close at once, hand-written responses (huge headers), nothing listening.
 *
 * Every sleep a route makes ends early when the client goes away or the site is closed, so a
 * test that times out on purpose leaves nothing running behind it.
 */
import { brotliCompressSync, deflateSync } from 'node:zlib'

/** One request as the fixture received it. */
export type RecordedRequest = {
  method: string
  /** Pathname and query as received (`/echo?x=1`). */
  path: string
  pathname: string
  query: URLSearchParams
  /** Header pairs as Bun hands them over (names lowercased), in order. */
  headers: [string, string][]
  /** Cookies from the Cookie header(s), by name. */
  cookies: Record<string, string>
  /** The raw Cookie header, or null. */
  cookieHeader: string | null
  body: Uint8Array
  /** Arrival time, performance.now() milliseconds (same clock as the test process). */
  at: number
}

export type RouteContext = { site: FixtureSite; url: URL; recorded: RecordedRequest; signal: AbortSignal }
export type Route = (req: Request, ctx: RouteContext) => Response | Promise<Response>

export type FixtureSiteOptions = {
  /** Loopback address to bind; another one (127.0.0.2) is another host for cookies and origins. */
  hostname?: string
  /** Serve https with the self-signed certificate below. */
  tls?: boolean
  /** Extra routes by exact pathname; they win over the built-in ones. */
  routes?: Record<string, Route>
}

export type FixtureSite = {
  /** `http://127.0.0.1:port` (no trailing slash). */
  origin: string
  hostname: string
  port: number
  /** Absolute URL of a path on this site (`/echo?x=1`). */
  url(path?: string): string
  /** Every request received since start or the last reset(), in arrival order. */
  readonly requests: RecordedRequest[]
  /** Requests whose pathname equals `pathname` (or starts with it when it ends with `/`). */
  requestsTo(pathname: string): RecordedRequest[]
  /** Requests being handled right now, and the most seen at once since the last reset(). */
  readonly inFlight: number
  readonly maxInFlight: number
  /** Times a flaky key was hit. */
  hits(key: string): number
  /** Adds or replaces a route (exact pathname). */
  route(pathname: string, handler: Route): void
  /** Forgets recorded requests, the in-flight maximum and the flaky counters. */
  reset(): void
  close(): Promise<void>
}

/** The HTML every `/page/<name>` answers, so tests can compare bytes. */
export const pageHtml = (name: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${name}</title></head><body><h1>${name}</h1><p>Page ${name}.</p></body></html>`

/** `n` deterministic bytes (i mod 251), what `/bytes/<n>` answers. */
export function patternBytes(n: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i++) out[i] = i % 251
  return out
}

/** The page `/encoded/<encoding>` compresses (a few KB, so compression shows). */
export const ENCODED_PAGE = `<!doctype html><html><head><title>encoded</title></head><body>${'<p>the same words again and again</p>'.repeat(100)}</body></html>`

/** What `/content/json` answers, as application/json. */
export const JSON_BODY = '{"ok":true,"items":[1,2,3]}'

/** A 1x1 transparent PNG, what `/content/png` answers. */
export const PNG_BYTES = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='), (c) => c.charCodeAt(0))

/** `café` in windows-1252 (é is 0xE9), what `/content/latin1` answers. */
export const LATIN1_BYTES = Uint8Array.from([0x63, 0x61, 0x66, 0xe9])

/** Set-Cookie lines `/set-cookie` sends, one header each, in this order. */
export const SET_COOKIE_LINES = [
  'session=abc123; Path=/; HttpOnly',
  'theme=dark; Domain=127.0.0.1; Path=/app; Max-Age=3600; SameSite=Lax',
  'token=xyz; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Secure; SameSite=None',
  'lang=en-US; SameSite=Strict',
]

/** Size the gzip bomb inflates to (100 MiB of zeros; about 100 KB on the wire). */
export const GZIP_BOMB_INFLATED_BYTES = 100 * 1024 * 1024
let bomb: Uint8Array<ArrayBuffer> | null = null
/** Built on first use (≈90 ms), then kept. */
export function gzipBomb(): Uint8Array<ArrayBuffer> {
  bomb ??= Bun.gzipSync(new Uint8Array(GZIP_BOMB_INFLATED_BYTES))
  return bomb
}

const encoders: Record<string, (b: Uint8Array<ArrayBuffer>) => Uint8Array<ArrayBuffer>> = {
  gzip: (b) => Bun.gzipSync(b),
  // HTTP "deflate" is the zlib format (RFC 9110), which node's deflateSync writes.
  deflate: (b) => new Uint8Array(deflateSync(b)),
  br: (b) => new Uint8Array(brotliCompressSync(b)),
  zstd: (b) => new Uint8Array(Bun.zstdCompressSync(b)),
}

/** A self-signed certificate for 127.0.0.1 and localhost (EC P-256, valid until 2126). */
export const SELF_SIGNED = {
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgAE+QWF1gAwfZoAri
RVP9QSM8UCafKVy7oFjuEFdfhHmhRANCAASYhs65i7geGnEekkh/BiNBmgahSe4N
DXmamMDtLnNG++yX4l36FfTFYElVmhybqAR5haD46k5E5ahdm/SZv4Dk
-----END PRIVATE KEY-----
`,
  cert: `-----BEGIN CERTIFICATE-----
MIIBrTCCAVOgAwIBAgIUYf+ai89KRokvMqWseTMsClPtTyYwCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSdHJhd2wtZml4dHVyZS50ZXN0MCAXDTI2MTEyMjE1NDgyNloY
DzIxMjYxMDI5MTU0ODI2WjAdMRswGQYDVQQDDBJ0cmF3bC1maXh0dXJlLnRlc3Qw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASYhs65i7geGnEekkh/BiNBmgahSe4N
DXmamMDtLnNG++yX4l36FfTFYElVmhybqAR5haD46k5E5ahdm/SZv4Dko28wbTAd
BgNVHQ4EFgQU2TeO+HYz+aXgelNF8aXQW4VD9l4wHwYDVR0jBBgwFoAU2TeO+HYz
+aXgelNF8aXQW4VD9l4wDwYDVR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2Nh
bGhvc3SHBH8AAAEwCgYIKoZIzj0EAwIDSAAwRQIhAJbGgUEILPxXJ5CXBMJuvZI/
v1soHD8281I/U91r+9+OAiBXl5xmkiosLuwtTgNjiRKZbDq/4dYf1Bg0iqQKr9CA
9Q==
-----END CERTIFICATE-----
`,
}

/** Sleeps `ms`, or less when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
  })
}

const html = (body: string, status = 200, headers: Record<string, string> = {}) => new Response(body, { status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers } })
const text = (body: string, status = 200, headers: Record<string, string> = {}) => new Response(body, { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } })
const num = (q: URLSearchParams, name: string, fallback: number) => {
  const v = q.get(name)
  return v === null || v === '' ? fallback : Number(v)
}

function parseCookies(header: string | null): Record<string, string> {
  const out: Record<string, string> = {}
  if (!header) return out
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim()
  }
  return out
}

/**
 * Built-in routes (pathname → behaviour). Query parameters shown are optional.
 *
 * - `/`, `/page`, `/page/<name>`: pageHtml(name) as text/html; charset=utf-8.
 * - `/text?body=…`: text/plain.
 * - `/echo` (any method): JSON `{method, path, headers:[[n,v]], body_base64, body_text, cookies, cookie_header}`.
 * - `/status/<code>?retry_after=…&content_type=…`: that status, body `status <code>`.
 * - `/redirect/<code>?to=<location>&set_cookie=<line>&delay=<ms>`: that status with `Location: to`
 *   exactly as given (relative allowed), optionally a Set-Cookie, after an optional delay.
 * - `/chain/<n>?status=302&delay=<ms>`: n redirects (`/chain/<n-1>` …) then pageHtml('chain end').
 * - `/loop/a` ↔ `/loop/b`: a two-step redirect loop (302); `/loop` redirects to itself.
 * - `/redirect-to-metadata`: 302 to http://169.254.169.254/latest/meta-data/.
 * - `/redirect-to-loopback`: 302 to http://127.0.0.1:<this port>/page/loopback.
 * - `/meta-refresh?to=/page/next&delay=0&content_type=text/html`: a page with
 *   `<meta http-equiv="refresh" content="<delay>; url=<to>">`.
 * - `/set-cookie`: 200 with SET_COOKIE_LINES, one Set-Cookie header each.
 * - `/slow-headers?ms=N`: waits N ms (default 1000) before answering pageHtml('slow').
 * - `/slow-body?ms=N&first=…`: sends `first` (default `partial `), stalls N ms (default 10000),
 *   then `rest` and ends. No Content-Length (chunked).
 * - `/bytes/<n>?chunked=1&content_type=…`: patternBytes(n), with Content-Length unless chunked.
 * - `/gzip-bomb`: gzipBomb() with Content-Encoding: gzip (inflates to 100 MiB).
 * - `/encoded/<gzip|deflate|br|zstd>`: ENCODED_PAGE compressed with that Content-Encoding.
 * - `/flaky/<key>?fail=K&status=503&retry_after=<s>&retry_after_date=<s from now>`: the first K
 *   hits of each key answer `status` (default 503, optional Retry-After), then pageHtml(key).
 * - `/content/json`, `/content/png`, `/content/latin1` (text/html; charset=windows-1252).
 */
export function fixtureSite(opts: FixtureSiteOptions = {}): FixtureSite {
  const hostname = opts.hostname ?? '127.0.0.1'
  const extra = new Map<string, Route>(Object.entries(opts.routes ?? {}))
  const closing = new AbortController()
  let requests: RecordedRequest[] = []
  let inFlight = 0
  let maxInFlight = 0
  let flaky = new Map<string, number>()

  async function builtIn(req: Request, ctx: RouteContext): Promise<Response> {
    const { url, signal } = ctx
    const q = url.searchParams
    const seg = url.pathname.split('/').filter(Boolean)
    const [head, arg] = seg
    switch (head) {
      case undefined:
        return html(pageHtml('home'))
      case 'page':
        return html(pageHtml(seg.slice(1).join('/') || 'page'))
      case 'text':
        return text(q.get('body') ?? 'hello')
      case 'echo': {
        const r = ctx.recorded
        return Response.json({
          method: r.method,
          path: r.path,
          headers: r.headers,
          body_base64: Buffer.from(r.body).toString('base64'),
          body_text: new TextDecoder().decode(r.body),
          cookies: r.cookies,
          cookie_header: r.cookieHeader,
        })
      }
      case 'status': {
        const code = Number(arg)
        const headers: Record<string, string> = {}
        if (q.has('retry_after')) headers['retry-after'] = q.get('retry_after')!
        if (q.has('content_type')) headers['content-type'] = q.get('content_type')!
        return text(`status ${code}`, code, headers)
      }
      case 'redirect': {
        await sleep(num(q, 'delay', 0), signal)
        const headers = new Headers({ location: q.get('to') ?? '/page/target', 'content-type': 'text/plain' })
        for (const c of q.getAll('set_cookie')) headers.append('set-cookie', c)
        return new Response(`redirect ${arg}`, { status: Number(arg), headers })
      }
      case 'chain': {
        await sleep(num(q, 'delay', 0), signal)
        const n = Number(arg)
        if (n <= 0) return html(pageHtml('chain end'))
        const status = q.get('status') ?? '302'
        const rest = q.toString()
        return new Response(null, { status: Number(status), headers: { location: `/chain/${n - 1}${rest ? `?${rest}` : ''}` } })
      }
      case 'loop': {
        const to = arg === 'a' ? '/loop/b' : arg === 'b' ? '/loop/a' : '/loop'
        return new Response(null, { status: 302, headers: { location: to } })
      }
      case 'redirect-to-metadata':
        return new Response(null, { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } })
      case 'redirect-to-loopback':
        return new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${server.port}/page/loopback` } })
      case 'meta-refresh': {
        const to = q.get('to') ?? '/page/next'
        const delay = q.get('delay') ?? '0'
        const body = `<!doctype html><html><head><meta http-equiv="refresh" content="${delay}; url=${to}"><title>moving</title></head><body>moved</body></html>`
        return new Response(body, { headers: { 'content-type': q.get('content_type') ?? 'text/html; charset=utf-8' } })
      }
      case 'set-cookie': {
        const headers = new Headers({ 'content-type': 'text/plain' })
        for (const line of SET_COOKIE_LINES) headers.append('set-cookie', line)
        return new Response('cookies set', { headers })
      }
      case 'slow-headers':
        await sleep(num(q, 'ms', 1000), signal)
        return html(pageHtml('slow'))
      case 'slow-body': {
        const ms = num(q, 'ms', 10_000)
        const first = q.get('first') ?? 'partial '
        let cancelled = false
        const stream = new ReadableStream<Uint8Array>({
          async start(controller) {
            controller.enqueue(new TextEncoder().encode(first))
            await sleep(ms, signal)
            if (cancelled || signal.aborted) return
            try {
              controller.enqueue(new TextEncoder().encode('rest'))
              controller.close()
            } catch {} // the client went away while we slept
          },
          cancel() {
            cancelled = true
          },
        })
        return new Response(stream, { headers: { 'content-type': 'text/plain' } })
      }
      case 'bytes': {
        const n = Number(arg)
        const bytes = patternBytes(n)
        const type = q.get('content_type') ?? 'application/octet-stream'
        if (q.get('chunked') !== '1') return new Response(bytes, { headers: { 'content-type': type } })
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            for (let i = 0; i < n; i += 16384) controller.enqueue(bytes.slice(i, i + 16384))
            controller.close()
          },
        })
        return new Response(stream, { headers: { 'content-type': type } })
      }
      case 'gzip-bomb':
        return new Response(gzipBomb(), { headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' } })
      case 'encoded': {
        const encode = encoders[arg ?? '']
        if (!encode) return text('unknown encoding', 404)
        return new Response(encode(new TextEncoder().encode(ENCODED_PAGE)), {
          headers: { 'content-type': 'text/html; charset=utf-8', 'content-encoding': arg! },
        })
      }
      case 'flaky': {
        const key = arg ?? 'default'
        const n = (flaky.get(key) ?? 0) + 1
        flaky.set(key, n)
        if (n <= num(q, 'fail', 1)) {
          const headers: Record<string, string> = {}
          if (q.has('retry_after')) headers['retry-after'] = q.get('retry_after')!
          if (q.has('retry_after_date')) headers['retry-after'] = new Date(Date.now() + num(q, 'retry_after_date', 1) * 1000).toUTCString()
          return text(`flaky ${key} attempt ${n}`, num(q, 'status', 503), headers)
        }
        return html(pageHtml(key))
      }
      case 'content':
        if (arg === 'json') return new Response(JSON_BODY, { headers: { 'content-type': 'application/json' } })
        if (arg === 'png') return new Response(PNG_BYTES, { headers: { 'content-type': 'image/png' } })
        if (arg === 'latin1') return new Response(LATIN1_BYTES, { headers: { 'content-type': 'text/html; charset=windows-1252' } })
        return text('unknown content', 404)
    }
    return text('not found', 404)
  }

  const server = Bun.serve({
    hostname,
    port: 0,
    ...(opts.tls ? { tls: SELF_SIGNED } : {}),
    // Slow routes sleep far longer than Bun's default 10 s idle timeout would allow.
    idleTimeout: 0,
    async fetch(req) {
      const at = performance.now()
      const url = new URL(req.url)
      const body = new Uint8Array(await req.arrayBuffer())
      const cookieHeader = req.headers.get('cookie')
      const recorded: RecordedRequest = {
        method: req.method,
        path: url.pathname + url.search,
        pathname: url.pathname,
        query: url.searchParams,
        headers: [...req.headers],
        cookies: parseCookies(cookieHeader),
        cookieHeader,
        body,
        at,
      }
      requests.push(recorded)
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      const signal = AbortSignal.any([req.signal, closing.signal])
      try {
        const handler = extra.get(url.pathname)
        const ctx = { site, url, recorded, signal }
        return await (handler ? handler(req, ctx) : builtIn(req, ctx))
      } finally {
        inFlight--
      }
    },
  })

  const origin = `${opts.tls ? 'https' : 'http'}://${hostname}:${server.port}`
  const site: FixtureSite = {
    origin,
    hostname,
    port: server.port!,
    url: (path = '/') => `${origin}${path.startsWith('/') ? path : `/${path}`}`,
    get requests() {
      return requests
    },
    requestsTo: (pathname) => requests.filter((r) => (pathname.endsWith('/') ? r.pathname.startsWith(pathname) : r.pathname === pathname)),
    get inFlight() {
      return inFlight
    },
    get maxInFlight() {
      return maxInFlight
    },
    hits: (key) => flaky.get(key) ?? 0,
    route(pathname, handler) {
      extra.set(pathname, handler)
    },
    reset() {
      requests = []
      maxInFlight = inFlight
      flaky = new Map()
    },
    async close() {
      closing.abort()
      await server.stop(true)
    },
  }
  return site
}

/** A header value from recorded pairs (case-insensitive; several values joined with `, `). */
export function headerOf(headers: [string, string][], name: string): string | null {
  const values = headers.filter(([n]) => n.toLowerCase() === name.toLowerCase()).map(([, v]) => v)
  return values.length ? values.join(', ') : null
}

/** A TCP server that accepts and closes every connection at once (a network error), counting them. */
export function dropServer(hostname = '127.0.0.1') {
  let connections = 0
  const listener = Bun.listen({
    hostname,
    port: 0,
    socket: {
      open(socket) {
        connections++
        socket.end()
      },
      data() {},
    },
  })
  return {
    port: listener.port,
    url: (path = '/') => `http://${hostname}:${listener.port}${path}`,
    get connections() {
      return connections
    },
    reset() {
      connections = 0
    },
    close() {
      listener.stop(true)
    },
  }
}

/**
 * A TCP server that answers each connection's first bytes with `response` (raw HTTP, written as
 * given) and closes it. For what Bun.serve will not send, e.g. a 1 MB header.
 */
export function rawServer(response: string | Uint8Array, hostname = '127.0.0.1') {
  let connections = 0
  const bytes = typeof response === 'string' ? new TextEncoder().encode(response) : response
  type State = { sent: number }
  const pump = (socket: { write(b: Uint8Array): number; end(): void; data: State }) => {
    while (socket.data.sent < bytes.length) {
      const n = socket.write(bytes.subarray(socket.data.sent))
      if (n <= 0) return
      socket.data.sent += n
    }
    socket.end()
  }
  const listener = Bun.listen<State>({
    hostname,
    port: 0,
    socket: {
      open(socket) {
        connections++
        socket.data = { sent: -1 }
      },
      data(socket) {
        if (socket.data.sent >= 0) return
        socket.data.sent = 0
        pump(socket)
      },
      drain(socket) {
        if (socket.data.sent >= 0) pump(socket)
      },
      error() {},
    },
  })
  return {
    port: listener.port,
    url: (path = '/') => `http://${hostname}:${listener.port}${path}`,
    get connections() {
      return connections
    },
    close() {
      listener.stop(true)
    },
  }
}

/** A loopback port nothing listens on (bound, read, released). */
export function unusedPort(hostname = '127.0.0.1'): number {
  const l = Bun.listen({ hostname, port: 0, socket: { data() {} } })
  const port = l.port
  l.stop(true)
  return port
}
