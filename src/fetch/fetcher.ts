import type { Logger } from '../log'
import { readCapped, decodeContent } from './body'
import type { BrowserClient } from './browser'
import { CookieJar } from './cookies'
import { headerValue } from './browser/shapes'
import { FetchError } from './errors'
import { applyHeaderPairs, planMiddleware, type MiddlewarePlan } from './middleware'
import { HostRateLimiter } from './rate-limit'
import { metaRefresh, nextMethod, REDIRECT_TYPE } from './redirects'
import { backoffMs, retryableStatus, retryAfterMs } from './retry'
import { exchange, fetchFailure } from './standard'
import type { FetchRequest, FetchResult, HeaderPair, Redirect } from './types'
import { defaultHeaders, isBrowserKeyword, resolveUserAgent } from './user-agents'

export type FetcherOptions = {
  allowPrivate: boolean
  /** Named proxies (TRAWL_PROXIES). */
  proxies: Record<string, string>
  maxBodyBytes: number
  log: Logger
  /** The browser client, or null where no browser may be used. */
  browser: BrowserClient | null
  /** Extra trust roots for TLS (tests); production uses the system's. */
  ca?: string
}

/** Where one attempt ended: the target's answer, or why there was none. */
type Attempt = { result: FetchResult; error?: undefined; retryAfter: number | null } | { error: unknown; result?: undefined; retryAfter?: undefined }

/**
 * Fetches for every part of trawl (the fetch API, crawls, scrapes): one deadline over the
 * whole call, redirects followed by hand and recorded, retries with backoff, middleware, the
 * address guard on every hop, bounded bodies.
 */
export class Fetcher {
  private limiter = new HostRateLimiter()

  constructor(private opts: FetcherOptions) {}

  /** Whether the browser client can be used here; starts Chromium when it is not running. */
  async browserAvailable(): Promise<boolean> {
    return (await this.opts.browser?.available()) ?? false
  }

  /** Closes the browser, if one was started. */
  async close() {
    await this.opts.browser?.close()
  }

