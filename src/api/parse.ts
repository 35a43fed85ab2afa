import { Type, type Static } from '@sinclair/typebox'
import { Redirect } from '../fetch/options-schema'
import { ApiError, notFound, type FieldErrors } from '../http/errors'
import { json, route, type Route } from '../http/route'
import { checkPipelines } from '../parse/check'
import { storeParseContext, type ContextNeeds } from '../catalogue/parse-context'
import { dataMapIds, ParseFailure, type ParseContext, type ParseInput } from '../parse/pipeline'
import { Pipeline } from '../parse/pipeline-schema'
import { ParseTimeout, PoolError } from '../parse/pool'
import { BatchItem, ParseResult as ParseResultSchema } from '../parse/result-schema'
import { decodeBase64, NOT_BASE64 } from '../util/base64'
import { looseArray, looseObject } from '../util/loose'
import type { Deps } from './deps'
import { failed } from './shapes'

const closed = { additionalProperties: false } as const
export const MAX_BATCH_ITEMS = 64

const ParseBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 8192, description: 'absolute http(s) URL the content came from' }),
    body: Type.String({ description: 'the content, base64 (standard or URL alphabet)' }),
    content_type: Type.String({ minLength: 1, maxLength: 255, description: 'MIME type, with charset when known' }),
    redirects: Type.Optional(Type.Array(Redirect, { maxItems: 64, default: [] })),
    pipelines: Type.Optional(Type.Array(Pipeline, { maxItems: 32, default: [], description: 'none: one markdown step (pipeline "default")' })),
  },
  closed,
)
type ParseBody = Static<typeof ParseBody>

/** Checks of one parse body a schema cannot make: URLs that resolve, base64, regexes and selectors. */
function checkParseBody(raw: unknown, at: string, errors: FieldErrors) {
  const body = looseObject(raw)
  const path = (field: string) => (at ? `${at}.${field}` : field)
  let url: URL | null = null
  if (typeof body.url === 'string') {
    url = URL.parse(body.url)
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) errors.add(path('url'), 'must be an absolute http(s) URL')
  }
  if (typeof body.body === 'string' && decodeBase64(body.body) === null) errors.add(path('body'), NOT_BASE64)
  // Walked as baseUrlOf walks it: each hop's url relative to the chain so far, its location
  // relative to that url; every location must land on http(s), or links would have no base.
  let chain = url
  looseArray(body.redirects).forEach((r, i) => {
    const { url: from, location } = looseObject(r)
    if (typeof from !== 'string' || typeof location !== 'string' || !chain) return
    const issuer = URL.parse(from, chain.href)
    if (!issuer) return void errors.add(path(`redirects[${i}].url`), 'must be a URL, or a path relative to the URL before it')
    const next = URL.parse(location, issuer.href)
    if (!next || (next.protocol !== 'http:' && next.protocol !== 'https:')) {
      return void errors.add(path(`redirects[${i}].location`), 'must resolve to an http(s) URL (absolute, or relative to the redirect url)')
    }
    chain = next
  })
  checkPipelines(body.pipelines, path('pipelines'), errors)
}

/** The data map ids the pipelines of a body name that the tenant does not have. */
const missingDataMaps = (body: ParseBody, ctx: ParseContext): string[] => dataMapIds(body.pipelines ?? []).filter((id) => ctx.dataMap(id) === null)

const needsOf = (body: ParseBody): ContextNeeds => ({ url: body.url, redirects: body.redirects, pipelines: body.pipelines ?? [] })

const inputOf = (body: ParseBody): ParseInput => ({
  url: body.url,
  body: decodeBase64(body.body)!,
  content_type: body.content_type,
  redirects: body.redirects,
  pipelines: body.pipelines ?? [],
})

/** Parse: run pipelines over content the caller already has (fetched by trawl or by anyone). */
export const parseRoutes = ({ store, log, parser }: Deps): Route[] => [
  route({
    method: 'POST',
    path: '/v1/parse',
    summary: 'Run parse pipelines over one document',
    tag: 'parse',
    body: ParseBody,
    refine: (body, errors) => checkParseBody(body, '', errors),
    response: { status: 200, schema: ParseResultSchema },
    handle: async ({ tenant, body }) => {
      const ctx = await storeParseContext(store, tenant, [needsOf(body)])
      const missing = missingDataMaps(body, ctx)
      if (missing.length) throw notFound(`data map ${missing[0]}`)
      try {
        return { status: 200, body: await parser.parse(inputOf(body), ctx, tenant) }
      } catch (err) {
        if (err instanceof ParseFailure) throw new ApiError(415, err.code, err.message)
        if (err instanceof ParseTimeout || err instanceof PoolError) throw new ApiError(500, 'parse_error', err.message)
        throw err
      }
    },
  }),
  route({
    method: 'POST',
    path: '/v1/parse/batch',
    summary: 'Run parse pipelines over 1 to 64 documents; a failing item is an error item',
    tag: 'parse',
    body: Type.Object({ items: Type.Array(ParseBody, { minItems: 1, maxItems: MAX_BATCH_ITEMS }) }, closed),
    refine: (body, errors) => looseArray(looseObject(body).items).forEach((item, i) => checkParseBody(item, `items[${i}]`, errors)),
    response: { status: 200, schema: Type.Object({ results: Type.Array(BatchItem, { description: 'in item order' }) }) },
    handle: async ({ tenant, body }) => {
      const ctx = await storeParseContext(store, tenant, body.items.map(needsOf))
      const results = await Promise.all(
        body.items.map(async (item) => {
          const missing = missingDataMaps(item, ctx)
          if (missing.length) return failed(item.url, 'not_found', `data map ${missing[0]} not found`)
          try {
            return { ok: true, ...(await parser.parse(inputOf(item), ctx, tenant)) }
          } catch (err) {
            if (err instanceof ParseFailure) return failed(item.url, err.code, err.message)
            if (err instanceof ParseTimeout || err instanceof PoolError) return failed(item.url, 'parse_error', err.message)
            log.error('parse item failed', { url: item.url, error: String(err) })
            return failed(item.url, 'parse_error', 'the document could not be parsed')
          }
        }),
      )
      return json(200, { results })
    },
  }),
]
