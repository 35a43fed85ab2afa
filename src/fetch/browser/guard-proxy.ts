import { connect as tcpConnect, createServer, type Server, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import type { Logger } from '../../log'
import { literalChecked, resolveNameChecked, type Lookup, type Resolved } from '../address-guard'
import { FetchError } from '../errors'
import { closingHeaders, HeadError, parseHead, readHead, replyHead, serializeHead, statusOf } from './http-head'

/**
 * The browser's only way out: an HTTP proxy inside trawl that every connection of Chromium goes
 * through: the address guard (fetch.md) for the browser client.
 *
 * Chromium is started with this proxy for everything, loopback included, and with a host
 * resolver that resolves nothing, so the proxy decides every connection: it resolves the name
 * itself, checks every address with the guard, and connects to the address it checked. A
 * refused target gets no connection at all, whatever asked for it (a navigation, a pre-connect,
 * an iframe, a WebSocket, a worker), and a DNS answer that changes after the check (rebinding)
 * reaches nothing, because the check's answer is the one connected to.
 *
 * - `CONNECT host:port` (https, ws and wss) opens a tunnel to the checked address.
 * - An absolute-form request (`GET http://host/path`) is sent on a connection of its own, with
 *   `Connection: close` both ways, so the browser never sends a request for another host down
 *   this one's connection.
 * - With a named proxy (TRAWL_PROXIES) the target is checked the same way and the request goes
 *   on through that proxy, which then resolves the name as it does for the standard client.
 *
 * Each route (direct, or one per named proxy) has a listener of its own on 127.0.0.1, and a
 * browser context is pointed at the one it needs. Every listener asks for a password only this
 * process and its Chromium know (answered through the DevTools protocol), so no other local
 * program can use it, or the named proxies' credentials behind it. Anything that goes wrong
 * closes the connection: nothing is ever passed on unchecked.
 */
export class GuardProxies {
  /** The proxy password, sent by Chromium as Basic credentials after the first 407. */
  readonly username = 'trawl'
  readonly password = Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url')
  private readonly expected: string
  private readonly routes = new Map<string, Promise<Route>>()
  private readonly ports = new Set<number>()
  private readonly sockets = new Set<Socket>()
  private readonly failures = new Map<string, { failure: ProxyFailure; at: number }>()
  private closed = false

  constructor(private readonly opts: GuardProxyOptions) {
    this.expected = `Basic ${Buffer.from(`${this.username}:${this.password}`).toString('base64')}`
  }

  /** The proxy URL a browser context is given: the listener of the direct route or of a named proxy. */
  async url(upstream: string | null): Promise<string> {
    const key = upstream ?? ''
    let route = this.routes.get(key)
    if (!route) {
      route = this.listen(upstream ? new URL(upstream) : null)
      this.routes.set(key, route)
      route.catch(() => this.routes.delete(key))
    }
    return `http://127.0.0.1:${(await route).port}`
  }

  /** Whether an auth challenge's origin (`http://127.0.0.1:port`) is one of these listeners. */
  isOwn(origin: string): boolean {
    const m = /^(?:http:\/\/)?127\.0\.0\.1:(\d+)$/.exec(origin)
    return m !== null && this.ports.has(Number(m[1]))
  }

  /**
   * Why the proxy did not connect a URL's host since `since` (performance.now()), if it did not:
   * what the page reports for a document whose request the proxy refused or could not connect.
   */
  failureFor(url: string, since: number): ProxyFailure | null {
    const u = URL.parse(url)
    if (!u) return null
    const entry = this.failures.get(`${u.hostname}:${u.port || (u.protocol === 'https:' || u.protocol === 'wss:' ? 443 : 80)}`)
    return entry && entry.at >= since && performance.now() - entry.at < FAILURE_TTL_MS ? entry.failure : null
  }

  async close(): Promise<void> {
    this.closed = true
    for (const s of this.sockets) s.destroy()
    const routes = await Promise.allSettled(this.routes.values())
    await Promise.all(routes.map((r) => (r.status === 'fulfilled' ? new Promise<void>((resolve) => r.value.server.close(() => resolve())) : null)))
  }

  private listen(upstream: URL | null): Promise<Route> {
    if (this.closed) return Promise.reject(new FetchError('browser_unavailable', 'the browser proxy is closed'))
    return new Promise((resolve, reject) => {
      const server = createServer((client) => {
        this.track(client)
        this.serve(client, upstream).catch((err) => {
          this.opts.log.debug('browser proxy connection failed', { error: String(err) })
          client.destroy()
        })
      })
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const port = (server.address() as { port: number }).port
        this.ports.add(port)
        resolve({ server, port, upstream })
      })
    })
  }

  private track(socket: Socket) {
    this.sockets.add(socket)
    socket.on('error', () => {})
    socket.once('close', () => this.sockets.delete(socket))
    if (this.closed) socket.destroy()
  }

  private async serve(client: Socket, upstream: URL | null): Promise<void> {
    client.setNoDelay(true)
    let head: string
    let rest: Buffer
    try {
      ;({ head, rest } = await readHead(client, MAX_REQUEST_HEAD, this.opts.headTimeoutMs ?? HEAD_TIMEOUT_MS))
    } catch (err) {
      if (err instanceof HeadError && err.status) client.end(replyHead(err.status, 'Bad Request', [], err.message))
      else client.destroy()
      return
    }
    const request = parseHead(head)
    const [method = '', target = '', version = ''] = request.start.split(' ')
    const auth = request.headers.find(([n]) => n.toLowerCase() === 'proxy-authorization')?.[1]
    if (auth !== this.expected) {
      client.end(replyHead(407, 'Proxy Authentication Required', [['Proxy-Authenticate', 'Basic realm="trawl"']]))
      return
    }
    if (!/^HTTP\/1\.[01]$/.test(version)) return void client.end(replyHead(400, 'Bad Request', [], 'not an HTTP/1.x request'))
    if (method === 'CONNECT') return this.tunnel(client, target, rest, upstream)
    if (target.startsWith('http://')) return this.forward(client, method, target, version, request.headers, rest, upstream)
    client.end(replyHead(400, 'Bad Request', [], 'the browser proxy takes CONNECT and absolute http:// requests only'))
  }

  /** CONNECT: a tunnel to the checked address (or through the named proxy), then bytes both ways. */
  private async tunnel(client: Socket, authority: string, rest: Buffer, upstream: URL | null) {
    const m = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]/?#@\s]+):(\d{1,5})$/.exec(authority)
    // The host as a URL would have it (lowercase, IPv4 in its one spelling), so the guard sees what is connected to.
    const host = m ? URL.parse(`http://${m[1]}/`)?.hostname : undefined
    const port = Number(m?.[2])
    if (!host || !(port > 0 && port < 65536)) return void client.end(replyHead(400, 'Bad Request', [], 'CONNECT needs host:port'))
    const key = `${host}:${port}`
    const opened = await this.open(host, port, upstream, key, client, true)
    if (!opened) return
    let server = opened.socket
    let early: Buffer = Buffer.alloc(0)
    if (upstream) {
      server.write(serializeHead(`CONNECT ${authority} HTTP/1.1`, [['Host', authority], ...this.upstreamAuth(upstream)]))
      const answer = await readHead(server, MAX_RESPONSE_HEAD, CONNECT_TIMEOUT_MS).catch(() => null)
      const status = answer ? statusOf(parseHead(answer.head).start) : null
      if (status === null || status < 200 || status > 299) {
        server.destroy()
        return this.refuse(client, key, { net: 'ERR_TUNNEL_CONNECTION_FAILED', detail: `the proxy ${upstream.host} answered CONNECT with ${status ?? 'no valid response'}` }, true)
      }
      early = answer!.rest
    }
    if (client.destroyed) return void server.destroy()
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
    if (early.length) client.write(early)
    if (rest.length) server.write(rest)
    splice(client, server)
  }

  /** An absolute-form request: one exchange on a connection of its own, `Connection: close` both ways. */
  private async forward(client: Socket, method: string, target: string, version: string, headers: [string, string][], rest: Buffer, upstream: URL | null) {
    const url = URL.parse(target)
    if (!url || url.protocol !== 'http:') return void client.end(replyHead(400, 'Bad Request', [], 'not an http URL'))
    const port = Number(url.port || 80)
    const key = `${url.hostname}:${port}`
    const opened = await this.open(url.hostname, port, upstream, key, client, false)
    if (!opened) return
    const server = opened.socket
    // The target as the browser wrote it: re-serializing the URL could change its escapes.
    const pathStart = target.slice('http://'.length).search(/[/?#]/)
    const path = pathStart < 0 ? '/' : target.slice('http://'.length + pathStart)
    const start = upstream ? `${method} ${target} ${version}` : `${method} ${path.startsWith('/') ? path : `/${path}`} ${version}`
    server.write(serializeHead(start, [...closingHeaders(headers), ...(upstream ? this.upstreamAuth(upstream) : [])]))
    if (rest.length) server.write(rest)
    client.pipe(server)
    client.resume()
    let leftover: Buffer | undefined
    for (;;) {
      const answer = await readHead(server, MAX_RESPONSE_HEAD, 0, leftover).catch((err: Error) => err)
      if (answer instanceof Error) {
        server.destroy()
        // Nothing was answered yet: the page sees why, as the browser would have without a proxy.
        return this.refuse(client, key, { net: netErrorOf(answer), detail: answer.message }, false)
      }
      const response = parseHead(answer.head)
      const status = statusOf(response.start)
      if (status === null) {
        server.destroy()
        return this.refuse(client, key, { net: 'ERR_INVALID_HTTP_RESPONSE', detail: `${key} did not answer with HTTP/1.x` }, false)
      }
      // A named proxy asking for credentials must not read as this proxy asking: the browser would answer it.
      if (status === 407 && upstream) {
        server.destroy()
        return this.refuse(client, key, { net: 'ERR_PROXY_AUTH_UNSUPPORTED', detail: `the proxy ${upstream.host} refused its credentials (407)` }, false)
      }
      if (status === 101) {
        client.write(serializeHead(response.start, response.headers))
      } else if (status >= 100 && status < 200) {
        client.write(serializeHead(response.start, response.headers))
        leftover = answer.rest
        continue
      } else {
        client.write(serializeHead(response.start, closingHeaders(response.headers)))
      }
      if (answer.rest.length) client.write(answer.rest)
      server.pipe(client)
      server.resume()
      server.once('close', (failed: boolean) => failed && client.destroy())
      client.once('close', () => server.destroy())
      return
    }
  }

  /**
   * Checks the target with the guard and connects: to the checked address, or to the named
   * proxy. Answers null when it answered the client itself (refused, or no connection).
   */
  private async open(host: string, port: number, upstream: URL | null, key: string, client: Socket, tunnel: boolean): Promise<{ socket: Socket } | null> {
    let addresses: Resolved[]
    try {
      addresses = literalChecked(host, this.opts.allowPrivate) ?? (await resolveNameChecked(host, this.opts.allowPrivate, this.opts.lookup))
    } catch (err) {
      const error = err instanceof FetchError ? err : new FetchError('dns', `${host} could not be resolved`)
      this.opts.log.debug('browser proxy refused a connection', { to: key, error: error.message })
      this.refuse(client, key, { error }, tunnel)
      return null
    }
    if (addresses.some((a) => this.isSelf(a.address, port))) {
      this.refuse(client, key, { error: new FetchError('blocked_address', `${key} is the browser's own proxy`) }, tunnel)
      return null
    }
    if (client.destroyed) return null
    let lastError: Error | null = null
    const candidates = upstream ? [{ address: upstream.hostname.replace(/^\[|\]$/g, ''), port: Number(upstream.port || (upstream.protocol === 'https:' ? 443 : 80)) }] : addresses.map((a) => ({ address: a.address, port }))
    for (const candidate of candidates) {
      try {
        const socket = await this.connect(candidate.address, candidate.port, upstream)
        if (client.destroyed) {
          socket.destroy()
          return null
        }
        return { socket }
      } catch (err) {
        lastError = err as Error
      }
    }
    const net = upstream ? 'ERR_PROXY_CONNECTION_FAILED' : netErrorOf(lastError)
    this.refuse(client, key, { net, detail: lastError?.message ?? 'no address to connect to' }, tunnel)
    return null
  }

  private connect(address: string, port: number, upstream: URL | null): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const tls = upstream?.protocol === 'https:'
      const socket: Socket = tls ? tlsConnect({ host: address, port, servername: upstream!.hostname }) : tcpConnect({ host: address, port })
      this.track(socket)
      const timer = setTimeout(() => {
        socket.destroy()
        reject(Object.assign(new Error(`no connection to ${address}:${port} within ${CONNECT_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' }))
      }, this.opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS)
      socket.once(tls ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer)
        socket.setNoDelay(true)
        resolve(socket)
      })
      socket.once('error', (err) => {
        clearTimeout(timer)
        reject(err)
      })
    })
  }

  private isSelf(address: string, port: number): boolean {
    return this.ports.has(port) && (address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1' || address === '0.0.0.0')
  }

  private upstreamAuth(upstream: URL): [string, string][] {
    if (!upstream.username) return []
    const credentials = `${decodeURIComponent(upstream.username)}:${decodeURIComponent(upstream.password)}`
    return [['Proxy-Authorization', `Basic ${Buffer.from(credentials).toString('base64')}`]]
  }

  /**
   * Keeps why the proxy passed nothing on, for the page to report, and fails the client's
   * request the way a failed connection would: a CONNECT gets an error status (which a browser
   * shows only as ERR_TUNNEL_CONNECTION_FAILED), an absolute-form request gets its connection
   * closed with no answer, so a refused subresource is a network error to the page's scripts,
   * never a response they could read.
   */
  private refuse(client: Socket, key: string, failure: ProxyFailure, tunnel: boolean) {
    this.failures.delete(key)
    this.failures.set(key, { failure, at: performance.now() })
    if (this.failures.size > MAX_FAILURES) this.failures.delete(this.failures.keys().next().value!)
    if (client.destroyed) return
    if (!tunnel) return void client.destroy()
    const blocked = failure.error?.code === 'blocked_address'
    client.end(replyHead(blocked ? 403 : 502, blocked ? 'Forbidden' : 'Bad Gateway', [], failure.error?.message ?? failure.detail))
  }
}

export type GuardProxyOptions = {
  allowPrivate: boolean
  log: Logger
  /** How names are resolved (tests answer for names of their own). The system resolver. */
  lookup?: Lookup
  /** How long a client may take to send its request head. 30 s. */
  headTimeoutMs?: number
  /** How long a connection to a target or a named proxy may take. 30 s. */
  connectTimeoutMs?: number
}

/** Why the proxy did not pass a request on: the guard's refusal, or the net error a browser would have met. */
export type ProxyFailure = { error: FetchError; net?: undefined; detail?: undefined } | { error?: undefined; net: string; detail: string }

type Route = { server: Server; port: number; upstream: URL | null }

const MAX_REQUEST_HEAD = 256 * 1024
const MAX_RESPONSE_HEAD = 256 * 1024
const HEAD_TIMEOUT_MS = 30_000
const CONNECT_TIMEOUT_MS = 30_000
const FAILURE_TTL_MS = 30_000
const MAX_FAILURES = 256

/** Bytes both ways until either side goes; then both go. */
function splice(a: Socket, b: Socket) {
  a.pipe(b)
  b.pipe(a)
  // A side that ended cleanly has its last bytes flushed to the other (pipe ends it); a failed one takes both down.
  a.once('close', (failed: boolean) => failed && b.destroy())
  b.once('close', (failed: boolean) => failed && a.destroy())
  a.resume()
  b.resume()
}

/** A socket error as the net error Chromium would have reported for a direct connection. */
function netErrorOf(err: unknown): string {
  const code = (err as { code?: string } | null)?.code ?? ''
  switch (code) {
    case 'ECONNREFUSED':
      return 'ERR_CONNECTION_REFUSED'
    case 'ECONNRESET':
    case 'EPIPE':
      return 'ERR_CONNECTION_RESET'
    case 'ETIMEDOUT':
      return 'ERR_CONNECTION_TIMED_OUT'
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'ERR_ADDRESS_UNREACHABLE'
  }
  if (err instanceof HeadError) return err.status === 431 ? 'ERR_RESPONSE_HEADERS_TOO_BIG' : 'ERR_EMPTY_RESPONSE'
  return 'ERR_CONNECTION_FAILED'
}
