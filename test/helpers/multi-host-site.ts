/**
 * A site spread over many hosts for cluster tests and benchmarks: one port, one listener on each
 * loopback address 127.0.0.<first+i> (on Linux every 127.x address is the loopback interface),
 * so `http://127.0.0.10:P/p/0` and `http://127.0.0.11:P/p/0` are two hosts of one site served by
 * this process. One listener per address rather than one on 0.0.0.0: nothing is reachable from
 * outside the machine.
 *
 * The pages: `hosts × pagesPerHost` of them, numbered g = 0 … N-1 across the site. Page g is
 * `/p/<floor(g / hosts)>` on host `g mod hosts`, so consecutive pages are on different hosts.
 * Page g links to its `linksPerPage` children g·L+1 … g·L+L (a complete tree: every page is
 * reachable from page 0, the seed, in log_L(N) hops, and the children of one page are on L
 * different hosts), to page (7g+3) mod N and back to page 0, so most pages are found several
 * times and a crawl that fetched a page twice shows it. Each page answers after `delayMs`;
 * robots.txt (every host: allow all) answers at once; anything else is a 404.
 *
 * What the server measures, per host and from its own side of the socket: the most page requests
 * in flight at once and the smallest gap between the arrivals of two page requests; per URL how
 * many times each page was fetched (robots.txt and the 404s counted apart); each request's
 * User-Agent and, when `identify` is given, which client process sent it (see socketOwner).
 */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { sleep } from './fixture-site'

export type MultiHostSiteOptions = {
  /** Number of hosts (default 10); at most 240. */
  hosts?: number
  /** Pages on each host (default 10). */
  pagesPerHost?: number
  /** Children each page links to (default 3), besides its cross link and the link back to page 0. */
  linksPerPage?: number
  /** How long each page takes to answer, ms (default 50). robots.txt answers at once. */
  delayMs?: number
  /** The last byte of the first host's address (default 10: 127.0.0.10). */
  first?: number
  /** Filler text per page, bytes (default 1000). */
  pageBytes?: number
  /** Names the process a request came from, by the client's port (see socketOwner); its answer, or what its promise gives, is recorded. */
  identify?: Identify
}

export type SiteRequest = {
  /** The address the request came to (the host of the URL), without the port. */
  host: string
  /** Pathname as requested. */
  path: string
  url: string
  kind: 'page' | 'robots' | 'other'
  /** Epoch milliseconds with sub-millisecond precision (performance.timeOrigin + now()): at arrival, and when answered (null while in flight). */
  at: number
  end: number | null
  /** Page requests to this host in flight at arrival, this one included (0 for robots and 404s). */
  inFlightHost: number
  userAgent: string | null
  /** The client's source port. */
  peerPort: number
  /** What `identify` answered for it (null without identify, when it could not tell, or while its answer is on its way: see settled()). */
  client: string | null
  /** Status answered (0 while in flight, or when the client went away first). */
  status: number
}

export type Identify = (peer: { address: string; port: number }, host: string, port: number) => string | null | Promise<string | null>

export type HostStats = {
  host: string
  /** Page requests received. */
  pages: number
  /** Most page requests in flight at once. */
  maxInFlight: number
  /** Smallest gap between the arrivals of two consecutive page requests, ms (Infinity with fewer than two). */
  minGapMs: number
  /** The clients of those two requests, `n0→n1` (`?` for unknown); null with fewer than two. */
  minGapBetween: string | null
  robots: number
}

export type MultiHostSite = ReturnType<typeof multiHostSite>

const now = () => performance.timeOrigin + performance.now()
const enc = new TextEncoder()
const FILLER = 'crawl frontier queue host lease robots politeness delay batch page link anchor '

