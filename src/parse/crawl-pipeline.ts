import { NO_CONTEXT, parseDocument, type ParseResult, type PipelineResult } from './pipeline'
import type { Pipeline } from './pipeline-schema'

/** The default pipeline of a crawl (design.md §4): every a[href], metadata only, so crawling stays cheap. */
export const CRAWL_PIPELINE: Pipeline = { identifier: 'default', navigator: { kind: 'links' }, steps: [{ kind: 'metadata' }] } as Pipeline

/** A parsed artifact's content: the document's addresses and one pipeline's result, as JSON. */
export const parsedArtifactJson = (result: ParseResult, pipeline: PipelineResult): string =>
  JSON.stringify({ url: result.url, base_url: result.base_url, content_type: result.content_type, charset: result.charset, pipeline })

/**
 * The parsed artifact of the crawl pipeline, made again from the page's raw body: the same JSON,
 * byte for byte, as the crawl made when it fetched the page (decision 103). `url` is the URL the
 * crawl requested, `sourceUrl` where redirects led (the base its links resolved against).
 */
export async function crawlParsedJson(url: string, sourceUrl: string, body: Uint8Array, contentType: string): Promise<string> {
  const redirects = sourceUrl === url ? [] : [{ url, location: sourceUrl }]
  const result = await parseDocument({ url, body, content_type: contentType, redirects, pipelines: [CRAWL_PIPELINE] }, NO_CONTEXT)
  return parsedArtifactJson(result, result.pipelines[0]!)
}
