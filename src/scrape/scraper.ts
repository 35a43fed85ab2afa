import type { Config } from '../config'
import { DomainError } from '../core/errors'
import type { Logger } from '../log'
import { FetchError, type FetchErrorCode } from '../fetch/errors'
import type { Fetcher } from '../fetch/fetcher'
import type { FetchRequest, FetchResult } from '../fetch/types'
import { decodeDocument } from '../parse/charset'
import { documentKind } from '../parse/document'
import { NO_CONTEXT, ParseFailure, type StepResult } from '../parse/pipeline'
import type { Step } from '../parse/pipeline-schema'
import { ParseTimeout, PoolError, type ParsePool } from '../parse/pool'
import { needsScript } from './needs-script'
import { acceptLanguage, type ScrapeRequest, type ScrapeResult } from './schema'

/** Why a scrape failed: a target failure (design.md §7), answered 500 with this code and never charged. */
export class ScrapeFailure extends DomainError<FetchErrorCode | 'http_status' | 'parse_error'> {}

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

const MAX_REDIRECTS = 10
// A render with less time than this left of the scrape's timeout would only time out.
const MIN_RENDER_MS = 1000

export type ScraperDeps = { fetcher: Fetcher; parser: ParsePool; config: Config; log: Logger }

/**
 * One URL in, the requested formats out (SPEC "Scrape API"): fetched with the standard client, or
 * with Chromium when TRAWL_SCRAPE_RENDER says so (`auto`: only pages that need script to show
 * their content, needs-script.ts); HTML and text become markdown, metadata, links and extracted
 * fields on the parse workers (a large page can take most of a second, which must not stall the
 * surface); anything else comes back as bytes.
 */
export class Scraper {
  constructor(private readonly deps: ScraperDeps) {}

  /** `lane` keeps one payer's parses from queueing behind another's. Throws ScrapeFailure. */
  async scrape(req: ScrapeRequest, lane = ''): Promise<Scraped> {
    const { fetched, rendered } = await this.load(req)
    if (fetched.status >= 400) throw new ScrapeFailure('http_status', `${fetched.final_url} answered HTTP ${fetched.status}`)
    const contentType = fetched.content_type ?? 'application/octet-stream'
    const base = { url: fetched.final_url, rendered, status: fetched.status }
    if (documentKind(contentType) === null) {
      return { ...base, metadata: null, links: null, results: req.formats.map(() => ({ kind: 'binary' as const, bytes: fetched.body, content_type: contentType })) }
    }
    // The page's metadata and links come with every result (one scan of the page serves both).
    const steps: Step[] = [{ kind: 'metadata' }, { kind: 'links' }]
    for (const f of req.formats) {
      // main_content is passed even when true: the scrape's default, whatever the markdown step's is.
      if (f.kind === 'markdown') steps.push({ kind: 'markdown', main_content: f.main_content ?? true, ...(f.skip_tags ? { skip_tags: f.skip_tags } : {}) })
      else if (f.kind === 'json') steps.push({ kind: 'fields', fields: f.fields })
    }
    const parsed = await this.parse(fetched.url, fetched.final_url, fetched.body, contentType, fetched.redirects, steps, lane)
    const [metadata, links] = parsed as [Extract<StepResult, { kind: 'metadata' }>, Extract<StepResult, { kind: 'links' }>]
    let html: string | null = null
    let next = 2
    const results = req.formats.map((f) => {
      if (f.kind === 'html') return { kind: 'html' as const, content: (html ??= decodeDocument(fetched.body, contentType).text) }
      const step = parsed[next++]!
      if (step.kind === 'fields') return { kind: 'json' as const, data: step.data, errors: step.errors }
      return { kind: 'markdown' as const, content: (step as { content: string }).content }
    })
    return { ...base, metadata: metadata.metadata, links: links.links, results }
  }

  /**
   * The page as TRAWL_SCRAPE_RENDER has it loaded. `auto` fetches with the standard client and
   * loads the page again in Chromium only when it is HTML that needs script to show its content;
   * when Chromium cannot be started or fails on it, the standard answer stands (`rendered` false).
   */
  private async load(req: ScrapeRequest): Promise<{ fetched: FetchResult; rendered: boolean }> {
    const mode = this.deps.config.scrapeRender
    if (mode === 'always') return { fetched: await this.fetch(req, 'browser', req.timeoutMs), rendered: true }
    const started = performance.now()
    const fetched = await this.fetch(req, 'standard', req.timeoutMs)
    if (mode === 'never' || fetched.status >= 400 || documentKind(fetched.content_type ?? '') !== 'html') return { fetched, rendered: false }
    const reason = needsScript(decodeDocument(fetched.body, fetched.content_type!).text)
    if (reason === null) return { fetched, rendered: false }
    const left = Math.round(req.timeoutMs - (performance.now() - started))
    if (left < MIN_RENDER_MS || !(await this.deps.fetcher.browserAvailable())) {
      this.deps.log.debug('scrape not rendered', { url: fetched.final_url, reason, why: left < MIN_RENDER_MS ? 'no time left' : 'chromium unavailable' })
      return { fetched, rendered: false }
    }
    try {
      return { fetched: await this.fetch(req, 'browser', left), rendered: true }
    } catch (err) {
      if (!(err instanceof ScrapeFailure)) throw err
      this.deps.log.warn('scrape render failed; answering the page as fetched', { url: fetched.final_url, reason, error: err.code, message: err.message })
      return { fetched, rendered: false }
    }
  }

  private async fetch(req: ScrapeRequest, client: 'browser' | 'standard', timeoutMs: number): Promise<FetchResult> {
    const request: FetchRequest = {
      url: req.url,
      method: 'GET',
      client: client === 'browser' ? { kind: 'browser', wait_until: 'load' } : { kind: 'standard' },
      middleware: [],
      user_agent: 'chrome',
      headers: req.locale ? [['Accept-Language', acceptLanguage(req.locale)]] : [],
      cookies: [],
      proxies: req.proxy ? [req.proxy] : [],
      timeout_ms: timeoutMs,
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
