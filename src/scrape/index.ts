import { Type } from '@sinclair/typebox'
import type { Config } from '../config'
import { FieldErrors } from '../http/errors'
import { json, route, type Route } from '../http/route'
import type { Logger } from '../log'
import type { TokenBuckets } from './rate-limit'
import { localeProblem, proxyProblem, refineBody, ScrapeBody, ScrapeResponse, TIMEOUT_SECONDS, urlProblem, type ScrapeRequest, type ScrapeResult } from './schema'
import { ScrapeFailure, type Scraper } from './scraper'
import { SCRAPE_PATH_PREFIX, targetOf } from './target-url'

/**
 * The payment side of a scrape (x402, src/payment): who pays (for the rate limit), admission
 * before the scrape, settlement after it. Absent when TRAWL_PAY_TO is unset: the API is free.
 */
export type Payments = {
  payerOf(request: Request): string | null
  admit(request: Request, resource: string): Promise<{ ok: false; response: Response } | { ok: true; payment: unknown }>
  settle(payment: unknown, succeeded: boolean): Promise<{ headers: Record<string, string> } | { response: Response }>
}

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
  allowHeaders: ['Content-Type', 'X-PAYMENT', 'PAYMENT-SIGNATURE', 'Access-Control-Expose-Headers', 'X-Scrape-Proxy', 'X-Scrape-Timeout-Seconds', 'X-Scrape-Locale'],
  exposeHeaders: ['PAYMENT-REQUIRED', 'PAYMENT-RESPONSE', 'X-PAYMENT-RESPONSE', 'Retry-After', 'X-Scrape-Url', 'X-Scrape-Rendered'],
} as const

const ERROR_DOC = 'target failures (`timeout`, `dns`, `connect`, `tls`, `blocked_address`, `too_large`, `redirect_limit`, `proxy`, `http_status`, `parse_error`, …) and unexpected errors; never charged'

/**
 * POST /v1/scrape and GET /v1/scrape/{url} (SPEC "Scrape API", DESIGN §7). The order of checks:
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
      handle: ({ body, request }) =>
        serve(deps, request, {
          url: body.url,
          formats: body.formats ?? [{ kind: 'markdown' }],
          proxy: body.proxy ?? null,
          timeoutMs: Math.round((body.timeout_seconds ?? TIMEOUT_SECONDS.default) * 1000),
          locale: body.locale ?? null,
        }, (result, headers) => json(200, result, headers)),
    }),
    route({
      method: 'GET',
      path: `${SCRAPE_PATH_PREFIX}*`,
      summary: 'Scrape one URL into markdown (the URL is the rest of the path)',
      description:
        'The rest of the path is the target: as written, with the request\'s own query string (`/v1/scrape/https://example.com/a?b=1`), or percent-encoded once when it starts with `http%3A` or `https%3A`. Answers `text/markdown`; content that is not text or HTML comes back as its own bytes and Content-Type. Headers `X-Scrape-Proxy`, `X-Scrape-Timeout-Seconds`, `X-Scrape-Locale`. ' +
        `Order of checks: 422, 429, 402. Errors: 500 for ${ERROR_DOC}.`,
      tag: 'scrape',
      tenant: false,
      foreignQuery: true,
      doc: {
        path: '/v1/scrape/{url}',
        parameters: [
          { name: 'url', in: 'path', required: true, schema: { type: 'string' }, description: 'the target URL with its scheme, as written or percent-encoded once' },
          { name: 'X-Scrape-Proxy', in: 'header', required: false, schema: { type: 'string' }, description: '`isp`: the operator\'s proxy of that name; omitted: direct' },
          { name: 'X-Scrape-Timeout-Seconds', in: 'header', required: false, schema: { type: 'number', minimum: TIMEOUT_SECONDS.min, maximum: TIMEOUT_SECONDS.max, default: TIMEOUT_SECONDS.default } },
          { name: 'X-Scrape-Locale', in: 'header', required: false, schema: { type: 'string' }, description: 'a BCP 47 language tag, sent as Accept-Language' },
        ],
      },
      response: { status: 200, contentType: 'text/markdown', description: 'the page as markdown' },
      handle: ({ request }) => serve(deps, request, getRequest(request, proxyNames), markdownAnswer),
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
  if (timeout !== null && (timeout.trim() === '' || !Number.isFinite(seconds) || seconds < TIMEOUT_SECONDS.min || seconds > TIMEOUT_SECONDS.max)) {
    errors.add('X-Scrape-Timeout-Seconds', `must be a number of seconds from ${TIMEOUT_SECONDS.min} to ${TIMEOUT_SECONDS.max}`)
  }
  const locale = request.headers.get('x-scrape-locale')
  if (locale !== null) {
    const problem = localeProblem(locale)
    if (problem) errors.add('X-Scrape-Locale', problem)
  }
  errors.throwIfAny()
  return { url: url!, formats: [{ kind: 'markdown' }], proxy, timeoutMs: Math.round(seconds * 1000), locale }
}

/** The GET form's answer: the markdown itself, or the bytes of content that is not text. */
function markdownAnswer(result: ScrapeResult, headers: Record<string, string>): Response {
  const first = result.results[0]!
  const meta = { 'x-scrape-url': result.url, 'x-scrape-rendered': String(result.rendered), ...headers }
  if (first.kind === 'binary') return new Response(Buffer.from(first.content, 'base64'), { status: 200, headers: { ...meta, 'content-type': first.content_type } })
  return new Response((first as { content: string }).content, { status: 200, headers: { ...meta, 'content-type': 'text/markdown; charset=utf-8' } })
}

async function serve(deps: ScrapeDeps, request: Request, req: ScrapeRequest, answer: (result: ScrapeResult, headers: Record<string, string>) => Response): Promise<Response> {
  const payer = deps.payments?.payerOf(request) ?? null
  if (deps.limiter) {
    const wait = deps.limiter.take(payer ? `payer:${payer.toLowerCase()}` : `ip:${deps.clientIp(request)}`)
    if (wait > 0) {
      return json(429, { error: 'rate_limited', message: `too many scrapes; retry in ${wait} s (TRAWL_SCRAPE_RATE)` }, { 'retry-after': String(wait) })
    }
  }
  let payment: unknown = null
  if (deps.payments) {
    const admitted = await deps.payments.admit(request, resourceOf(deps.config, request))
    if (!admitted.ok) return admitted.response
    payment = admitted.payment
  }
  let result: ScrapeResult | null = null
  let failure: Response
  try {
    result = await deps.scraper.scrape(req, payer ?? '')
  } catch (err) {
    if (err instanceof ScrapeFailure) failure = json(500, { error: err.code, message: err.message })
    else {
      deps.log.error('scrape failed', { url: req.url, error: String((err as Error)?.stack ?? err) })
      failure = json(500, { error: 'internal', message: 'internal error' })
    }
  }
  let headers: Record<string, string> = {}
  if (deps.payments && payment !== null) {
    const settled = await deps.payments.settle(payment, result !== null)
    if ('response' in settled) return settled.response
    headers = settled.headers
  }
  return result ? answer(result, headers) : failure!
}

/** The absolute URL a payment is for (x402 `resource`): TRAWL_PUBLIC_URL's origin, or the request's own. */
function resourceOf(config: Config, request: Request): string {
  const url = new URL(request.url)
  if (!config.publicUrl) return `${url.origin}${url.pathname}`
  return `${config.publicUrl.replace(/\/+$/, '')}${url.pathname}`
}

