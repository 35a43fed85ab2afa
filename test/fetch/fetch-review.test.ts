// Regression tests for the fetcher review (12 findings, reproductions in the review's scripts):
// body cap with Content-Length + chunked, cut and mis-framed bodies, non-Latin-1 header values,
// the deadline over DNS, rate-limit slots of abandoned requests, retry_on_status's own count,
// the caller's Host header on redirects and through a proxy, the batch body budget, address
// fallback on retry, malformed Content-Length, and cookies a browser would not keep.
//
// Only 127.0.0.x servers started here are contacted. Names (`*.review.test`, and a few under
// `com` / `github.io` for the public-suffix cookies) are answered by a mocked
// node:dns/promises `lookup` with loopback addresses; every other name goes to the real lookup,
// so the mock is harmless to other test files sharing the process.
import { afterAll, beforeAll, beforeEach, describe, expect, mock, test } from 'bun:test'
import * as realDns from 'node:dns/promises'
import { BATCH_BODY_BUDGET } from '../../src/api/fetch'
import { resolveAllChecked } from '../../src/fetch/address-guard'
import { testApi, type TestApi } from '../helpers/api'
import { SELF_SIGNED, fixtureSite, headerOf, rawServer } from '../helpers/fixture-site'
import { forwardProxy, type ForwardProxy } from '../helpers/forward-proxy'
import { b64, echoOf, expectError, expectInvalid, fetchOk, fetchTimed, unb64Text } from './support'

// ---- DNS: a few made-up names answer loopback addresses; the rest resolve for real ----------
type Answer = { address: string; family: number }[]
const realLookup = realDns.lookup
const SLOW_DNS = 'slow-dns.review.test'
const TWO_ADDRESSES = 'two-addresses.review.test'
const PSL_A = 'a.trawl-review.github.io'
const PSL_B = 'b.trawl-review.github.io'
const EVIL_COM = 'trawl-review-evil.com'
const BANK_COM = 'trawl-review-bank.com'
const loopback: Answer = [{ address: '127.0.0.1', family: 4 }]
const MOCKED: Record<string, () => Promise<Answer>> = {
  [SLOW_DNS]: () => new Promise((resolve) => setTimeout(() => resolve(loopback), 2000)),
  [TWO_ADDRESSES]: async () => [
    { address: '127.0.0.2', family: 4 },
    { address: '127.0.0.1', family: 4 },
  ],
  [PSL_A]: async () => loopback,
  [PSL_B]: async () => loopback,
  [EVIL_COM]: async () => loopback,
  [BANK_COM]: async () => loopback,
}
mock.module('node:dns/promises', () => ({
  ...realDns,
  lookup: (host: string, opts?: unknown) => {
    const answer = MOCKED[String(host).toLowerCase()]
    return answer ? answer() : (realLookup as (h: string, o?: unknown) => Promise<unknown>)(host, opts)
  },
}))

const site = fixtureSite()
const other = fixtureSite({ hostname: '127.0.0.2' })
const secure = fixtureSite({ tls: true })
const rl = fixtureSite({ hostname: '127.0.0.3' })
let proxy: ForwardProxy
let api: TestApi
let capped: TestApi
let trusting: TestApi
beforeAll(async () => {
  // Whatever Host the proxy is told, it delivers to the loopback fixture.
  proxy = await forwardProxy({ map: (t) => site.url(t.pathname + t.search) })
  api = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_PROXIES: `fwd=${proxy.url}` })
  capped = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_MAX_BODY_BYTES: '1000' })
  trusting = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' }, {}, SELF_SIGNED.cert)
})
afterAll(async () => {
  api.close()
  capped.close()
  trusting.close()
  await proxy.close()
  await Promise.all([site.close(), other.close(), secure.close(), rl.close()])
})
beforeEach(() => {
  site.reset()
  other.reset()
  secure.reset()
  rl.reset()
  proxy.reset()
})

/** A raw TCP server answering the n-th connection (from 1) with `respond(n)`; counts connections. */
function seqServer(respond: (n: number, sock: { write(s: string): number; end(s?: string): void }) => void) {
  let n = 0
  const l = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(sock) {
        respond(++n, sock)
      },
      open() {},
      close() {},
      error() {},
    },
  })
  return {
    url: (p = '/') => `http://127.0.0.1:${l.port}${p}`,
    get connections() {
      return n
    },
    close: () => l.stop(true),
  }
}

/** Confirms that the fetcher's own lookup sees the mock before any mocked name is fetched. */
async function expectMocked(...names: string[]) {
  for (const name of names) {
    const got = await resolveAllChecked(name, true)
    for (const a of got) expect(a.address).toMatch(/^127\.0\.0\.\d+$/)
  }
}