/** Starts the site; close() stops every listener. */
export function multiHostSite(opts: MultiHostSiteOptions = {}) {
  const H = opts.hosts ?? 10
  const P = opts.pagesPerHost ?? 10
  const L = opts.linksPerPage ?? 3
  const delayMs = opts.delayMs ?? 50
  const first = opts.first ?? 10
  const pageBytes = opts.pageBytes ?? 1000
  if (H < 1 || first + H - 1 > 254) throw new Error(`multiHostSite: hosts ${first}..${first + H - 1} do not fit in 127.0.0.x`)
  const N = H * P
  const hostNames = Array.from({ length: H }, (_, i) => `127.0.0.${first + i}`)
  const closing = new AbortController()

  const requests: SiteRequest[] = []
  const fetches = new Map<string, number>()
  const robotsFetches = new Map<string, number>()
  type Live = { inFlight: number; maxInFlight: number; last: SiteRequest | null; minGap: number; minGapPair: [SiteRequest, SiteRequest] | null; pages: number }
  const fresh = (inFlight: number): Live => ({ inFlight, maxInFlight: inFlight, last: null, minGap: Infinity, minGapPair: null, pages: 0 })
  const identifying = new Set<Promise<unknown>>()
  const live = new Map<string, Live>()
  for (const h of hostNames) live.set(h, fresh(0))

  let port = 0
  const urlOf = (g: number) => `http://${hostNames[g % H]}:${port}/p/${Math.floor(g / H)}`
  /** The page number of a host and path, or -1. */
  function pageOf(host: string, path: string): number {
    const h = hostNames.indexOf(host)
    const m = /^\/p\/(\d+)$/.exec(path)
    if (h < 0 || !m) return -1
    const j = Number(m[1])
    return j < P ? j * H + h : -1
  }
  function linksOf(g: number): number[] {
    const out: number[] = []
    for (let k = 1; k <= L; k++) if (g * L + k < N) out.push(g * L + k)
    out.push((7 * g + 3) % N, 0)
    return out
  }
  function html(g: number): string {
    const links = linksOf(g)
      .map((t) => `<a href="${urlOf(t)}">page ${t}</a>`)
      .join('\n')
    const text = FILLER.repeat(Math.max(1, Math.ceil(pageBytes / FILLER.length))).slice(0, pageBytes)
    return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>page ${g}</title></head><body><h1>page ${g}</h1><p>${text}</p>\n${links}</body></html>`
  }

  async function handle(req: Request, server: Bun.Server<undefined>): Promise<Response> {
    const url = new URL(req.url)
    const host = (req.headers.get('host') ?? '').replace(/:\d+$/, '')
    const path = url.pathname
    const g = pageOf(host, path)
    const kind = g >= 0 ? 'page' : path === '/robots.txt' ? 'robots' : 'other'
    const at = now()
    const peer = server.requestIP(req) ?? { address: '', port: 0 }
    const rec: SiteRequest = {
      host,
      path,
      url: `http://${host}:${port}${path}`,
      kind,
      at,
      end: null,
      inFlightHost: 0,
      userAgent: req.headers.get('user-agent'),
      peerPort: peer.port,
      client: null,
      status: 0,
    }
    requests.push(rec)
    const who = opts.identify?.(peer, host, port) ?? null
    if (who instanceof Promise) {
      const settling = who.then((client) => void (rec.client = client)).finally(() => identifying.delete(settling))
      identifying.add(settling)
    } else rec.client = who
    if (kind === 'robots') {
      robotsFetches.set(host, (robotsFetches.get(host) ?? 0) + 1)
      rec.status = 200
      rec.end = now()
      return new Response('User-agent: *\nAllow: /\n', { headers: { 'content-type': 'text/plain' } })
    }
    if (kind === 'other') {
      rec.status = 404
      rec.end = now()
      return new Response('not here', { status: 404 })
    }
    fetches.set(rec.url, (fetches.get(rec.url) ?? 0) + 1)
    const h = live.get(host)!
    h.pages++
    if (h.last && at - h.last.at < h.minGap) {
      h.minGap = at - h.last.at
      h.minGapPair = [h.last, rec]
    }
    h.last = rec
    rec.inFlightHost = ++h.inFlight
    h.maxInFlight = Math.max(h.maxInFlight, h.inFlight)
    try {
      await sleep(delayMs, AbortSignal.any([req.signal, closing.signal]))
      if (req.signal.aborted) return new Response(null, { status: 499 })
      rec.status = 200
      return new Response(enc.encode(html(g)), { headers: { 'content-type': 'text/html; charset=utf-8' } })
    } finally {
      h.inFlight--
      rec.end = now()
    }
  }

  // One port on every address: bind the first on port 0, the others on the port it got; an
  // address whose port is taken by something else makes the whole set start again.
  let servers: Bun.Server<undefined>[] = []
  for (let attempt = 0; ; attempt++) {
    servers = []
    try {
      for (const hostname of hostNames) {
        const s: Bun.Server<undefined> = Bun.serve({ hostname, port: servers.length ? port : 0, idleTimeout: 60, fetch: (req, server) => handle(req, server) })
        if (!servers.length) port = s.port!
        servers.push(s)
      }
      break
    } catch (err) {
      for (const s of servers) s.stop(true)
      if (attempt >= 5) throw err
    }
  }

  const pages = () => requests.filter((r) => r.kind === 'page')
  const allUrls = Array.from({ length: N }, (_, g) => urlOf(g))

  return {
    port,
    hosts: hostNames,
    /** Every page's URL, page 0 (the seed) first. */
    urls: allUrls,
    pageCount: N,
    seed: urlOf(0),
    urlOf,
    linksOf,
    /** Every request received since start or the last reset(), in arrival order. */
    requests,
    /** Page requests, in arrival order (those after `since`, epoch ms, when given). */
    pageRequests: (since = -Infinity) => pages().filter((r) => r.at >= since),
    /** How many times a page was fetched. */
    fetchCount: (url: string) => fetches.get(url) ?? 0,
    /** All page fetches. */
    totalFetches: () => [...fetches.values()].reduce((a, b) => a + b, 0),
    /** Pages fetched more than once, with their count. */
    duplicates: () => [...fetches].filter(([, n]) => n > 1),
    /** Pages never fetched. */
    unfetched: () => allUrls.filter((u) => !fetches.has(u)),
    /** robots.txt fetches per host. */
    robotsFetches: (host: string) => robotsFetches.get(host) ?? 0,
    hostStats(): HostStats[] {
      return hostNames.map((host) => {
        const h = live.get(host)!
        const between = h.minGapPair && h.minGapPair.map((r) => r.client ?? '?').join('→')
        return { host, pages: h.pages, maxInFlight: h.maxInFlight, minGapMs: h.minGap, minGapBetween: between, robots: robotsFetches.get(host) ?? 0 }
      })
    },
    /** The most page requests in flight at once to any one host. */
    maxInFlight: () => Math.max(...[...live.values()].map((h) => h.maxInFlight)),
    /** The smallest gap between two page requests to one host, over every host (Infinity when none had two). */
    minGap: () => Math.min(...[...live.values()].map((h) => h.minGap)),
    /** The most page requests overlapping in time, over the whole site. */
    maxPagesAtOnce(): number {
      const events: [number, number][] = []
      for (const r of pages()) events.push([r.at, 1], [r.end ?? Infinity, -1])
      // Ends before starts at the same instant: touching requests do not overlap.
      events.sort((a, b) => a[0] - b[0] || a[1] - b[1])
      let n = 0
      let max = 0
      for (const [, d] of events) max = Math.max(max, (n += d))
      return max
    },
    /** The measures a failed expectation should show. */
    summary() {
      return {
        fetched: this.totalFetches(),
        unfetched: this.unfetched().length,
        duplicates: this.duplicates().length,
        maxInFlight: this.maxInFlight(),
        minGapMs: Math.round(this.minGap()),
        byClient: this.byClient(),
      }
    },
    /** Page requests by client (what `identify` named; `?` for unknown). */
    byClient(): Record<string, number> {
      const out: Record<string, number> = {}
      for (const r of pages()) out[r.client ?? '?'] = (out[r.client ?? '?'] ?? 0) + 1
      return out
    },
    /** Waits until every request's `identify` promise has given its answer. */
    async settled(): Promise<void> {
      while (identifying.size) await Promise.all([...identifying])
    },
    /** Forgets every request and measure. */
    reset() {
      requests.length = 0
      fetches.clear()
      robotsFetches.clear()
      for (const h of live.values()) Object.assign(h, fresh(h.inFlight))
    },
    async close() {
      closing.abort()
      await Promise.all(servers.map((s) => s.stop(true)))
      await Promise.all([...identifying])
    },
  }
}

