import type { BlobStore } from '../blob/blob-store'
import { readBlobBytes } from '../blob/read-bytes'
import { artifactJsonBytes } from '../catalogue/artifact-content'
import { notFound } from '../core/errors'
import { documentKind } from '../parse/document'
import { NO_CONTEXT, ParseFailure, type StepResult } from '../parse/pipeline'
import type { Pipeline } from '../parse/pipeline-schema'
import { ParseTimeout, type ParsePool } from '../parse/pool'
import type { Store } from '../store'
import type { Artifact } from '../store/artifacts'
import type { VisitFilter, VisitedLink } from '../store/run-graph'

/** One URL of a run as an export gives it (docs/api.md, "Export"). */
export type PageRecord = {
  url: string
  /** Where redirects led, when the run recorded it (a parsed artifact's base URL); else `url`. */
  final_url: string
  status: number | null
  depth: number
  content_type: string | null
  title: string | null
  description: string | null
  language: string | null
  markdown: string | null
  /** Data map results by data map id, from the run's parsed artifacts; null when there are none. */
  data: Record<string, unknown> | null
  /** Distinct links on the page. */
  outlinks: number
  visited_at: string
  artifact_ids: string[]
  /** Why the URL failed (status null, or 400 and above), from the crawl log; null otherwise. */
  error: { reason: string; detail: string | null } | null
}

export type ExportDeps = { store: Store; blobs: BlobStore; parser: ParsePool }

/** The run links list's filters, without paging. */
export type ExportFilters = VisitFilter

/** `skip`: visits passed over first, unread and unrendered (a reader paging through a run). */
export type ExportOptions = { main_content: boolean; filters: ExportFilters; skip?: number }

/** Visits read from the store at a time: one keyset page, its artifacts and errors in two more lookups. */
const VISIT_PAGE = 200
/**
 * Pages being read and rendered at once, in order: enough to keep both parse workers busy while
 * the next bodies are read (6 rendered as fast as 12 and 24 on the bench site), few enough that
 * memory does not grow with the run (12 peaked at 203 MB on 100,000 pages, 6 at about 180).
 */
const IN_FLIGHT = 6
/** ...and at most this many body bytes among them, so a run of large pages stays flat too. */
const IN_FLIGHT_BYTES = 48 * 1024 * 1024
/** Records between young collections, and between full ones (a multiple of it). */
const GC_YOUNG_EVERY = 20
const GC_FULL_EVERY = 500
/** A stored body past this is not rendered (a crawl's body cap is far below). */
const MAX_RENDER_BYTES = 256 * 1024 * 1024

const pipelineOf = (mainContent: boolean): Pipeline[] => [{ identifier: 'export', steps: [{ kind: 'markdown', main_content: mainContent }, { kind: 'metadata' }, { kind: 'links' }] }]

/** What a parsed artifact holds (the engine writes it: src/crawl/execution.ts, store()). */
/** `partial`: only the base URL was read (readJson). */
type ParsedArtifact = { base_url?: string; content_type?: string; pipeline?: { steps?: StepResult[] }; partial?: true }

type Visit = VisitedLink & { artifacts: Artifact[]; error: PageRecord['error'] }
/** A render's outcome, never rejected: a failure is thrown again when its turn comes. */
type Pending = { bytes: number; done: Promise<{ record: PageRecord } | { error: unknown }> }

/**
 * A run's pages, one record per URL it visited, in visit order. Markdown, metadata and links are
 * rendered now from the stored raw body on the parse workers (the crawl stores no markdown, so
 * it stays as fast as it was), several pages at once, order kept. Visits are read from the store
 * a keyset page at a time and at most IN_FLIGHT pages are held, so memory stays flat however
 * large the run. Rejects with the not-found error before any page is read when the tenant has
 * no such run.
 */
export async function exportPages(deps: ExportDeps, tenant: string, runId: string, opts: ExportOptions): Promise<AsyncGenerator<PageRecord>> {
  if (!(await deps.store.runs.get(tenant, runId))) throw notFound('run')
  return pages(deps, tenant, runId, opts)
}

async function* pages(deps: ExportDeps, tenant: string, runId: string, opts: ExportOptions): AsyncGenerator<PageRecord> {
  const pipelines = pipelineOf(opts.main_content)
  const window: Pending[] = []
  let bytes = 0
  let yielded = 0
  const next = async (): Promise<PageRecord> => {
    const head = window.shift()!
    bytes -= head.bytes
    const done = await head.done
    if ('error' in done) throw done.error
    // JavaScriptCore lets the heap grow to several times what is live before it collects, and
    // every page leaves its body, its markdown and its record behind: young collections often
    // and a full one now and then hold an export's memory flat (as the crawl does: decision 67).
    if (++yielded % GC_YOUNG_EVERY === 0) Bun.gc(yielded % GC_FULL_EVERY === 0)
    return done.record
  }
  let skip = opts.skip ?? 0
  for await (const batch of visitBatches(deps.store, tenant, runId, opts.filters)) {
    for (const visit of batch) {
      if (skip > 0) {
        skip--
        continue
      }
      const raw = visit.artifacts.find((a) => a.kind === 'raw' || a.kind === 'asset')
      const size = raw?.size ?? 0
      while (window.length >= IN_FLIGHT || (window.length > 0 && bytes + size > IN_FLIGHT_BYTES)) yield await next()
      const done = render(deps, tenant, visit, pipelines).then(
        (record) => ({ record }),
        (error: unknown) => ({ error }),
      )
      window.push({ bytes: size, done })
      bytes += size
    }
  }
  while (window.length) yield await next()
}