  /**
   * `lane` keeps one tenant's rate limits apart from another's; `cancel` aborts the fetch from
   * outside (a crawl being stopped), rejecting with its reason.
   */
  async fetch(req: FetchRequest, lane = '', cancel?: AbortSignal): Promise<FetchResult> {
    const started = performance.now()
    if (cancel?.aborted) throw cancel.reason
    // One controller per fetch, its timer cleared and its link to `cancel` removed when the
    // fetch ends. (AbortSignal.timeout cannot be cancelled: each fetch's signals, and whatever
    // listened to them, stayed alive for the whole timeout; a crawl at 1,000 pages/s with the
    // 30 s default held 30,000 of them.)
    const controller = new AbortController()
    const signal = controller.signal
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort(new DOMException('The operation timed out.', 'TimeoutError'))
    }, req.timeout_ms)
    const onCancel = () => controller.abort(cancel!.reason)
    cancel?.addEventListener('abort', onCancel, { once: true })
    const deadline = started + req.timeout_ms
    try {
      const plan = planMiddleware(req.middleware)
      const result = await this.withRetries(req, plan, lane, signal, deadline)
      plan.guard(result.status, result.content_type)
      result.timing.total_ms = Math.round(performance.now() - started)
      return result
    } catch (err) {
      if (!signal.aborted) throw err
      if (timedOut) throw new FetchError('timeout', `no complete answer within ${req.timeout_ms} ms (timeout ${formatMs(req.timeout_ms)})`)
      throw signal.reason
    } finally {
      clearTimeout(timer)
      cancel?.removeEventListener('abort', onCancel)
    }
  }

  private async withRetries(req: FetchRequest, plan: MiddlewarePlan, lane: string, signal: AbortSignal, deadline: number): Promise<FetchResult> {
    const statusRetries = new Map<number, number>()
    // `retries` counts what is charged to max_retries; retry_on_status keeps its own count per
    // status; `attempt` counts every try (proxy and address rotation).
    let retries = 0
    for (let attempt = 0; ; attempt++) {
      const proxyName = req.proxies.length ? req.proxies[attempt % req.proxies.length]! : null
      const outcome = await this.attempt(req, plan, lane, proxyName, signal, attempt, deadline)
      let wait: number | null = null
      if (outcome.result) {
        const status = outcome.result.status
        const extra = plan.retryStatuses.get(status)
        const used = statusRetries.get(status) ?? 0
        let charged = false
        if (extra !== undefined && used < extra) {
          statusRetries.set(status, used + 1)
          wait = outcome.retryAfter ?? backoffMs(used)
        } else if (retryableStatus(status) && retries < req.max_retries && !(req.retry_throttled === false && (status === 429 || status === 503))) {
          wait = outcome.retryAfter ?? backoffMs(retries)
          charged = true
        }
        if (wait === null || performance.now() + wait >= deadline) return outcome.result
        if (charged) retries++
        this.opts.log.debug('fetch retry', { url: req.url, status, wait_ms: wait })
      } else {
        const err = outcome.error
        const retryable = err instanceof FetchError && err.retryable && !signal.aborted
        if (!retryable || retries >= req.max_retries) throw err
        wait = backoffMs(retries)
        if (performance.now() + wait >= deadline) throw err
        retries++
        this.opts.log.debug('fetch retry', { url: req.url, error: (err as FetchError).code, wait_ms: wait })
      }
      await sleep(wait, signal)
    }
  }

  private async attempt(req: FetchRequest, plan: MiddlewarePlan, lane: string, proxyName: string | null, signal: AbortSignal, attempt: number, deadline: number): Promise<Attempt> {
    const proxy = proxyName === null ? null : (this.opts.proxies[proxyName] ?? null)
    if (proxyName !== null && proxy === null) return { error: new FetchError('proxy', `no proxy named "${proxyName}" is configured (TRAWL_PROXIES)`) }
    try {
      const result = req.client.kind === 'browser' ? await this.browserChain(req, plan, lane, proxy, signal, deadline) : await this.standardChain(req, plan, lane, proxy, signal, attempt, deadline)
      return { result, retryAfter: retryableStatusOrListed(result.status, plan) ? retryAfterMs(headerValue(result.headers, 'retry-after')) : null }
    } catch (error) {
      return { error }
    }
  }

  /**
   * Waits for the host's next rate-limit slot. A slot that would come after the deadline is not
   * booked at all: the fetch times out now instead of holding a slot it cannot use.
   */
  private async rateLimit(key: string, perSecond: number, signal: AbortSignal, deadline: number) {
    const wait = this.limiter.wait(key)
    if (performance.now() + wait >= deadline) throw new FetchError('timeout', `the rate limit (${perSecond}/s) has no slot for this host before the timeout`)
    this.limiter.reserve(key, perSecond)
    await sleep(wait, signal)
  }

  /** Base headers of plain requests by user agent (never modified: every hop copies them). */
  private plainHeaders = new Map<string, Headers>()

  /** The request headers every hop starts from, before cookies and the Host header. Callers copy before changing them. */
  private baseHeaders(req: FetchRequest, plan: MiddlewarePlan): Headers {
    // Most requests (a crawl's, a batch's) add nothing to the defaults: build those once. A browser
    // keyword picks its string anew per request, so its headers are never kept.
    const plain = !req.referrer && !req.headers.length && !req.middleware.length && !isBrowserKeyword(req.user_agent)
    if (plain) {
      const cached = this.plainHeaders.get(req.user_agent)
      if (cached) return cached
    }
    const headers = this.buildHeaders(req, plan)
    if (plain && this.plainHeaders.size < 64) this.plainHeaders.set(req.user_agent, headers)
    return headers
  }

  private buildHeaders(req: FetchRequest, plan: MiddlewarePlan): Headers {
    const { userAgent, family } = resolveUserAgent(req.user_agent)
    const headers = new Headers(defaultHeaders(userAgent, family))
    if (req.referrer) headers.set('Referer', req.referrer)
    // The caller's headers replace the defaults of the same name; repeated names are all sent.
    applyHeaderPairs(headers, req.headers)
    plan.editHeaders(headers)
    return headers
  }

  private async standardChain(req: FetchRequest, plan: MiddlewarePlan, lane: string, proxy: string | null, signal: AbortSignal, attempt: number, deadline: number): Promise<FetchResult> {
    const base = this.baseHeaders(req, plan)
    const first = new URL(req.url)
    const jar = new CookieJar(req.cookies, first)
    const cap = req.max_body_bytes ?? this.opts.maxBodyBytes
    const redirects: Redirect[] = []
    let url = first
    let method: string = req.method
    let body = req.body
    for (;;) {
      const headers = hopHeaders(base, url, first, jar)
      if (plan.perSecond !== null) await this.rateLimit(`${lane}\0${url.host}`, plan.perSecond, signal, deadline)
      const { response, headers: responseHeaders } = await exchange({ url, method, headers, body, proxy, allowPrivate: this.opts.allowPrivate, signal, ca: this.opts.ca, attempt })
      jar.receive(response.headers.getSetCookie(), url)
      const type = REDIRECT_TYPE[response.status]
      const location = type && req.max_redirects > 0 ? response.headers.get('location') : null
      const next = location !== null ? URL.parse(location, url.href) : null
      if (type && next && (next.protocol === 'http:' || next.protocol === 'https:')) {
        void response.body?.cancel().catch(() => {})
        if (redirects.length >= req.max_redirects) throw redirectLimit(req.max_redirects, url.href, next.href)
        redirects.push({ url: url.href, location: next.href, side: 'server', type })
        const follow = nextMethod(response.status, method)
        method = follow.method
        if (!follow.keepBody) body = undefined
        url = next
        continue
      }
      let raw: Uint8Array
      try {
        raw = method === 'HEAD' ? new Uint8Array(0) : await readCapped(response, cap, signal)
      } catch (err) {
        // A body cut off or mis-framed: Bun's errors get our codes (a reset may be retried).
        throw fetchFailure(err, { signal, proxy, url })
      }
      const decoded = await decodeContent(raw, response.headers.get('content-encoding'), cap)
      const contentType = response.headers.get('content-type')
      if (req.max_redirects > 0 && response.status >= 200 && response.status < 300) {
        const refresh = await metaRefresh(decoded, contentType, url.href)
        if (refresh) {
          if (redirects.length >= req.max_redirects) throw redirectLimit(req.max_redirects, url.href, refresh.location)
          redirects.push({ url: url.href, location: refresh.location, side: 'client', type: refresh.delay === 0 ? 'permanent' : 'temporary' })
          url = new URL(refresh.location)
          method = 'GET'
          body = undefined
          continue
        }
      }
      return {
        url: req.url,
        final_url: url.href,
        status: response.status,
        headers: responseHeaders,
        cookies: jar.received,
        content_type: contentType,
        body: decoded,
        redirects,
        timing: { total_ms: 0 },
      }
    }
  }

  private async browserChain(req: FetchRequest, plan: MiddlewarePlan, lane: string, proxy: string | null, signal: AbortSignal, deadline: number): Promise<FetchResult> {
    const browser = this.opts.browser
    if (!browser) throw new FetchError('browser_unavailable', 'the browser client is not available here')
    // The page load is what a rate limit spaces; the page's own subresources are the browser's business.
    if (plan.perSecond !== null) await this.rateLimit(`${lane}\0${new URL(req.url).host}`, plan.perSecond, signal, deadline)
    const headers = new Headers(this.baseHeaders(req, plan))
    // Chromium negotiates encodings and sends its own Accept for subresources; only what the caller chose goes along.
    headers.delete('accept-encoding')
    const result = await browser.fetch(
      {
        url: req.url,
        method: req.method,
        body: req.body,
        headers: [...headers] as HeaderPair[],
        cookies: req.cookies,
        proxy,
        waitUntil: req.client.kind === 'browser' ? (req.client.wait_until ?? 'load') : 'load',
        maxRedirects: req.max_redirects,
      },
      signal,
    )
    return { ...result, url: req.url }
  }
}

/** The headers of one hop: credentials stay with the origin they were given for (as browsers do). */
function hopHeaders(base: Headers, url: URL, first: URL, jar: CookieJar): Headers {
  const headers = new Headers(base)
  // A caller's Host names the first host only (as curl sends it), never a redirect target.
  if (url.host !== first.host) headers.delete('host')
  if (url.origin !== first.origin) {
    headers.delete('authorization')
    headers.delete('cookie')
  }
  const cookie = jar.headerFor(url)
  if (cookie) {
    const own = headers.get('cookie')
    headers.set('cookie', own ? `${own}; ${cookie}` : cookie)
  }
  return headers
}

const retryableStatusOrListed = (status: number, plan: MiddlewarePlan) => retryableStatus(status) || plan.retryStatuses.has(status)

const redirectLimit = (max: number, from: string, to: string) => new FetchError('redirect_limit', `more than ${max} redirect${max === 1 ? '' : 's'} (max_redirects); ${from} redirects on to ${to}`)

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

const formatMs = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`)
