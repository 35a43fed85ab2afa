import type { Fetcher } from '../fetch/fetcher'
import { documentKind, mimeEssence } from '../parse/document'
import type { StepResult } from '../parse/pipeline'
import type { ParsePool } from '../parse/pool'
import { NO_DOCUMENT_URL } from './coerce'
import type { DataMapDef } from './data-map'

/**
 * A page to apply a data map to (docs/extract.md, "Apply"): its bytes, its content type, and the
 * URL it was fetched from with the redirects that followed, or null where no one knows it
 * (content sent as base64: decision 84).
 */
export type ApplyPage = { url: string | null; body: Uint8Array; content_type: string; redirects: readonly { url: string; location: string }[] }

/** Why a page cannot be applied to: the route and the CLI each say it their own way. */
export class PageRefused extends Error {
  constructor(
    readonly code: 'not_found' | 'http_status' | 'unsupported_content_type' | 'too_large',
    message: string,
  ) {
    super(message)
  }
}

/**
 * A live page fetched as a crawl fetches one (standard client, trawl's user agent, redirects
 * followed, one retry), through the fetcher and so its address guard and body limit. Throws
 * FetchError when there was no answer, PageRefused when the answer is an HTTP error or not HTML:
 * extracting from an error page would report a broken map for a missing page.
 */
export async function fetchPage(fetcher: Fetcher, url: string, timeoutMs: number, lane: string): Promise<ApplyPage> {
  const r = await fetcher.fetch(
    {
      url,
      method: 'GET',
      client: { kind: 'standard' },
      middleware: [],
      user_agent: 'trawl',
      headers: [],
      cookies: [],
      proxies: [],
      timeout_ms: timeoutMs,
      max_redirects: MAX_REDIRECTS,
      max_retries: 1,
    },
    lane,
  )
  if (r.status >= 400) throw new PageRefused('http_status', `${r.final_url} answered HTTP ${r.status}`)
  return { url: r.url, body: r.body, content_type: htmlType(r.content_type, r.final_url), redirects: r.redirects }
}

/** The content type, when it is HTML or XHTML; a data map reads nothing else. */
export function htmlType(contentType: string | null, what: string): string {
  if (contentType && documentKind(contentType) === 'html') return contentType
  throw new PageRefused('unsupported_content_type', `${what} is ${contentType ? mimeEssence(contentType) || '(empty)' : 'without a content type'}; a data map applies to HTML and XHTML`)
}

const MAX_REDIRECTS = 5

/**
 * A data map over a page, as a one-step pipeline on the parse workers: the same decoding, tree
 * and engine as a crawl's data_map step, off the thread that answers every other request.
 * Relative `url` values resolve against the page's URL after its redirects (or its <base href>);
 * with no URL they are errors (decision 84). Throws ParseTimeout or PoolError.
 */
export async function applyToPage(parser: ParsePool, page: ApplyPage, id: string, def: DataMapDef, lane: string) {
  const parsed = await parser.parse(
    { url: page.url ?? NO_DOCUMENT_URL, body: page.body, content_type: page.content_type, redirects: page.redirects, pipelines: [{ steps: [{ kind: 'data_map', id }] }] },
    { patternSets: () => [], dataMap: (wanted) => (wanted === id ? def : null) },
    lane,
  )
  const { data, errors } = parsed.pipelines[0]!.steps[0] as Extract<StepResult, { data: unknown }>
  return { data, errors }
}
