import type { Config } from '../config'
import { ApiError } from '../http/errors'
import type { Logger } from '../log'
import { FetchError, type FetchErrorCode } from '../fetch/errors'
import type { Fetcher } from '../fetch/fetcher'
import type { FetchRequest } from '../fetch/types'
import { decodeDocument } from '../parse/charset'
import { documentKind } from '../parse/document'
import { ParseFailure, type ParseContext, type StepResult } from '../parse/pipeline'
import type { Step } from '../parse/pipeline-schema'
import { ParseTimeout, PoolError, type ParsePool } from '../parse/pool'
import { acceptLanguage, type ScrapeRequest, type ScrapeResult } from './schema'

/** Why a scrape failed: a target failure (design.md §7), answered 500 with this code and never charged. */
export class ScrapeFailure extends ApiError {
  constructor(
    override readonly code: FetchErrorCode | 'http_status' | 'parse_error',
    message: string,
  ) {
    super(500, code, message)
  }
}

/**
 * A scrape as the scraper answers it: as SPEC's result, except that content which is not text
 * keeps its bytes. The POST answer encodes them (toAnswer); the GET form and `trawl scrape`
 * write them as they are.
 */
export type Scraped = Omit<ScrapeResult, 'results'> & { results: (Exclude<ScrapeResult['results'][number], { kind: 'binary' }> | { kind: 'binary'; bytes: Uint8Array; content_type: string })[] }

/** The POST answer of a scrape: bytes as base64, encoded once for every format that holds them. */
export function toAnswer(scraped: Scraped): ScrapeResult {
  let base64: string | null = null
  const results = scraped.results.map((r) => (r.kind === 'binary' ? { kind: 'binary' as const, content: (base64 ??= Buffer.from(r.bytes).toString('base64')), content_type: r.content_type } : r))
  return { ...scraped, results }
}

// A scrape runs no category guards and names no data maps: there is nothing to look up.
const NO_CONTEXT: ParseContext = { patternSets: () => [], dataMap: () => null }
const MAX_REDIRECTS = 10

export type ScraperDeps = { fetcher: Fetcher; parser: ParsePool; config: Config; log: Logger }

/**
 * One URL in, the requested formats out (SPEC "Scrape API"): fetched with Chromium when
 * TRAWL_SCRAPE_RENDER allows and it is available, else with the standard client; HTML and text
 * become markdown and extracted fields on the parse workers (a large page can take most of a
 * second, which must not stall the surface); anything else comes back as bytes.
 */
export class Scraper {
  constructor(private readonly deps: ScraperDeps) {}

  /** `lane` keeps one payer's parses from queueing behind another's. Throws ScrapeFailure. */
  async scrape(req: ScrapeRequest, lane = ''): Promise<Scraped> {
    const rendered = await this.renders()
    const fetched = await this.fetch(req, rendered)
    if (fetched.status >= 400) throw new ScrapeFailure('http_status', `${fetched.final_url} answered HTTP ${fetched.status}`)
    const contentType = fetched.content_type ?? 'application/octet-stream'
    const base = { url: fetched.final_url, rendered, status: fetched.status }
    if (documentKind(contentType) === null) {
      return { ...base, results: req.formats.map(() => ({ kind: 'binary' as const, bytes: fetched.body, content_type: contentType })) }
    }
    const steps: Step[] = req.formats.flatMap((f): Step[] => {
      if (f.kind === 'markdown') return [{ kind: 'markdown', ...(f.skip_tags ? { skip_tags: f.skip_tags } : {}) }]
      if (f.kind === 'json') return [{ kind: 'fields', fields: f.fields }]
      return []
    })
    const parsed = steps.length ? await this.parse(fetched.url, fetched.final_url, fetched.body, contentType, fetched.redirects, steps, lane) : []
    let html: string | null = null
    let next = 0
    const results = req.formats.map((f) => {
      if (f.kind === 'html') return { kind: 'html' as const, content: (html ??= decodeDocument(fetched.body, contentType).text) }
      const step = parsed[next++]!
      if (step.kind === 'fields') return { kind: 'json' as const, data: step.data, errors: step.errors }
      return { kind: 'markdown' as const, content: (step as { content: string }).content }
    })
    return { ...base, results }
  }

  /** Whether this scrape is rendered by Chromium (TRAWL_SCRAPE_RENDER; `auto` asks whether it runs or starts). */
  private async renders(): Promise<boolean> {
    const mode = this.deps.config.scrapeRender
    if (mode === 'never') return false
    if (mode === 'always') return true
    return this.deps.fetcher.browserAvailable()
  }

  private async fetch(req: ScrapeRequest, rendered: boolean) {
    const request: FetchRequest = {
      url: req.url,
      method: 'GET',
      client: rendered ? { kind: 'browser', wait_until: 'load' } : { kind: 'standard' },
      middleware: [],
      user_agent: 'chrome',
      headers: req.locale ? [['Accept-Language', acceptLanguage(req.locale)]] : [],
      cookies: [],
      proxies: req.proxy ? [req.proxy] : [],
      timeout_ms: req.timeoutMs,
      max_redirects: MAX_REDIRECTS,
      max_retries: 1,
    }
    try {
      return await this.deps.fetcher.fetch(request)
    } catch (err) {
      if (err instanceof FetchError) throw new ScrapeFailure(err.code, err.message)
      throw err
    }
  }

  private async parse(url: string, finalUrl: string, body: Uint8Array, contentType: string, redirects: { url: string; location: string }[], steps: Step[], lane: string): Promise<StepResult[]> {
    try {
      const result = await this.deps.parser.parse({ url, body, content_type: contentType, redirects, pipelines: [{ identifier: 'scrape', steps }] }, NO_CONTEXT, lane)
      return result.pipelines[0]!.steps
    } catch (err) {
      if (err instanceof ParseTimeout) throw new ScrapeFailure('parse_error', `${finalUrl} took too long to convert`)
      if (err instanceof ParseFailure || err instanceof PoolError) throw new ScrapeFailure('parse_error', `${finalUrl} could not be converted: ${err.message}`)
      throw err
    }
  }
}
