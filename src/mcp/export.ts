import { Type } from '@sinclair/typebox'
import { exportPages, jsonlLine, llmsHeader, llmsSection, type PageRecord } from '../export'
import { notFound } from '../core/errors'
import { StringEnum, Uuid } from '../core/schemas'
import type { McpDeps, ToolAnswer } from './tools'

const closed = { additionalProperties: false } as const

/** The slice of a run's export that crawl_export answers (decision 97). */
export const ExportInput = Type.Object(
  {
    run_id: { ...Uuid, description: 'the run id crawl_start returned' },
    format: Type.Optional(StringEnum(['llms', 'jsonl'], { default: 'llms', description: '`llms`: one markdown document, a section per page; `jsonl`: one JSON object per line and page' })),
    main_content: Type.Optional(Type.Boolean({ default: true, description: "true: each page's main content only; false: the whole page" })),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'pages to skip: 0, then the next_offset of the previous answer' })),
    max_pages: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 20, description: 'most pages in this answer' })),
    max_chars: Type.Optional(Type.Integer({ minimum: 1000, maximum: 1_000_000, default: 50_000, description: 'about the most characters in this answer; a page longer than that alone is cut short' })),
  },
  closed,
)

type ExportArgs = { run_id: string; format?: 'llms' | 'jsonl'; main_content?: boolean; offset?: number; max_pages?: number; max_chars?: number }

/**
 * One slice of a run's export (decision 97): the pages from `offset` on, as many as fit in
 * max_pages and max_chars, then a JSON block saying where the next slice starts. Offsets count
 * the run's visited URLs in visit order, pages without markdown too, so they stay put between
 * calls; a run still crawling only adds pages after them. The pages before the offset are
 * passed over unrendered: a deep offset costs only the reading of their visit rows.
 */
export async function exportPage(deps: McpDeps, tenant: string, args: ExportArgs): Promise<ToolAnswer> {
  const run = await deps.store.runs.get(tenant, args.run_id)
  if (!run) throw notFound('run')
  const format = args.format ?? 'llms'
  const offset = args.offset ?? 0
  const maxPages = args.max_pages ?? 20
  const maxChars = args.max_chars ?? 50_000
  const text = format === 'llms' ? llmsSection : jsonlLine
  const parts: string[] = offset === 0 && format === 'llms' ? [llmsHeader(run)] : []
  let chars = parts[0]?.length ?? 0
  let pages = 0
  let cut = 0
  let next: number | null = null
  const records = await exportPages(deps, tenant, run.id, { main_content: args.main_content ?? true, filters: {}, skip: offset })
  try {
    let index = offset
    for await (const record of records) {
      const at = index++
      if (pages >= maxPages) {
        next = at
        break
      }
      let part = text(record)
      if (pages > 0 && chars + part.length > maxChars) {
        next = at
        break
      }
      // A page longer than the whole budget comes alone, its markdown cut to fit.
      if (chars + part.length > maxChars && record.markdown !== null) {
        part = text(cutShort(record, chars + part.length - maxChars))
        cut++
      }
      parts.push(part)
      chars += part.length
      pages++
    }
  } finally {
    await records.return(undefined)
  }
  const body = parts.join('') || `(no pages from offset ${offset}${run.status === 'finished' ? '' : `; the run is ${run.status}, so more may come`})`
  const slice = { run_id: run.id, status: run.status, format, offset, pages, next_offset: next, ...(cut ? { cut_short: cut } : {}) }
  return { text: [body, JSON.stringify(slice)] }
}

/** The record with its markdown `excess` characters shorter, and a line that says so. */
function cutShort(record: PageRecord, excess: number): PageRecord {
  const markdown = record.markdown!
  const keep = Math.max(0, markdown.length - excess - CUT_NOTE_ROOM)
  return { ...record, markdown: `${markdown.slice(0, keep)}\n\n[cut short: ${markdown.length - keep} more characters; read this page with scrape, or ask for a larger max_chars]` }
}

const CUT_NOTE_ROOM = 120
