import { Type, type Static } from '@sinclair/typebox'
import { ErrorBody, StringEnum } from '../core/schemas'

/** Response shapes of /v1/parse and /v1/parse/batch, for the OpenAPI document and docs/api.md. */

export const LinkOut = Type.Object(
  {
    url: Type.String({ description: 'absolute, without fragment' }),
    text: Type.String({ description: 'anchor text, whitespace collapsed (an image alt when there is no text)' }),
    rel: Type.Array(Type.String(), { description: 'rel tokens, lowercased' }),
    nofollow: Type.Boolean({ description: 'rel=nofollow, or a robots meta nofollow on the page' }),
  },
  { description: 'a link of the document' },
)

export const Metadata = Type.Object({
  title: Type.Union([Type.String(), Type.Null()]),
  description: Type.Union([Type.String(), Type.Null()]),
  canonical: Type.Union([Type.String(), Type.Null()], { description: 'absolute' }),
  language: Type.Union([Type.String(), Type.Null()]),
  open_graph: Type.Record(Type.String(), Type.String(), { description: 'og:* properties by full name' }),
  json_ld: Type.Array(Type.Unknown(), { description: 'each application/ld+json block, parsed' }),
})

export const ExtractError = Type.Object({
  field: Type.String({ description: 'path of the field: `price`, `comments[2].author`, `[3].title`' }),
  error: StringEnum(['required', 'invalid']),
  message: Type.String(),
})

const Extracted = { data: Type.Unknown({ description: 'an object, or a list of objects with item_selector' }), errors: Type.Array(ExtractError) }

export const StepResult = Type.Union([
  Type.Object({ kind: StringEnum(['markdown', 'html', 'text']), content: Type.String() }),
  Type.Object({ kind: Type.Literal('metadata'), metadata: Metadata }),
  Type.Object({ kind: Type.Literal('links'), links: Type.Array(LinkOut) }),
  Type.Object({ kind: Type.Literal('fields'), ...Extracted }),
  Type.Object({ kind: Type.Literal('data_map'), id: Type.String(), ...Extracted }),
  Type.Object({ kind: Type.Literal('data_map'), id: Type.String(), error: ErrorBody }),
])

export const PipelineResult = Type.Object({
  identifier: Type.String(),
  priority: Type.Integer(),
  status: StringEnum(['ran', 'skipped']),
  skipped_reason: Type.Union([StringEnum(['content_type', 'url', 'category', 'stopped']), Type.Null()], {
    description: 'the guard that failed, or `stopped` when a higher-priority pipeline with behavior stop ran',
  }),
  links: Type.Union([Type.Array(LinkOut), Type.Null()], { description: "the links this pipeline's navigator selects; null without a navigator" }),
  steps: Type.Array(StepResult, { description: 'one result per step, in order; empty when skipped' }),
})

export const ParseResult = Type.Object({
  url: Type.String(),
  base_url: Type.String({
    description:
      "where the document is: the last redirect's location, else url, as WHATWG URL writes it without fragment; guards judge it and links resolve against it (a <base href> applies inside the document)",
  }),
  content_type: Type.String({ description: 'the MIME type without parameters' }),
  charset: Type.String({ description: 'the encoding the body was decoded with' }),
  pipelines: Type.Array(PipelineResult, { description: 'in the order they ran: priority, highest first' }),
  metadata: Type.Optional(Type.Object(Metadata.properties, { description: "only when the request has no pipelines: the page's metadata, as the metadata step gives it" })),
  links: Type.Optional(Type.Array(LinkOut, { description: "only when the request has no pipelines: the page's links, as the links step gives them" })),
})
export type ParseResultShape = Static<typeof ParseResult>

export const BatchItem = Type.Union([Type.Intersect([Type.Object({ ok: Type.Literal(true) }), ParseResult]), Type.Object({ ok: Type.Literal(false), url: Type.String(), error: ErrorBody })])