/** Polls `probe` until it holds; fails, with the site's summary, when the site was crawled whole first or after `timeoutMs`. */
export async function untilSite(site: MultiHostSite, what: string, probe: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!probe()) {
    const over = site.unfetched().length === 0 && site.requests.every((r) => r.end !== null)
    if (over || Date.now() > deadline) throw new Error(`${what}: ${over ? 'the site was crawled whole first' : `not within ${timeoutMs} ms`}: ${JSON.stringify(site.summary())}`)
    await Bun.sleep(5)
  }
}

/**
 * Which of the given processes owns the client end of a connection to this machine, found the
 * way `ss -p` does: the socket whose local port is the request's source port and whose remote
 * end is the server's address and port, in /proc/net/tcp, gives an inode; the process with a
 * file descriptor on `socket:[inode]` owns it. Linux only; the processes must be readable (the
 * same user, or root). `pids` names each process; the answer is its name, or null.
 *
 * The look-ups run on a worker thread: reading every descriptor of a few busy processes takes
 * milliseconds, and on the site's own thread it would hold back the arrival of the requests
 * behind it, which then look closer together than the crawler sent them. A request is looked up
 * as it arrives, while its connection is open; a connection's answer is kept by its source port
 * and destination address while it serves requests (a port is used again only once the
 * connection that had it is gone), and the processes' descriptors are read again whenever an
 * inode is not known yet. close() ends the thread.
 */
