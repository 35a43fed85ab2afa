import { connect as tcpConnect, createServer, type Server, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import type { Logger } from '../../log'
import { isLocalMachine, resolveAllChecked, type Lookup, type Resolved } from '../address-guard'
import { FetchError } from '../errors'
import { MAX_RESPONSE_HEADER_BYTES } from '../standard'
import { closingHeaders, HeadError, parseHead, readHead, replyHead, serializeHead, statusOf } from './http-head'
import { readSocksConnect, SOCKS_REPLY, SocksError, socksReply } from './socks5'

/**
 * The browser's only way out: a proxy inside trawl that every connection of Chromium goes
 * through, which applies the address guard (fetch.md) when it connects.
 *
 * Chromium is started with this proxy for everything, loopback included, and with a host
 * resolver that resolves nothing, so the proxy decides every connection: it resolves the name
 * itself, checks every address with the guard, and connects to the address it checked. A
 * refused target gets no connection at all, whatever asked for it (a navigation, a pre-connect,
 * an iframe, a WebSocket, a worker), and a DNS answer that changes after the check (rebinding)
 * reaches nothing, because the check's answer is the one connected to.
 *
 * - The direct route is a SOCKS5 proxy: every connection, http or https, ws or wss, is a tunnel
 *   to the checked address, and Chromium keeps its connections to a host alive inside them as
 *   it would without a proxy.
 * - A named proxy (TRAWL_PROXIES) gets an HTTP proxy of its own, which asks for a password only
 *   this process and its Chromium know (answered through the DevTools protocol), so no other
 *   local program can use the named proxy's credentials behind it. The target is checked the
 *   same way; then `CONNECT host:port` is chained through the named proxy, and a plain-http
 *   request in absolute form is sent on to it, one request per connection (`Connection: close`
 *   both ways, so the browser never sends its next request, for another host, down this one's
 *   connection). The named proxy resolves the name itself, as for the standard client.
 *
 * Anything that goes wrong closes the connection: nothing is ever passed on unchecked.
 */
export class GuardProxies {
  /** The password of the named proxies' listeners, sent by Chromium as Basic credentials after the first 407. */
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

  /**
   * The proxy a browser context is given: `socks5://127.0.0.1:port` for the direct route,
   * `http://127.0.0.1:port` for a named proxy's.
   */
  async url(upstream: string | null): Promise<string> {
    const key = upstream ?? ''
    let route = this.routes.get(key)
    if (!route) {
      route = this.listen(upstream ? new URL(upstream) : null)
      this.routes.set(key, route)
      route.catch(() => this.routes.delete(key))
    }
    return `${upstream ? 'http' : 'socks5'}://127.0.0.1:${(await route).port}`
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

  /**
   * The guard's answer for a host, as this proxy would connect to it: every address it resolves
   * to (IP literals as they are), each checked; rejects with `blocked_address` or `dns`.
   */
  check(host: string): Promise<Resolved[]> {
    return resolveAllChecked(host, this.opts.allowPrivate, this.opts.lookup)
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
        client.setNoDelay(true)
        const served = upstream ? this.serveHttp(client, upstream) : this.serveSocks(client)
        served.catch((err) => {
          this.opts.log.debug('browser proxy connection failed', { error: String(err) })
          client.destroy()
        })
      })
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const port = (server.address() as { port: number }).port
        this.ports.add(port)
        resolve({ server, port })
      })
    })
  }

  private track(socket: Socket) {
    this.sockets.add(socket)
    socket.on('error', () => {})
    socket.once('close', () => this.sockets.delete(socket))
    if (this.closed) socket.destroy()
  }

  // ---------------------------------------------------------------- the direct route: SOCKS5

  private async serveSocks(client: Socket): Promise<void> {
    let target: { host: string; port: number; rest: Buffer }
    try {
      target = await readSocksConnect(client, HEAD_TIMEOUT_MS)
    } catch (err) {
      if (err instanceof SocksError && err.reply !== null && !client.destroyed) client.end(socksReply(err.reply))
      else client.destroy()
      return
    }
    const { host, port, rest } = target
    const key = `${host}:${port}`
    const failed = (failure: ProxyFailure) => this.refuse(client, key, failure, socksReply(socksCode(failure)))
    const opened = await this.open(host, port, null, key, client, failed)
    if (!opened) return
    if (client.destroyed) return void opened.destroy()
    client.write(socksReply(SOCKS_REPLY.succeeded))
    if (rest.length) opened.write(rest)
    splice(client, opened)
  }

  // ---------------------------------------------------------------- a named proxy's route: HTTP

  private async serveHttp(client: Socket, upstream: URL): Promise<void> {
    let head: string
    let rest: Buffer
    try {
      ;({ head, rest } = await readHead(client, MAX_REQUEST_HEAD, HEAD_TIMEOUT_MS))
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

  /** CONNECT: checked, then chained through the named proxy, then bytes both ways. */
  private async tunnel(client: Socket, authority: string, rest: Buffer, upstream: URL) {
    const m = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]/?#@\s]+):(\d{1,5})$/.exec(authority)
    // The host as a URL would have it (lowercase, IPv4 in its one spelling), so the guard sees what is connected to.
    const host = m ? URL.parse(`http://${m[1]}/`)?.hostname : undefined
    const port = Number(m?.[2])
    if (!host || !(port > 0 && port < 65536)) return void client.end(replyHead(400, 'Bad Request', [], 'CONNECT needs host:port'))
    const key = `${host}:${port}`
    // A browser shows a failed CONNECT only as ERR_TUNNEL_CONNECTION_FAILED, whatever the status.
    const failed = (failure: ProxyFailure) => {
      const blocked = failure.error?.code === 'blocked_address'
      this.refuse(client, key, failure, replyHead(blocked ? 403 : 502, blocked ? 'Forbidden' : 'Bad Gateway', [], failure.error?.message ?? failure.detail))
    }
    const server = await this.open(host, port, upstream, key, client, failed)
    if (!server) return
    server.write(serializeHead(`CONNECT ${authority} HTTP/1.1`, [['Host', authority], ...upstreamAuth(upstream)]))
    const answer = await readHead(server, MAX_RESPONSE_HEADER_BYTES, CONNECT_TIMEOUT_MS).catch(() => null)
    const status = answer ? statusOf(parseHead(answer.head).start) : null
    if (status === null || status < 200 || status > 299) {
      server.destroy()
      return failed({ net: 'ERR_TUNNEL_CONNECTION_FAILED', detail: `the proxy ${upstream.host} answered CONNECT with ${status ?? 'no valid response'}` })
    }
    if (client.destroyed) return void server.destroy()
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
    if (answer!.rest.length) client.write(answer!.rest)
    if (rest.length) server.write(rest)
    splice(client, server)
  }

  /**
   * An absolute-form request: checked, then sent on to the named proxy on a connection of its
   * own, `Connection: close` both ways. A failure closes the client's connection unanswered, so
   * a page's script sees a network error, never a response it could read.
   */
  private async forward(client: Socket, method: string, target: string, version: string, headers: [string, string][], rest: Buffer, upstream: URL) {
    const url = URL.parse(target)
    if (!url || url.protocol !== 'http:') return void client.end(replyHead(400, 'Bad Request', [], 'not an http URL'))
    const port = Number(url.port || 80)
    const key = `${url.hostname}:${port}`
    const failed = (failure: ProxyFailure) => this.refuse(client, key, failure, null)
    const server = await this.open(url.hostname, port, upstream, key, client, failed)
    if (!server) return
    server.write(serializeHead(`${method} ${target} ${version}`, [...closingHeaders(headers), ...upstreamAuth(upstream)]))
    if (rest.length) server.write(rest)
    client.pipe(server)
    client.resume()
    let leftover: Buffer | undefined
    for (;;) {
      const answer = await readHead(server, MAX_RESPONSE_HEADER_BYTES, 0, leftover).catch((err: Error) => err)
      if (answer instanceof Error) {
        server.destroy()
        return failed({ net: netErrorOf(answer), detail: answer.message })
      }
      const response = parseHead(answer.head)
      const status = statusOf(response.start)
      if (status === null) {
        server.destroy()
        return failed({ net: 'ERR_INVALID_HTTP_RESPONSE', detail: `the proxy ${upstream.host} did not answer with HTTP/1.x` })
      }
      // The named proxy asking for credentials must not read as this proxy asking: the browser would answer it.
      if (status === 407) {
        server.destroy()
        return failed({ net: 'ERR_PROXY_AUTH_UNSUPPORTED', detail: `the proxy ${upstream.host} refused its credentials (407)` })
      }
      if (status >= 100 && status < 200 && status !== 101) {
        client.write(serializeHead(response.start, response.headers))
        leftover = answer.rest
        continue
      }
      client.write(serializeHead(response.start, status === 101 ? response.headers : closingHeaders(response.headers)))
      if (answer.rest.length) client.write(answer.rest)
      server.pipe(client)
      server.resume()
      server.once('close', (hadError: boolean) => hadError && client.destroy())
      client.once('close', () => server.destroy())
      return
    }
  }

  // ---------------------------------------------------------------- checking and connecting

  /**
   * Checks the target with the guard and connects: to the checked address, or to the named
   * proxy. Answers null when it failed the client itself (`failed`), or the client went away.
   */
  private async open(host: string, port: number, upstream: URL | null, key: string, client: Socket, failed: (f: ProxyFailure) => void): Promise<Socket | null> {
    let addresses: Resolved[]
    try {
      addresses = await this.check(host)
    } catch (err) {
      const error = err instanceof FetchError ? err : new FetchError('dns', `${host} could not be resolved`)
      this.opts.log.debug('browser proxy refused a connection', { to: key, error: error.message })
      failed({ error })
      return null
    }
    if (addresses.some((a) => this.isSelf(a.address, port))) {
      failed({ error: new FetchError('blocked_address', `${key} is the browser's own proxy`) })
      return null
    }
    if (client.destroyed) return null
    const candidates = upstream
      ? [{ address: upstream.hostname.replace(/^\[|\]$/g, ''), port: Number(upstream.port || (upstream.protocol === 'https:' ? 443 : 80)) }]
      : addresses.map((a) => ({ address: a.address, port }))
    let lastError: Error | null = null
    for (const candidate of candidates) {
      try {
        const socket = await this.connect(candidate.address, candidate.port, upstream)
        if (!client.destroyed) return socket
        socket.destroy()
        return null
      } catch (err) {
        lastError = err as Error
      }
    }
    failed({ net: upstream ? 'ERR_PROXY_CONNECTION_FAILED' : netErrorOf(lastError), detail: lastError?.message ?? 'no address to connect to' })
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
      }, CONNECT_TIMEOUT_MS)
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

  /** One of the proxy's own listeners, in any spelling of an address that reaches this machine. */
  private isSelf(address: string, port: number): boolean {
    return this.ports.has(port) && isLocalMachine(address)
  }

  /**
   * Keeps why the proxy passed nothing on, for the page to report, and fails the client's
   * request the way its protocol says a connection failed (`answer`), or, with none, by closing
   * the connection unanswered.
   */
  private refuse(client: Socket, key: string, failure: ProxyFailure, answer: string | Buffer | null) {
    this.failures.delete(key)
    this.failures.set(key, { failure, at: performance.now() })
    if (this.failures.size > MAX_FAILURES) this.failures.delete(this.failures.keys().next().value!)
    if (client.destroyed) return
    if (answer === null) client.destroy()
    else client.end(answer)
  }
}

