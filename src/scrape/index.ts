import type { Config } from '../config'
import { errorResponse } from '../http/app'
import { ApiError, FieldErrors } from '../http/errors'
import { json, route, type Route } from '../http/route'
import type { Logger } from '../log'
import { scrapes } from '../metrics'
import { countRefusal, type PaymentGate } from '../payment'
import type { TokenBuckets } from './rate-limit'
import { localeProblem, proxyProblem, refineBody, ScrapeBody, ScrapeResponse, TIMEOUT_SECONDS, timeoutProblem, urlProblem, type ScrapeRequest } from './schema'
import { toAnswer, type Scraped, type Scraper } from './scraper'
import { SCRAPE_PATH_PREFIX, targetOf } from './target-url'

/**
 * The payment side of a scrape (x402, src/payment): the local checks (which name the payer for
 * the rate limit), recording before the scrape, settlement after it. Absent when TRAWL_PAY_TO is
 * unset: the API is free.
 */
export type Payments = Pick<PaymentGate, 'check' | 'record' | 'settle'>

export type ScrapeDeps = {
  scraper: Scraper
  config: Config
  log: Logger
  payments: Payments | null
  /** TRAWL_SCRAPE_RATE's buckets; null when it is `off`. */
  limiter: TokenBuckets | null
  /** The client's address, the rate limit's key before payment. */
  clientIp: (request: Request) => string
}

/** What browsers may send and read (x402 clients send Access-Control-Expose-Headers themselves). */
export const SCRAPE_CORS = {
  allowHeaders: ['Content-Type', 'X-PAYMENT', 'PAYMENT-SIGNATURE', 'Access-Control-Expose-Headers', 'X-Scrape-Proxy', 'X-Scrape-Timeout-Seconds', 'X-Scrape-Locale', 'X-Scrape-Main-Content'],
  exposeHeaders: ['PAYMENT-REQUIRED', 'PAYMENT-RESPONSE', 'X-PAYMENT-RESPONSE', 'Retry-After', 'X-Scrape-Url', 'X-Scrape-Rendered'],
} as const

const ERROR_DOC =
  'target failures (`timeout`, `dns`, `connect`, `tls`, `blocked_address`, `too_large`, `redirect_limit`, `proxy`, `http_status`, `parse_error`, …) and unexpected errors; never charged'

/**
 * POST /v1/scrape and GET /v1/scrape/{url} (SPEC "Scrape API", design.md §7). The order of checks:
 * validation (422), the rate limit (429, which never consumes a payment), payment (402), then the
 * scrape; a scrape that fails is answered 500 and not charged.
 */
export const scrapeRoutes = (deps: ScrapeDeps): Route[] => {
  const proxyNames = Object.keys(deps.config.proxies)
  return [
    route({
      method: 'POST',
      path: '/v1/scrape',
      summary: 'Scrape one URL into markdown, html, json or binary results',
      description: `Order of checks: 422, 429, 402. Errors: 500 for ${ERROR_DOC}.`,
      tag: 'scrape',
      tenant: false,
      body: ScrapeBody,
      refine: (body, errors) => refineBody(body, errors, proxyNames),
      response: { status: 200, schema: ScrapeResponse },
      handle: ({ body, request, url }) =>
        serve(
          deps,
          request,
          url,
          {
            url: body.url,
            formats: body.formats ?? [{ kind: 'markdown' }],
            proxy: body.proxy ?? null,
            timeoutMs: Math.round((body.timeout_seconds ?? TIMEOUT_SECONDS.default) * 1000),
            locale: body.locale ?? null,
          },
          (result, headers) => json(200, toAnswer(result), headers),
        ),
    }),
    route({
      method: 'GET',
      path: `${SCRAPE_PATH_PREFIX}*`,
      summary: 'Scrape one URL into markdown (the URL is the rest of the path)',
      description:
        "The rest of the path is the target: as written, with the request's own query string (`/v1/scrape/https://example.com/a?b=1`), or percent-encoded once when it starts with `http%3A` or `https%3A`. Answers `text/markdown`; content that is not text or HTML comes back as its own bytes and Content-Type. Headers `X-Scrape-Proxy`, `X-Scrape-Timeout-Seconds`, `X-Scrape-Locale`, `X-Scrape-Main-Content`. " +
        `Order of checks: 422, 429, 402. Errors: 500 for ${ERROR_DOC}.`,
      tag: 'scrape',
      tenant: false,
      foreignQuery: true,
      doc: {
        path: '/v1/scrape/{url}',
        parameters: [
          { name: 'url', in: 'path', required: true, schema: { type: 'string' }, description: 'the target URL with its scheme, as written or percent-encoded once' },
          { name: 'X-Scrape-Proxy', in: 'header', required: false, schema: { type: 'string' }, description: "`isp`: the operator's proxy of that name; omitted: direct" },
          { name: 'X-Scrape-Timeout-Seconds', in: 'header', required: false, schema: { type: 'number', minimum: TIMEOUT_SECONDS.min, maximum: TIMEOUT_SECONDS.max, default: TIMEOUT_SECONDS.default } },
          { name: 'X-Scrape-Locale', in: 'header', required: false, schema: { type: 'string' }, description: 'a BCP 47 language tag, sent as Accept-Language' },
          {
            name: 'X-Scrape-Main-Content',
            in: 'header',
            required: false,
            schema: { type: 'string', enum: ['true', 'false'], default: 'true' },
            description: "`false`: the whole page's markdown, not only its main content",
          },
        ],
      },
      response: { status: 200, contentType: 'text/markdown', description: 'the page as markdown' },
      handle: ({ request, url }) => serve(deps, request, url, getRequest(request, proxyNames), markdownAnswer),
    }),
  ]
}