export function socketOwner(pids: () => Record<string, number>): Identify & { close(): void } {
  let worker: Worker | null = null
  const waiting = new Map<number, (client: string | null) => void>()
  let next = 0
  const thread = () => {
    if (worker) return worker
    const w = new Worker(new URL(import.meta.url), { workerData: { socketOwner: true } })
    w.unref()
    w.on('message', (m: { id: number; client: string | null }) => {
      waiting.get(m.id)?.(m.client)
      waiting.delete(m.id)
    })
    return (worker = w)
  }
  const identify = (peer: { address: string; port: number }, host: string, port: number) =>
    new Promise<string | null>((resolve) => {
      const id = ++next
      waiting.set(id, resolve)
      thread().postMessage({ id, peerPort: peer.port, host, port, pids: pids() })
    })
  return Object.assign(identify, {
    close() {
      void worker?.terminate()
      worker = null
      for (const resolve of waiting.values()) resolve(null)
      waiting.clear()
    },
  })
}

/** The look-up itself, synchronous: what the worker thread runs. */
function ownerLookup() {
  const byInode = new Map<number, string>()
  const byConnection = new Map<string, { client: string; seen: number }>()

  function inodeOf(peerPort: number, host: string, port: number): number | null {
    const text = readFileSync('/proc/net/tcp', 'utf8')
    for (const line of text.split('\n')) {
      const cols = line.trim().split(/\s+/)
      if (cols.length < 10 || !cols[1]!.includes(':')) continue
      const [, local, remote] = cols as [string, string, string]
      if (parseInt(local.split(':')[1]!, 16) !== peerPort || parseInt(remote.split(':')[1]!, 16) !== port) continue
      if (ipOf(remote.split(':')[0]!) !== host) continue
      const inode = Number(cols[9])
      if (inode) return inode
    }
    return null
  }

  function scan(pids: Record<string, number>) {
    for (const [name, pid] of Object.entries(pids)) {
      let fds: string[]
      try {
        fds = readdirSync(`/proc/${pid}/fd`)
      } catch {
        continue // exited
      }
      for (const fd of fds) {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
          if (m) byInode.set(Number(m[1]), name)
        } catch {}
      }
    }
  }

  return (peerPort: number, host: string, port: number, pids: Record<string, number>): string | null => {
    const key = `${host}|${peerPort}`
    const known = byConnection.get(key)
    const t = Date.now()
    // A keep-alive connection is remembered; one not heard from for a second is looked up again,
    // in case its port now belongs to another connection.
    if (known && t - known.seen < 1000) {
      known.seen = t
      return known.client
    }
    const inode = inodeOf(peerPort, host, port)
    if (inode === null) return null
    if (!byInode.has(inode)) scan(pids)
    const client = byInode.get(inode) ?? null
    if (client) byConnection.set(key, { client, seen: t })
    return client
  }
}

if (!isMainThread && (workerData as { socketOwner?: boolean } | null)?.socketOwner) {
  const lookup = ownerLookup()
  parentPort!.on('message', (m: { id: number; peerPort: number; host: string; port: number; pids: Record<string, number> }) => {
    let client: string | null = null
    try {
      client = lookup(m.peerPort, m.host, m.port, m.pids)
    } catch {}
    parentPort!.postMessage({ id: m.id, client })
  })
}

/** `0A00007F` (a little-endian IPv4 address as /proc/net/tcp prints it) → `127.0.0.10`. */
function ipOf(hex: string): string {
  const n = parseInt(hex, 16)
  const bytes = [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255]
  return (new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? bytes : bytes.reverse()).join('.')
}
