import { Type } from '@sinclair/typebox'
import { ErrorBody } from '../core/schemas'
import { Cookie, Redirect } from './options-schema'
import type { FetchResult } from './types'

/** The fetch response of design.md §6 (docs/fetch.md), as the API writes it (body in base64). */
export const FetchResultSchema = Type.Object({
  url: Type.String({ description: 'the URL asked for' }),
  final_url: Type.String({ description: 'where the redirects ended' }),
  status: Type.Integer({ description: "the target's status (a 404 is still a 200 from trawl)" }),
  headers: Type.Array(Type.Tuple([Type.String(), Type.String()]), { description: 'response headers as sent, names lowercased; Set-Cookie lines stay separate' }),
  cookies: Type.Array(Cookie, { description: 'cookies set along the way (Set-Cookie of every hop)' }),
  content_type: Type.Union([Type.String(), Type.Null()]),
  body: Type.String({ description: 'the body, base64, decoded from any Content-Encoding; the rendered DOM for the browser client' }),
  redirects: Type.Array(Redirect),
  timing: Type.Object({ total_ms: Type.Integer() }),
})

export const FetchBatchItem = Type.Union([Type.Intersect([Type.Object({ ok: Type.Literal(true) }), FetchResultSchema]), Type.Object({ ok: Type.Literal(false), url: Type.String(), error: ErrorBody })])

/**
 * A result as JSON text, the body spliced in as base64 after the rest is stringified: a batch
 * answers megabytes of base64, and JSON.stringify would scan every character of it for escapes
 * it cannot contain (this doubled /v1/fetch/batch's throughput in scripts/bench/fetch.ts).
 */
export function resultJson(r: FetchResult, ok?: true): string {
  const { body, ...rest } = r
  const head = JSON.stringify(ok ? { ok, ...rest } : rest)
  return `${head.slice(0, -1)},"body":"${(body as Uint8Array & { toBase64(): string }).toBase64()}"}`
}
