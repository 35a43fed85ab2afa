import { Type } from '@sinclair/typebox'
import { ApiError } from '../http/errors'
import { StringEnum, Uuid } from '../http/schemas'
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

export async function exportPage(_deps: McpDeps, _tenant: string, _args: unknown): Promise<ToolAnswer> {
  throw new ApiError(501, 'not_implemented', 'export is not available yet')
}
