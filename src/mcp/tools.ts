import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { Engine } from '../api/deps'
import type { BlobStore } from '../blob/blob-store'
import { RENDER_MODES, type Config, type RenderMode } from '../config'
import { checkConfig, CrawlConfig } from '../crawl/manifest'
import { normalizeUrl } from '../core/url'
import { Fields, type Field } from '../extract/field-schema'
import { checkFields } from '../extract/selectors'
import type { Fetcher } from '../fetch/fetcher'
import { DomainError, FieldErrors, notFound, ValidationError } from '../core/errors'
import { StringEnum, Uuid } from '../core/schemas'
import { validate } from '../core/validate'
import type { Logger } from '../log'
import type { ParsePool } from '../parse/pool'
import { Regex } from '../parse/pipeline-schema'
import { TIMEOUT_SECONDS, urlProblem, type Format } from '../scrape/schema'
import { createAdHocRun } from '../runs/create'
import { Scraper, type Scraped } from '../scrape/scraper'
import type { Store } from '../store'
import { exportPage, ExportInput } from './export'
import { extractWithDataMap } from './extract'

/**
 * The MCP tools (docs/mcp.md): what an agent can do with trawl, each a thin layer over the code
 * the HTTP routes run. Nothing here knows the protocol: src/mcp/server.ts turns a tool's text
 * or its error into MCP's shape, so the HTTP and stdio transports answer alike.
 */

export type McpDeps = {
  store: Store
  config: Config
  log: Logger
  parser: ParsePool
  fetcher: Fetcher
  blobs: BlobStore
  scraper: Scraper
  /** Told when a run is created, so that it starts at once; absent where nothing crawls. */
  engine?: Engine
}

/** What a tool answers: text blocks for the agent to read. */
export type ToolAnswer = { text: string[] }

export type Tool<S extends TSchema = TSchema> = {
  name: string
  title: string
  description: string
  input: S
  /** MCP's hints: whether the tool changes anything, and whether it reaches beyond trawl. */
  annotations: { readOnlyHint: boolean; openWorldHint: boolean }
  call(deps: McpDeps, tenant: string, args: Static<S>): Promise<ToolAnswer>
}

const closed = { additionalProperties: false } as const
const TargetUrl = Type.String({ minLength: 1, maxLength: 8192, description: 'absolute http(s) URL of the page' })
const Render = StringEnum(RENDER_MODES, {
  description: "whether Chromium renders the page: `auto` only when the page needs script to show its content; omitted: the server's TRAWL_SCRAPE_RENDER",
})
const MainContent = Type.Boolean({ default: true, description: 'true: only the main content (navigation, headers, footers, sidebars and cookie banners removed); false: the whole page' })
const TimeoutSeconds = Type.Number({ minimum: TIMEOUT_SECONDS.min, maximum: TIMEOUT_SECONDS.max, default: TIMEOUT_SECONDS.default, description: 'seconds the page may take to load' })

const ScrapeInput = Type.Object(
  {
    url: TargetUrl,
    formats: Type.Optional(
      Type.Array(StringEnum(['markdown', 'html', 'json']), {
        minItems: 1,
        maxItems: 3,
        uniqueItems: true,
        default: ['markdown'],
        description: '`markdown` (default): the page as markdown; `html`: the HTML as loaded; `json`: the values `fields` extracts',
      }),
    ),
    fields: Type.Optional({ ...Fields, description: 'with `json`: what to extract, each {name, selector (CSS), attr?, type?, multiple?, fields?, required?}' }),
    main_content: Type.Optional(MainContent),
    render: Type.Optional(Render),
    timeout_seconds: Type.Optional(TimeoutSeconds),
  },
  closed,
)

const CrawlStartInput = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 8192, description: 'the seed: absolute http(s) URL the crawl starts from; it stays on this host' }),
    max_urls: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000, default: 1000, description: 'most URLs the crawl visits' })),
    max_depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, default: 3, description: 'most links followed from the seed (0: the seed alone)' })),
    include: Type.Optional(Type.Array(Regex, { maxItems: 100, description: 'RE2 regexes; when given, only URLs matching one of them are crawled' })),
    exclude: Type.Optional(Type.Array(Regex, { maxItems: 100, description: 'RE2 regexes; URLs matching one of them are not crawled' })),
    sitemaps: Type.Optional(Type.Boolean({ default: false, description: "also start from the URLs of the host's sitemaps (robots.txt Sitemap lines, /sitemap.xml)" })),
  },
  closed,
)

