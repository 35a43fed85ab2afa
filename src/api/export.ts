import { Type } from '@sinclair/typebox'
import { exportPages, jsonlLine, llmsHeader, llmsSection, type PageRecord } from '../export'
import { notFound } from '../http/errors'
import { route, type Route } from '../http/route'
import { StringEnum } from '../http/schemas'
import type { Deps } from './deps'
import { RunParams } from './runs'
import { VisitFilterQuery } from './run-graph'

const closed = { additionalProperties: false } as const
const FORMATS = ['jsonl', 'llms'] as const
const CONTENT_TYPES = { jsonl: 'application/x-ndjson', llms: 'text/markdown; charset=utf-8' } as const

const ExportQuery = Type.Object(
  {
    format: Type.Optional(StringEnum(FORMATS, { default: 'jsonl', description: '`jsonl`: one JSON object per URL; `llms`: one markdown document (llms-full.txt style)' })),
    main_content: Type.Optional(Type.Boolean({ default: true, description: 'markdown of the main content only (navigation, headers, footers, sidebars and banners removed)' })),
    ...VisitFilterQuery,
  },
  closed,
)

/**
 * Bytes of the records as they come. Records are rendered a few at a time ahead of the reader
 * (exportPages), and a stream pulled only when the client takes more, so a slow client holds
 * the export back instead of filling memory. A failure after the first byte can only cut the
 * stream short: the status is sent.
 */
function streamOf(pages: AsyncGenerator<PageRecord>, head: string, line: (r: PageRecord) => string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let started = false
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let text = started ? '' : head
      started = true
      // Up to ~64 KiB a chunk: one write per record would be many small ones.
      while (text.length < 65_536) {
        const next = await pages.next()
        if (next.done) {
          if (text) controller.enqueue(encoder.encode(text))
          controller.close()
          return
        }
        text += line(next.value)
      }
      controller.enqueue(encoder.encode(text))
    },
    async cancel() {
      await pages.return(undefined)
    },
  })
}

/** A run's pages as JSONL or one markdown document (src/export). */
export const exportRoutes = ({ store, blobs, parser }: Deps): Route[] => [
  route({
    method: 'GET',
    path: '/v1/runs/:run_id/export',
    summary: "Stream a run's pages: JSONL records or one markdown document",
    description:
      'One record per URL the run visited, in visit order: url, final_url, status, depth, content_type, title, description, language, markdown (rendered now from the stored raw body), data (data map results by id), outlinks, visited_at, artifact_ids, and error for failed URLs. Filters as GET /v1/runs/{run_id}/links. `format=llms` gives one markdown document, a section per page with markdown. 404 when the run does not exist.',
    tag: 'runs',
    params: RunParams,
    query: ExportQuery,
    response: { status: 200, description: 'JSONL (application/x-ndjson) or markdown (text/markdown)', contentType: 'application/x-ndjson' },
    handle: async ({ tenant, params, query }) => {
      const { format = 'jsonl', main_content = true, ...filters } = query
      const run = await store.runs.get(tenant, params.run_id)
      if (!run) throw notFound('run')
      const pages = await exportPages({ store, blobs, parser }, tenant, run.id, { main_content, filters })
      const body = format === 'llms' ? streamOf(pages, llmsHeader(run), llmsSection) : streamOf(pages, '', jsonlLine)
      return new Response(body, { status: 200, headers: { 'content-type': CONTENT_TYPES[format] } })
    },
  }),
]