/** The run's visits a keyset page at a time, each with its artifacts and, when it failed, why. */
async function* visitBatches(store: Store, tenant: string, runId: string, filters: ExportFilters): AsyncGenerator<Visit[]> {
  let after: number | undefined
  do {
    // Null when the run was deleted meanwhile: the export ends there.
    const page = await store.runGraph.visits(tenant, runId, filters, after, VISIT_PAGE)
    after = page?.next ?? undefined
    if (!page?.data.length) return
    const hashes = page.data.map((v) => v.hash)
    const artifacts = Map.groupBy(await store.artifacts.forUrls(tenant, runId, hashes), (a) => a.url_hash)
    const failed = page.data.filter((v) => v.status === null || v.status >= 400)
    // A URL's error entry is logged before its visit is recorded.
    const upTo = Math.max(...failed.map((v) => Date.parse(v.visited_at)))
    const errors = failed.length
      ? await store.crawlLogs.errorsOf(
          tenant,
          runId,
          failed.map((v) => v.hash),
          upTo,
        )
      : new Map()
    yield page.data.map((v) => ({
      ...v,
      artifacts: artifacts.get(v.hash) ?? [],
      error:
        v.status === null || v.status >= 400
          ? (errors.get(v.hash) ?? (v.status === null ? { reason: 'unknown', detail: null } : { reason: 'http_status', detail: `the server answered ${v.status}` }))
          : null,
    }))
  } while (after !== undefined)
}

/**
 * A parsed artifact as the export reads it. A default crawl's is made again from the page's raw
 * body (decision 103), which the render parses anyway: `whole` false reads only its base URL (the
 * row's source URL), and the render's metadata stands for the rest.
 */
async function readJson(deps: ExportDeps, tenant: string, a: Artifact, whole: boolean): Promise<ParsedArtifact | null> {
  try {
    if (!whole) {
      const source = await deps.store.artifacts.source(tenant, a.id)
      if (source !== null) return { base_url: source, partial: true }
    }
    const bytes = await artifactJsonBytes(deps.store, deps.blobs, tenant, a, MAX_RENDER_BYTES)
    return bytes ? (JSON.parse(new TextDecoder().decode(bytes)) as ParsedArtifact) : null
  } catch {
    return null // a body the store lost or a row written badly: the page is exported without it
  }
}

/** One visit as a record: the parsed artifacts read, the raw body rendered on a worker. */
async function render(deps: ExportDeps, tenant: string, v: Visit, pipelines: Pipeline[]): Promise<PageRecord> {
  const raw = v.artifacts.find((a) => a.kind === 'raw' || a.kind === 'asset') ?? null
  const parsedRows = v.artifacts.filter((a) => a.kind === 'parsed')
  let parsed = await Promise.all(parsedRows.map((a) => readJson(deps, tenant, a, false)))
  const finalUrl = parsed.map((p) => p?.base_url).find((u) => typeof u === 'string') ?? null
  const record: PageRecord = {
    url: v.url,
    final_url: finalUrl ?? v.url,
    status: v.status,
    depth: v.depth,
    content_type: null,
    title: null,
    description: null,
    language: null,
    markdown: null,
    data: null,
    outlinks: 0,
    visited_at: v.visited_at,
    artifact_ids: v.artifacts.map((a) => a.id),
    error: v.error,
  }
  const rendered = raw !== null && documentKind(raw.content_type) !== null && (await renderBody(deps, tenant, v, raw, finalUrl, pipelines, record))
  // Not rendered: a parsed artifact read as its base URL alone is read whole, for its metadata.
  if (!rendered) parsed = await Promise.all(parsedRows.map((a, i) => (parsed[i]?.partial ? readJson(deps, tenant, a, true) : parsed[i]!)))
  let stored: StepResult | undefined
  for (const p of parsed) {
    for (const step of p?.pipeline?.steps ?? []) {
      if (step.kind === 'data_map' && 'data' in step) (record.data ??= {})[step.id] = step.data
      if (step.kind === 'metadata') stored ??= step
    }
  }
  record.content_type = raw?.content_type ?? parsed.find((p) => p?.content_type)?.content_type ?? null
  if (!rendered && stored?.kind === 'metadata') Object.assign(record, pick(stored.metadata))
  return record
}

/**
 * Renders the raw body on a worker into `record` (markdown, metadata, outlinks): true when it did.
 * A body that cannot be read or rendered (a worker's time limit, a type it does not parse) leaves
 * the record without them; anything else (the pool closed) ends the export.
 */
async function renderBody(deps: ExportDeps, tenant: string, v: Visit, raw: Artifact, finalUrl: string | null, pipelines: Pipeline[], record: PageRecord): Promise<boolean> {
  let body: Uint8Array | null
  try {
    body = await readBlobBytes(deps.blobs, raw.blob_key, MAX_RENDER_BYTES)
  } catch {
    body = null
  }
  if (!body) return false
  // Links resolve against where the page was, as they did in the crawl.
  const redirects = finalUrl && finalUrl !== v.url ? [{ url: v.url, location: finalUrl }] : []
  try {
    const result = await deps.parser.parse({ url: v.url, body, content_type: raw.content_type, redirects, pipelines }, NO_CONTEXT, tenant)
    for (const step of result.pipelines[0]?.steps ?? []) {
      if (step.kind === 'markdown') record.markdown = step.content
      else if (step.kind === 'metadata') Object.assign(record, pick(step.metadata))
      else if (step.kind === 'links') record.outlinks = step.links.length
    }
    return true
  } catch (err) {
    if (!(err instanceof ParseTimeout || err instanceof ParseFailure)) throw err
    return false
  }
}

const pick = (m: { title: string | null; description: string | null; language: string | null }) => ({ title: m.title, description: m.description, language: m.language })
