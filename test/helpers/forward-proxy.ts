/**
 * A small HTTP forward proxy for tests, on 127.0.0.1, port 0.
 *
 * Bun's fetch(url, {proxy}) sends a plain-http request to the proxy in absolute form
 * (`GET http://host:port/path HTTP/1.1`, plus `Proxy-Connection: Keep-Alive`), and an https one as
 * `CONNECT host:443`. A node:net front reads the first request head of each connection: CONNECT
 * opens a tunnel; anything else is piped to an inner Bun.serve that records the request and
 * forwards it with fetch (no redirects followed, bodies passed through still encoded), adding
 * `Via: 1.1 trawl-test-proxy` so the target can tell it came through here.
 *
 * `map` rewrites where a target goes: a test can ask for `http://93.184.216.34/…` (a public
 * address the address guard lets through) and have the proxy deliver it to a loopback fixture.
 */
import { connect, createServer, type Socket } from 'node:net'

export type ForwardedRequest = {
  method: string
  /** The absolute URL the client asked for. */
  target: string
  /** Where it was sent after `map`. */
  forwardedTo: string
  headers: [string, string][]
  at: number
}

export type ForwardProxyOptions = {
  /** Where to send a request for `target` (default: the target itself). */
  map?: (target: URL) => string | URL
}

export type ForwardProxy = {
  /** `http://127.0.0.1:port`, what TRAWL_PROXIES names. */
  url: string
  port: number
  /** Plain-http requests forwarded, in arrival order. */
  readonly requests: ForwardedRequest[]
  /** CONNECT authorities (`host:port`) tunnelled. */
  readonly connects: string[]
  reset(): void
  close(): Promise<void>
}

const HOP_BY_HOP = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'upgrade'])

export async function forwardProxy(opts: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const map = opts.map ?? ((u: URL) => u)
  let requests: ForwardedRequest[] = []
  let connects: string[] = []
  const sockets = new Set<Socket>()

  const inner = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const at = performance.now()
      const target = new URL(req.url)
      const to = new URL(String(map(target)))
      const headers = new Headers()
      for (const [name, value] of req.headers) if (!HOP_BY_HOP.has(name)) headers.append(name, value)
      headers.set('via', '1.1 trawl-test-proxy')
      requests.push({ method: req.method, target: req.url, forwardedTo: to.href, headers: [...req.headers], at })
      const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer()
      try {
        const res = await fetch(to, { method: req.method, headers, body, redirect: 'manual', decompress: false, signal: req.signal })
        const out = new Headers()
        for (const [name, value] of res.headers) if (!HOP_BY_HOP.has(name)) out.append(name, value)
        return new Response(res.body, { status: res.status, headers: out })
      } catch (err) {
        return new Response(`proxy could not reach ${to.href}: ${(err as Error).message}`, { status: 502 })
      }
    },
  })

  const pipe = (a: Socket, b: Socket) => {
    a.pipe(b)
    b.pipe(a)
    a.on('error', () => b.destroy())
    b.on('error', () => a.destroy())
    a.on('close', () => b.destroy())
    b.on('close', () => a.destroy())
  }

  const front = createServer((client) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => {})
    let buffered = Buffer.alloc(0)
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      const end = buffered.indexOf('\r\n\r\n')
      if (end < 0) return
      client.off('data', onData)
      client.pause()
      const [method, authority] = buffered.subarray(0, end).toString('latin1').split(' ')
      if (method === 'CONNECT') {
        const to = new URL(String(map(new URL(`https://${authority}/`))))
        connects.push(authority!)
        const upstream = connect(Number(to.port || 443), to.hostname, () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
          const rest = buffered.subarray(end + 4)
          if (rest.length) upstream.write(rest)
          pipe(client, upstream)
          client.resume()
        })
        sockets.add(upstream)
        upstream.on('error', () => {
          client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n')
        })
        return
      }
      const upstream = connect(inner.port!, '127.0.0.1', () => {
        upstream.write(buffered)
        pipe(client, upstream)
        client.resume()
      })
      sockets.add(upstream)
    }
    client.on('data', onData)
  })
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve))
  const port = (front.address() as { port: number }).port

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get requests() {
      return requests
    },
    get connects() {
      return connects
    },
    reset() {
      requests = []
      connects = []
    },
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => front.close(() => resolve()))
      await inner.stop(true)
    },
  }
}