const RunInput = Type.Object({ run_id: { ...Uuid, description: 'the run id crawl_start returned' } }, closed)

const ExtractInput = Type.Object(
  {
    url: TargetUrl,
    fields: Type.Optional({
      ...Fields,
      description: 'what to extract, each {name, selector (CSS), attr? (text, html or an attribute), type? (string, number, integer, boolean, url, date), multiple?, fields?, required?}',
    }),
    data_map_id: Type.Optional({ ...Uuid, description: 'a data map saved in trawl (POST /v1/hosts/{hash}/data_maps), instead of fields' }),
    render: Type.Optional(Render),
    timeout_seconds: Type.Optional(TimeoutSeconds),
  },
  closed,
)

/**
 * Checks `args` against a tool's schema; a ValidationError names every bad argument. Defaults
 * are not filled in: a tool applies its own, so a job keeps the config as the agent wrote it.
 */
export function argumentsOf<S extends TSchema>(tool: Tool<S>, args: unknown): Static<S> {
  return validate(tool.input, args ?? {}, 'body')
}

const urlOrThrow = (url: string, field = 'url') => {
  const problem = urlProblem(url)
  if (problem) throw ValidationError.of(field, problem)
  return url
}

const fieldsOrThrow = (fields: Field[], at: string) => {
  const errors = new FieldErrors()
  checkFields(fields, at, errors)
  errors.throwIfAny()
  return fields
}

/** A scrape's text: each result as the agent reads it, then what was fetched (and the page's other facts) as JSON. */
function scrapedText(scraped: Scraped): string[] {
  const { results, ...page } = scraped
  const blocks = results.map((r) => {
    if (r.kind === 'binary') return `(${r.bytes.length} bytes of ${r.content_type}: not text, not shown)`
    if (r.kind === 'json') return JSON.stringify({ data: r.data, errors: r.errors }, null, 2)
    return r.content
  })
  return [...blocks, JSON.stringify(page)]
}

/**
 * The scraper for a call: the shared one, or with `render` given, one that renders as the agent
 * asked instead of as TRAWL_SCRAPE_RENDER says (a Scraper holds nothing but its parts).
 */
const scraperFor = (deps: McpDeps, render: RenderMode | undefined) =>
  render === undefined ? deps.scraper : new Scraper({ fetcher: deps.fetcher, parser: deps.parser, log: deps.log, config: { ...deps.config, scrapeRender: render } })

const scrape: Tool<typeof ScrapeInput> = {
  name: 'scrape',
  title: 'Scrape one page',
  description:
    'Fetch one web page now and return it as clean markdown (main content only by default), and/or its HTML, and/or values extracted by CSS-selector fields. ' +
    'Use this for a single page you want to read; use crawl_start for a whole site. The last text block is JSON with the final URL, HTTP status and whether Chromium rendered it.',
  input: ScrapeInput,
  annotations: { readOnlyHint: true, openWorldHint: true },
  async call(deps, _tenant, args) {
    const url = urlOrThrow(args.url)
    const kinds = args.formats ?? ['markdown']
    if (kinds.includes('json') && !args.fields) throw ValidationError.of('fields', 'is required with the json format')
    if (!kinds.includes('json') && args.fields) throw ValidationError.of('fields', 'goes with the json format')
    const fields = args.fields && fieldsOrThrow(args.fields, 'fields')
    const formats: Format[] = kinds.map((k) => (k === 'json' ? { kind: 'json', fields: fields! } : k === 'markdown' ? { kind: 'markdown', main_content: args.main_content ?? true } : { kind: 'html' }))
    const timeoutMs = Math.round((args.timeout_seconds ?? TIMEOUT_SECONDS.default) * 1000)
    const scraped = await scraperFor(deps, args.render).scrape({ url, formats, proxy: null, timeoutMs, locale: null })
    return { text: scrapedText(scraped) }
  },
}