export type GuardProxyOptions = {
  allowPrivate: boolean
  log: Logger
  /** How names are resolved (tests answer for names of their own). The system resolver. */
  lookup?: Lookup
}

/** Why the proxy did not pass a request on: the guard's refusal, or the net error a browser would have met. */
export type ProxyFailure = { error: FetchError; net?: undefined; detail?: undefined } | { error?: undefined; net: string; detail: string }

type Route = { server: Server; port: number }

const MAX_REQUEST_HEAD = 256 * 1024
/** How long a client may take to send its request. */
const HEAD_TIMEOUT_MS = 30_000
/** How long a connection to a target or a named proxy, or a named proxy's answer to CONNECT, may take. */
const CONNECT_TIMEOUT_MS = 30_000
const FAILURE_TTL_MS = 30_000
const MAX_FAILURES = 256

function upstreamAuth(upstream: URL): [string, string][] {
  if (!upstream.username) return []
  const credentials = `${decodeURIComponent(upstream.username)}:${decodeURIComponent(upstream.password)}`
  return [['Proxy-Authorization', `Basic ${Buffer.from(credentials).toString('base64')}`]]
}

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

/** The SOCKS reply for a failure: refused by the guard, no such host, or as the connection failed. */
function socksCode(failure: ProxyFailure): number {
  if (failure.error) return failure.error.code === 'blocked_address' ? SOCKS_REPLY.notAllowed : SOCKS_REPLY.hostUnreachable
  if (failure.net === 'ERR_CONNECTION_REFUSED') return SOCKS_REPLY.refused
  if (failure.net === 'ERR_CONNECTION_TIMED_OUT') return SOCKS_REPLY.timedOut
  if (failure.net === 'ERR_ADDRESS_UNREACHABLE') return SOCKS_REPLY.hostUnreachable
  return SOCKS_REPLY.failure
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