describe('1. the body cap holds when Content-Length and Transfer-Encoding: chunked disagree', () => {
  test('Content-Length: 10 + chunked with 200 KB of chunks, cap 1000 bytes → 502 too_large', async () => {
    const big = 'x'.repeat(200_000)
    const s = rawServer(`HTTP/1.1 200 OK\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`)
    try {
      expectError(await capped.post('/v1/fetch', { url: s.url() }), 502, 'too_large')
    } finally {
      s.close()
    }
  })

  test('the same with many small chunks (each under the cap) → 502 too_large', async () => {
    const chunk = 'y'.repeat(500)
    const frames = Array.from({ length: 400 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('')
    const s = rawServer(`HTTP/1.1 200 OK\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n${frames}0\r\n\r\n`)
    try {
      expectError(await capped.post('/v1/fetch', { url: s.url() }), 502, 'too_large')
    } finally {
      s.close()
    }
  })

  test('reading stops at the cap: a chunked body that never ends is too_large at once, not a timeout', async () => {
    // Content-Length: 10 + chunked, 5000 bytes of chunks, then the connection stays open. A reader
    // that believed the Content-Length (or read to the end before checking) would wait for the deadline.
    const chunk = 'z'.repeat(5000)
    const s = seqServer((_, sock) => void sock.write(`HTTP/1.1 200 OK\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n`))
    try {
      const { r, ms } = await fetchTimed(capped, { url: s.url(), timeout: '3s' })
      expectError(r, 502, 'too_large')
      expect(ms).toBeLessThan(1500)
    } finally {
      s.close()
    }
  })
})

describe('2. a body cut short is a 502 with a documented code, never a 500', () => {
  const CUT = 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: text/plain\r\n\r\nonly ten b'

  test('Content-Length 100, 10 bytes sent, then closed → 502 connect', async () => {
    const s = rawServer(CUT)
    try {
      expectError(await api.post('/v1/fetch', { url: s.url() }), 502, 'connect')
      expect(s.connections).toBe(1)
    } finally {
      s.close()
    }
  })

  test('chunked, closed before the last chunk → 502 connect', async () => {
    const s = rawServer('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n')
    try {
      expectError(await api.post('/v1/fetch', { url: s.url() }), 502, 'connect')
    } finally {
      s.close()
    }
  })

  test('chunked with a garbage chunk size → 502 bad_response', async () => {
    const s = rawServer('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nZZZ\r\n')
    try {
      expectError(await api.post('/v1/fetch', { url: s.url() }), 502, 'bad_response')
    } finally {
      s.close()
    }
  })

  test('a cut connection is retried: max_retries 1 → two connections, then 502 connect', async () => {
    const s = rawServer(CUT)
    try {
      expectError(await api.post('/v1/fetch', { url: s.url(), max_retries: 1 }), 502, 'connect')
      expect(s.connections).toBe(2)
    } finally {
      s.close()
    }
  })

  test('a body cut once, whole the next time → the retry answers 200', async () => {
    const s = seqServer((n, sock) => {
      if (n === 1) sock.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial')
      else sock.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok')
      sock.end()
    })
    try {
      const res = await fetchOk(api, { url: s.url(), max_retries: 2 })
      expect(res.status).toBe(200)
      expect(unb64Text(res.body)).toBe('ok')
      expect(s.connections).toBe(2)
    } finally {
      s.close()
    }
  })

  test('in a batch, a cut body is a connect error item, not internal', async () => {
    const s = rawServer(CUT)
    try {
      const r = await api.post('/v1/fetch/batch', { items: [{ url: s.url() }] })
      expect(r.status).toBe(200)
      expect(r.body.results).toEqual([{ ok: false, url: s.url(), error: { error: 'connect', message: expect.any(String) } }])
    } finally {
      s.close()
    }
  })
})

describe('3. header values must be Latin-1 (422 at the field), not a 500 from Headers()', () => {
  test.each([
    ['headers value €', { headers: [['X-A', 'price €5']] }, 'headers[0][1]'],
    ['user_agent ☃', { user_agent: 'Bot ☃' }, 'user_agent'],
    ['referrer 中', { referrer: 'http://x/中' }, 'referrer'],
    ['bearer_auth.token €', { middleware: [{ kind: 'bearer_auth', token: 't€' }] }, 'middleware[0].token'],
    ['set_headers value ☃', { middleware: [{ kind: 'set_headers', headers: [['X-B', '☃']] }] }, 'middleware[0].headers[0][1]'],
    ['cookie value 中', { cookies: [{ name: 'a', value: '中' }] }, 'cookies[0].value'],
  ])('%s → 422', async (_, over, field) => {
    expectInvalid(await api.post('/v1/fetch', { url: site.url('/echo'), ...over }), [field])
    expect(site.requests).toEqual([])
  })

  test('a batch item with a ☃ header → 422 at its item path', async () => {
    expectInvalid(await api.post('/v1/fetch/batch', { items: [{ url: site.url('/echo') }, { url: site.url('/echo'), headers: [['X', '☃']] }] }), ['items[1].headers[0][1]'])
    expect(site.requests).toEqual([])
  })

  test('Latin-1 (é, ö, ñ) is accepted everywhere and sent as it is', async () => {
    const res = await fetchOk(api, {
      url: site.url('/echo'),
      headers: [['X-A', 'café']],
      user_agent: 'Bot é',
      referrer: 'http://x/é',
      cookies: [{ name: 'a', value: 'é' }],
      middleware: [
        { kind: 'bearer_auth', token: 'tö' },
        { kind: 'set_headers', headers: [['X-B', 'ñ']] },
      ],
    })
    const echo = echoOf(res)
    expect(headerOf(echo.headers, 'x-a')).toBe('café')
    expect(headerOf(echo.headers, 'user-agent')).toBe('Bot é')
    expect(headerOf(echo.headers, 'referer')).toBe('http://x/é')
    expect(headerOf(echo.headers, 'authorization')).toBe('Bearer tö')
    expect(headerOf(echo.headers, 'x-b')).toBe('ñ')
    expect(echo.cookie_header).toBe('a=é')
  })
})

describe('4. the timeout covers DNS', () => {
  test('a lookup that takes 2 s does not hold a 200 ms fetch: 504 timeout within ~200 ms', async () => {
    const { r, ms } = await fetchTimed(api, { url: `http://${SLOW_DNS}:${site.port}/page`, timeout: '200ms' })
    expectError(r, 504, 'timeout')
    expect(ms).toBeLessThan(600)
    expect(site.requests).toEqual([])
  })
})

describe('5. rate_limit', () => {
  test('a request whose slot comes after its deadline answers 504 at once and books no slot', async () => {
    const mw = [{ kind: 'rate_limit', per_second: 0.5 }]
    const url = rl.url('/page/rl')
    const t0 = performance.now()
    // One request takes the first slot; the next slot (2 s later) is past the others' 1 s deadline.
    const burst = await Promise.all(Array.from({ length: 5 }, () => fetchTimed(api, { url, middleware: mw, timeout: '1s' })))
    expect(burst.map(({ r }) => r.status).sort()).toEqual([200, 504, 504, 504, 504])
    for (const { r, ms } of burst) {
      if (r.status !== 504) continue
      expectError(r, 504, 'timeout')
      expect(ms).toBeLessThan(600) // at once, not when the 1 s deadline passes
    }
    expect(rl.requests).toHaveLength(1)
    // Just after the second slot: only the one request that went counts, so this one goes at once.
    await Bun.sleep(Math.max(0, t0 + 2050 - performance.now()))
    const { r, ms } = await fetchTimed(api, { url, middleware: mw, timeout: '2s' })
    expect(r.status).toBe(200)
    expect(r.body.status).toBe(200)
    expect(ms).toBeLessThan(400)
    expect(rl.requests).toHaveLength(2)
  })

  test('per_second below 0.001 → 422 on middleware[0].per_second; 0.001 is accepted', async () => {
    for (const ps of [0.0005, 0.00099, 1e-7]) {
      expectInvalid(await api.post('/v1/fetch', { url: site.url('/page/ps'), middleware: [{ kind: 'rate_limit', per_second: ps }] }), ['middleware[0].per_second'])
    }
    expect(site.requests).toEqual([])
    const res = await fetchOk(api, { url: site.url('/page/ps'), middleware: [{ kind: 'rate_limit', per_second: 0.001 }] })
    expect(res.status).toBe(200)
  })
})

describe('6. retry_on_status has its own count beside max_retries', () => {
  test('404, 404, 503, 200 with retry_on_status{404, max 2} + max_retries 1 → 200 after 4 requests', async () => {
    const seq = [404, 404, 503, 200]
    let i = 0
    site.route('/seq', () => {
      const st = seq[Math.min(i++, seq.length - 1)]!
      return new Response(`answer ${st}`, { status: st, headers: { 'retry-after': '0' } })
    })
    const res = await fetchOk(api, { url: site.url('/seq'), max_retries: 1, middleware: [{ kind: 'retry_on_status', statuses: [404], max_retries: 2 }] })
    expect(res.status).toBe(200)
    expect(unb64Text(res.body)).toBe('answer 200')
    expect(site.requestsTo('/seq')).toHaveLength(4)
  })

  test('404, 404, connection closed, 200 (same budgets) → 200 after 4 connections', async () => {
    const s = seqServer((n, sock) => {
      if (n <= 2) sock.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nRetry-After: 0\r\nConnection: close\r\n\r\n')
      else if (n === 3) sock.end()
      else sock.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok')
    })
    try {
      const res = await fetchOk(api, { url: s.url(), max_retries: 1, middleware: [{ kind: 'retry_on_status', statuses: [404], max_retries: 2 }] })
      expect(res.status).toBe(200)
      expect(s.connections).toBe(4)
    } finally {
      s.close()
    }
  })

  test('always 503 with retry_on_status{503, max 2} + max_retries 3 → 2 + 3 retries, 6 requests', async () => {
    const res = await fetchOk(api, {
      url: site.url('/flaky/both?fail=100&retry_after=0'),
      max_retries: 3,
      middleware: [{ kind: 'retry_on_status', statuses: [503], max_retries: 2 }],
    })
    expect(res.status).toBe(503)
    expect(site.hits('both')).toBe(6)
  })
})

describe("7. the caller's Host header", () => {
  test('is not sent to a redirect target on another host', async () => {
    site.route('/to-other', () => new Response(null, { status: 302, headers: { location: other.url('/echo') } }))
    const res = await fetchOk(api, { url: site.url('/to-other'), max_redirects: 2, headers: [['Host', 'tenant-a.example']] })
    expect(res.final_url).toBe(other.url('/echo'))
    expect(headerOf(site.requestsTo('/to-other')[0]!.headers, 'host')).toBe('tenant-a.example')
    expect(headerOf(echoOf(res).headers, 'host')).toBe(`127.0.0.2:${other.port}`)
    expect(headerOf(other.requests[0]!.headers, 'host')).toBe(`127.0.0.2:${other.port}`)
  })

  test("through a proxy the Host header is the URL's host, whatever the caller set", async () => {
    const res = await fetchOk(api, { url: site.url('/echo'), proxies: ['fwd'], headers: [['Host', 'evil.example']] })
    expect(res.status).toBe(200)
    expect(proxy.requests).toHaveLength(1)
    expect(headerOf(proxy.requests[0]!.headers, 'host')).toBe(`127.0.0.1:${site.port}`)
    expect(headerOf(echoOf(res).headers, 'via')).toBe('1.1 trawl-test-proxy')
  })
})

describe('8. the batch body budget', () => {
  test(`bodies passing ${BATCH_BODY_BUDGET} bytes in all turn the items finishing after that into too_large`, async () => {
    const MiB = 1024 * 1024
    expect(BATCH_BODY_BUDGET).toBe(64 * MiB)
    const size = 22 * MiB // three of them pass 64 MiB; two do not
    const body = new Uint8Array(size).fill(0x61)
    site.route('/big', () => new Response(body, { headers: { 'content-type': 'application/octet-stream' } }))
    const big = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_MAX_BODY_BYTES: String(32 * MiB) })
    try {
      // The small item answers well after the three big ones are in.
      const items = [{ url: site.url('/big?i=0') }, { url: site.url('/big?i=1') }, { url: site.url('/big?i=2') }, { url: site.url('/slow-headers?ms=1500') }]
      const r = await big.post('/v1/fetch/batch', { items: items.map((it) => ({ ...it, timeout: '60s' })) })
      expect(r.status).toBe(200)
      const results: any[] = r.body.results
      expect(results).toHaveLength(4)
      const bigs = results.slice(0, 3)
      const ok = bigs.filter((x) => x.ok)
      expect(ok).toHaveLength(2)
      for (const x of ok) {
        expect(x.status).toBe(200)
        expect(Buffer.from(x.body, 'base64').byteLength).toBe(size)
      }
      const over = bigs.filter((x) => !x.ok)
      expect(over).toEqual([{ ok: false, url: expect.stringContaining('/big?i='), error: { error: 'too_large', message: expect.any(String) } }])
      expect(results[3]).toEqual({ ok: false, url: items[3]!.url, error: { error: 'too_large', message: expect.any(String) } })
      expect(site.requestsTo('/big')).toHaveLength(3)
    } finally {
      big.close()
    }
  })
})