const crawlStart: Tool<typeof CrawlStartInput> = {
  name: 'crawl_start',
  title: 'Start crawling a site',
  description:
    'Start a crawl of a website from a seed URL, staying on its host. It runs in the background: poll crawl_status with the returned run_id until status is `finished`, then read the pages with crawl_export. ' +
    'Keep max_urls small (tens to hundreds) unless you need the whole site; narrow it with include/exclude regexes on the URL.',
  input: CrawlStartInput,
  annotations: { readOnlyHint: false, openWorldHint: true },
  async call({ store, config, engine }, tenant, args) {
    const seed = normalizeUrl(args.url)
    if (!seed) throw ValidationError.of('url', 'must be an absolute http(s) URL')
    const jobConfig: CrawlConfig = {
      seeds: [seed],
      ...(args.sitemaps !== undefined ? { sitemaps: args.sitemaps } : {}),
      scope: { ...(args.include ? { include: args.include } : {}), ...(args.exclude ? { exclude: args.exclude } : {}) },
      limits: { ...(args.max_urls !== undefined ? { max_urls: args.max_urls } : {}), ...(args.max_depth !== undefined ? { max_depth: args.max_depth } : {}) },
    }
    // The checks POST /v1/jobs makes (RE2 rejects some regexes), with the tool's names for the fields.
    try {
      checkConfig(jobConfig, 'config', Object.keys(config.proxies)).throwIfAny()
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err
      throw new ValidationError(err.fields.map((f) => ({ ...f, field: f.field.replace(/^config\.(scope|limits)\./, '') })))
    }
    // As POST /v1/jobs?create_run=true: the job and its first run, both or neither.
    const { run } = await createAdHocRun(store, tenant, seed, jobConfig)
    engine?.notify()
    return { text: [JSON.stringify({ run_id: run.id, job_id: run.job_id, status: run.status })] }
  },
}

const crawlStatus: Tool<typeof RunInput> = {
  name: 'crawl_status',
  title: 'Progress of a crawl',
  description:
    'How a crawl started with crawl_start is doing: status (pending, running, paused, finished), pages visited, queued and failed, and once finished why it ended. ' +
    'Poll every few seconds until status is `finished`; crawl_export can read the pages visited so far at any time.',
  input: RunInput,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async call({ store }, tenant, args) {
    const run = await store.runs.get(tenant, args.run_id)
    if (!run) throw notFound('run')
    const shown = {
      run_id: run.id,
      job_id: run.job_id,
      status: run.status,
      stop_reason: run.stop_reason,
      outcome: run.outcome,
      error_counts: run.error_counts,
      stats: run.stats,
      started_at: run.started_at,
      finished_at: run.finished_at,
    }
    return { text: [JSON.stringify(shown)] }
  },
}

const crawlExport: Tool<typeof ExportInput> = {
  name: 'crawl_export',
  title: "Read a crawl's pages",
  description:
    'The pages a crawl visited, as one markdown document (`llms`, default: a section per page with its URL and title) or as JSON lines (`jsonl`: url, status, title, markdown, … per page). ' +
    'Answers a bounded slice: at most max_pages pages and about max_chars characters. When more remain, the last text block gives next_offset: call again with offset set to it.',
  input: ExportInput,
  annotations: { readOnlyHint: true, openWorldHint: false },
  call: (deps, tenant, args) => exportPage(deps, tenant, args),
}

const extract: Tool<typeof ExtractInput> = {
  name: 'extract',
  title: 'Extract structured data from a page',
  description:
    'Fetch one page and return the values CSS-selector fields pick out of it, as JSON ({data, errors}). Give `fields` inline, or the id of a data map saved in trawl. ' +
    'Use this to try an extraction on a live page before putting it into a crawl; use scrape to read a page.',
  input: ExtractInput,
  annotations: { readOnlyHint: true, openWorldHint: true },
  async call(deps, tenant, args) {
    const url = urlOrThrow(args.url)
    if ((args.fields === undefined) === (args.data_map_id === undefined)) throw ValidationError.of('fields', 'give either fields or data_map_id')
    const timeoutMs = Math.round((args.timeout_seconds ?? TIMEOUT_SECONDS.default) * 1000)
    if (args.data_map_id !== undefined) {
      const map = await deps.store.dataMaps.get(tenant, args.data_map_id)
      if (!map) throw notFound('data map')
      return { text: [JSON.stringify(await extractWithDataMap(scraperFor(deps, args.render), deps.parser, tenant, url, map.id, map.map, timeoutMs), null, 2)] }
    }
    const fields = fieldsOrThrow(args.fields!, 'fields')
    const scraped = await scraperFor(deps, args.render).scrape({ url, formats: [{ kind: 'json', fields }], proxy: null, timeoutMs, locale: null })
    const r = scraped.results[0]!
    if (r.kind !== 'json') throw new DomainError('not_html', `${scraped.url} is not an HTML or text document`)
    return { text: [JSON.stringify({ data: r.data, errors: r.errors }, null, 2)] }
  },
}

/** Every tool, in the order tools/list shows them. */
export const TOOLS: Tool[] = [scrape, crawlStart, crawlStatus, crawlExport, extract] as unknown as Tool[]
