import type { DataMapDef } from '../extract/data-map'
import { decodeDocument } from './charset'
import { ParsedDocument } from './parsed-document'
import { documentKind, mimeEssence } from './document'
import { guardFailure } from './guards'
import type { Pipeline } from './pipeline-schema'
import type { LinkOut, Metadata } from './scan'
import type { ExtractError } from '../extract/fields'
import type { PatternSetDef } from '../extract/patterns'

/** Where the document came from and which pipelines to run over it (the /v1/parse body, decoded). */
export type ParseInput = {
  url: string
  body: Uint8Array
  content_type: string
  redirects?: readonly { url: string; location: string }[]
  pipelines: readonly Pipeline[]
  /** The crawl engine asks for the images, stylesheets and scripts the page references (store.assets). */
  collect_assets?: boolean
}

/** What the pipelines may look up: tenant-scoped, resolved by the caller (API route or crawl engine). */
export interface ParseContext {
  /** The pattern sets of the URL's host, oldest first (what the category guard classifies with). */
  patternSets(url: string): readonly PatternSetDef[]
  /** A data map definition by id, or null when there is none. */
  dataMap(id: string): DataMapDef | null
}

export type StepResult =
  | { kind: 'markdown' | 'html' | 'text'; content: string }
  | { kind: 'metadata'; metadata: Metadata }
  | { kind: 'links'; links: LinkOut[] }
  | { kind: 'fields'; data: Record<string, unknown>; errors: ExtractError[] }
  | { kind: 'data_map'; id: string; data: unknown; errors: ExtractError[] }
  | { kind: 'data_map'; id: string; error: { error: 'not_found'; message: string } }

export type SkipReason = 'content_type' | 'url' | 'category' | 'stopped'
export type PipelineResult = {
  identifier: string
  priority: number
  status: 'ran' | 'skipped'
  skipped_reason: SkipReason | null
  /** The links this pipeline's navigator selects (the ones a crawl follows), or null without a navigator. */
  links: LinkOut[] | null
  steps: StepResult[]
}
export type ParseResult = {
  url: string
  base_url: string
  content_type: string
  charset: string
  pipelines: PipelineResult[]
  /** A request without pipelines: the page's metadata and links beside the default markdown. */
  metadata?: Metadata
  links?: LinkOut[]
  assets?: string[]
}

/** A parse that cannot run at all; the batch reports it as an error item. */
export class ParseFailure extends Error {
  constructor(
    readonly code: 'unsupported_content_type',
    message: string,
  ) {
    super(message)
  }
}

/** The context of a parse whose pipelines name no data maps and no category guards: nothing to look up. */
export const NO_CONTEXT: ParseContext = { patternSets: () => [], dataMap: () => null }

/** The ids of the data maps the steps of these pipelines name, each once. */
export const dataMapIds = (pipelines: readonly Pipeline[]): string[] => [...new Set(pipelines.flatMap((p) => (p.steps ?? []).flatMap((s) => (s.kind === 'data_map' ? [s.id] : []))))]

/**
 * The pipeline a parse request without pipelines runs (the interface: "a single extractor"): main-content
 * markdown. The result also carries the page's metadata and links at its top level, from the
 * scan every page gets anyway, so the default result is what a reader of the page wants.
 */
export const DEFAULT_PIPELINE: Pipeline = { identifier: 'default', steps: [{ kind: 'markdown' }] }

/**
 * The URL the document is at, which links resolve against and guards judge: the last
 * redirect's location when there were redirects (each location relative to the URL that
 * issued it, itself relative to the chain so far), else the document URL; serialized by
 * WHATWG URL, without fragment.
 */
export function baseUrlOf(url: string, redirects: ParseInput['redirects']): string {
  let base = new URL(url)
  for (const r of redirects ?? []) {
    const next = URL.parse(r.location, (URL.parse(r.url, base.href) ?? base).href)
    if (next) base = next // the route validated it; the engine only records locations that parsed
  }
  base.hash = ''
  return base.href
}

/**
 * Runs the pipelines over one document, highest priority first (ties in the order given). A
 * pipeline whose guards fail is skipped; one with `behavior: "stop"` that ran keeps the
 * lower-priority ones from running. Work shared by pipelines (the scan, the tree, a markdown
 * rendering with the same options) is done once per document.
 */
export async function parseDocument(input: ParseInput, ctx: ParseContext): Promise<ParseResult> {
  const kind = documentKind(input.content_type)
  if (!kind) throw new ParseFailure('unsupported_content_type', `content type ${mimeEssence(input.content_type) || '(empty)'} is not parsed; HTML, XHTML, plain text and JSON are`)
  const { text, charset } = decodeDocument(input.body, input.content_type)
  const baseUrl = baseUrlOf(input.url, input.redirects)
  const pipelines = (input.pipelines.length ? input.pipelines : [DEFAULT_PIPELINE])
    .map((p, order) => ({ p, order, priority: p.priority ?? 0 }))
    .sort((a, b) => b.priority - a.priority || a.order - b.order)
  const doc = new ParsedDocument(
    kind,
    text,
    baseUrl,
    pipelines.map(({ p }) => p),
  )

  const results: PipelineResult[] = []
  let stopped = false
  for (const { p, priority } of pipelines) {
    const base = { identifier: p.identifier ?? 'default', priority }
    const skipped = stopped ? 'stopped' : guardFailure(p.guards ?? [], input.content_type, baseUrl, ctx)
    if (skipped) {
      results.push({ ...base, status: 'skipped', skipped_reason: skipped, links: null, steps: [] })
      continue
    }
    const links = p.navigator ? await doc.navigate(p.navigator) : null
    const steps: StepResult[] = []
    for (const step of p.steps ?? DEFAULT_PIPELINE.steps!) steps.push(await doc.step(step, ctx))
    results.push({ ...base, status: 'ran', skipped_reason: null, links, steps })
    if (p.behavior === 'stop') stopped = true
  }
  const result: ParseResult = { url: input.url, base_url: baseUrl, content_type: mimeEssence(input.content_type), charset, pipelines: results }
  if (!input.pipelines.length) {
    const { metadata, links } = await doc.scan()
    Object.assign(result, { metadata, links })
  }
  if (input.collect_assets) result.assets = (await doc.scan()).assets
  return result
}