describe('9. a name with several addresses', () => {
  test('a retry tries the next address: [127.0.0.2 refused, 127.0.0.1 serving] with max_retries 1 → 200', async () => {
    expect(other.port).not.toBe(site.port) // nothing listens on 127.0.0.2:<site.port>
    await expectMocked(TWO_ADDRESSES)
    const url = `http://${TWO_ADDRESSES}:${site.port}/echo`
    expectError(await api.post('/v1/fetch', { url }), 502, 'connect')
    expect(site.requests).toEqual([])
    const res = await fetchOk(api, { url, max_retries: 1 })
    expect(res.status).toBe(200)
    expect(site.requests).toHaveLength(1)
    expect(headerOf(echoOf(res).headers, 'host')).toBe(`${TWO_ADDRESSES}:${site.port}`)
  })
})

describe('10. malformed responses and failures that are not retried', () => {
  test.each([
    ['Content-Length: -1', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nabc'],
    ['Content-Length: 0x10', 'HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\nConnection: close\r\n\r\n0123456789abcdef'],
  ])('%s → 502 bad_response, not retried', async (_, response) => {
    const s = rawServer(response)
    try {
      expectError(await api.post('/v1/fetch', { url: s.url(), max_retries: 2 }), 502, 'bad_response')
      expect(s.connections).toBe(1)
    } finally {
      s.close()
    }
  })

  test('TRACE with a body → 422 on body, nothing sent', async () => {
    expectInvalid(await api.post('/v1/fetch', { url: site.url('/echo'), method: 'TRACE', body: b64('secret') }), ['body'])
    expect(site.requests).toEqual([])
  })

  test('an unknown non-network failure (an unrequested 101 Switching Protocols) is a 502, not retried', async () => {
    const s = rawServer('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
    try {
      const r = await api.post('/v1/fetch', { url: s.url(), max_retries: 2 })
      expect(r.status).toBe(502)
      expect(['connect', 'bad_response']).toContain(r.body.error)
      expect(s.connections).toBe(1)
    } finally {
      s.close()
    }
  })
})

describe('12. cookies a browser would not keep are reported but not sent to later hops', () => {
  test('Secure over http, Domain=github.io, Domain=com and Domain=<part of an IP> along one redirect chain', async () => {
    await expectMocked(PSL_A, PSL_B, EVIL_COM, BANK_COM)
    const at = (host: string, path: string) => `http://${host}:${site.port}${path}`
    const hop =
      (location: string, setCookies: string[] = []) =>
      () => {
        const headers = new Headers({ location })
        for (const c of setCookies) headers.append('set-cookie', c)
        return new Response(null, { status: 302, headers })
      }
    site.route('/c1', hop('/c2', ['keep=1; Path=/', 'psl=1; Domain=github.io; Path=/']))
    site.route('/c2', hop(at(PSL_B, '/c3')))
    site.route('/c3', hop(at(EVIL_COM, '/c4')))
    site.route('/c4', hop(at(BANK_COM, '/c5'), ['tld=1; Domain=com; Path=/']))
    site.route('/c5', hop(site.url('/c6')))
    site.route('/c6', hop(`${secure.origin}/echo`, ['sec=1; Secure; Path=/', 'ipc=1; Domain=0.0.1; Path=/']))
    const res = await fetchOk(trusting, { url: at(PSL_A, '/c1'), max_redirects: 6 })
    expect(res.status).toBe(200)
    expect(res.final_url).toBe(`${secure.origin}/echo`)
    expect(res.redirects).toHaveLength(6)
    // Reported, every one of them.
    expect(res.cookies.map((c: any) => c.name)).toEqual(['keep', 'psl', 'tld', 'sec', 'ipc'])
    expect(res.cookies.find((c: any) => c.name === 'psl').domain).toBe('github.io')
    expect(res.cookies.find((c: any) => c.name === 'sec').secure).toBe(true)
    // Sent on: only the ordinary host-only cookie, to its own host.
    const cookieAt = (path: string) => site.requestsTo(path).map((r) => r.cookieHeader)
    expect(cookieAt('/c2')).toEqual(['keep=1'])
    expect(cookieAt('/c3')).toEqual([null]) // b.…github.io: no Domain=github.io cookie
    expect(cookieAt('/c5')).toEqual([null]) // …bank.com: no Domain=com cookie
    expect(cookieAt('/c6')).toEqual([null])
    // https on 127.0.0.1: neither the Secure cookie set over http nor the Domain=0.0.1 one.
    expect(secure.requestsTo('/echo').map((r) => r.cookieHeader)).toEqual([null])
    expect(echoOf(res).cookie_header).toBeNull()
  })
})