/** The GET form's request, from its path and X-Scrape-* headers; a 422 naming each bad one. */
function getRequest(request: Request, proxyNames: readonly string[]): ScrapeRequest {
  const errors = new FieldErrors()
  const url = targetOf(request.url)
  if (url === null) errors.add('url', 'must follow /v1/scrape/: an absolute http(s) URL, as written or percent-encoded')
  else {
    const problem = urlProblem(url)
    if (problem) errors.add('url', problem)
  }
  const proxy = request.headers.get('x-scrape-proxy')
  if (proxy !== null) {
    const problem = proxyProblem(proxy, proxyNames)
    if (problem) errors.add('X-Scrape-Proxy', problem)
  }
  const timeout = request.headers.get('x-scrape-timeout-seconds')
  const seconds = timeout === null ? TIMEOUT_SECONDS.default : Number(timeout)
  if (timeout !== null) {
    const problem = timeoutProblem(timeout)
    if (problem) errors.add('X-Scrape-Timeout-Seconds', problem)
  }
  const locale = request.headers.get('x-scrape-locale')
  if (locale !== null) {
    const problem = localeProblem(locale)
    if (problem) errors.add('X-Scrape-Locale', problem)
  }
  const main = request.headers.get('x-scrape-main-content')
  if (main !== null && main !== 'true' && main !== 'false') errors.add('X-Scrape-Main-Content', 'must be true or false')
  errors.throwIfAny()
  return { url: url!, formats: [{ kind: 'markdown', main_content: main !== 'false' }], proxy, timeoutMs: Math.round(seconds * 1000), locale }
}

/** The GET form's answer: the markdown itself, or the bytes of content that is not text. */
function markdownAnswer(result: Scraped, headers: Record<string, string>): Response {
  const first = result.results[0]!
  const meta = { 'x-scrape-url': result.url, 'x-scrape-rendered': String(result.rendered), ...headers }
  // The target's bytes under its own type, from the API's origin: never sniffed, and a document
  // (SVG, XML) opened from here runs sandboxed, with no script on this origin.
  if (first.kind === 'binary') {
    const headers = { ...meta, 'content-type': first.content_type, 'x-content-type-options': 'nosniff', 'content-security-policy': 'sandbox' }
    return new Response(first.bytes, { status: 200, headers })
  }
  return new Response((first as { content: string }).content, { status: 200, headers: { ...meta, 'content-type': 'text/markdown; charset=utf-8' } })
}

type Answer = (result: Scraped, headers: Record<string, string>) => Response

/** A scrape, counted by payment and result (docs/metrics.md). */
async function serve(deps: ScrapeDeps, request: Request, url: URL, req: ScrapeRequest, answer: Answer): Promise<Response> {
  const payment = deps.payments ? 'paid' : 'free'
  try {
    const [result, response] = await scrape(deps, request, url, req, answer)
    scrapes.labels(payment, result).inc()
    return response
  } catch (err) {
    scrapes.labels(payment, 'failed').inc()
    throw err
  }
}

async function scrape(deps: ScrapeDeps, request: Request, url: URL, req: ScrapeRequest, answer: Answer): Promise<[ScrapeResult, Response]> {
  const { payments } = deps
  // The payment is checked first, without side effects, so that the rate limit can count a
  // verified payer's requests in the payer's bucket; anything unpaid or invalid counts against
  // the client's address. A 429 still comes before the 402, and never consumes a payment.
  const checked = payments ? await payments.check(request, resourceOf(deps.config, url)) : null
  const payer = checked?.ok ? checked.checked.payer : null
  if (deps.limiter) {
    const wait = deps.limiter.take(payer ? `payer:${payer.toLowerCase()}` : `ip:${addressKey(deps.clientIp(request))}`)
    if (wait > 0) return ['rate_limited', errorResponse(new ApiError(429, 'rate_limited', `too many scrapes; retry in ${wait} s (TRAWL_SCRAPE_RATE)`), { 'retry-after': String(wait) })]
  }
  if (!payments || !checked) return ['ok', answer(await deps.scraper.scrape(req), {})]
  if (!checked.ok) {
    countRefusal(checked.reason)
    return ['payment_refused', checked.response]
  }
  const recorded = await payments.record(checked.checked)
  if (!recorded.ok) return ['payment_refused', recorded.response]
  let result: Scraped
  try {
    result = await deps.scraper.scrape(req, checked.checked.payer)
  } catch (err) {
    // Not charged; the error itself is answered as every error is (a ScrapeFailure is a 500 with its code).
    await payments.settle(recorded.payment, false)
    throw err
  }
  // A client that hung up gets nothing, so it is not charged.
  const settled = await payments.settle(recorded.payment, !request.signal.aborted)
  return 'response' in settled ? ['settle_failed', settled.response] : ['ok', answer(result, settled.headers)]
}

/** What became of a scrape past validation; `failed` when the scrape itself threw (a 500, not charged). */
type ScrapeResult = 'ok' | 'rate_limited' | 'payment_refused' | 'settle_failed'

/**
 * The rate limit's key for a client address: IPv4 as it is, IPv6 by its /64 (one host is
 * usually given a whole /64, and could otherwise take a new bucket per address).
 */
export function addressKey(address: string): string {
  if (!address.includes(':')) return address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]!
  const [head = '', tail = ''] = address.split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups = address.includes('::') ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}

/** The absolute URL a payment is for (x402 `resource`): under TRAWL_PUBLIC_URL when set, else the request's own origin. */
function resourceOf(config: Config, url: URL): string {
  // config.ts strips TRAWL_PUBLIC_URL's trailing slashes.
  return `${config.publicUrl ?? url.origin}${url.pathname}`
}
