import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import type { Elysia } from 'elysia'
import { FieldErrors } from './errors'
import { parseQuery } from './query'
import { TENANT_PATTERN, tenantOf } from './tenant'
import { validate } from '../core/validate'

/** What a handler answers: a status with a JSON body, or a ready Response. */
export type Reply = { status: number; body?: unknown } | Response

export type Ctx<P, Q, B> = { tenant: string; params: P; query: Q; body: B; request: Request; url: URL }

/**
 * One route: its schemas validate the request (we do it, not Elysia, so every 422 has our
 * field paths and the order tenant → validation → existence → state holds) and the same
 * schemas are handed to the OpenAPI document, so docs and validation cannot drift.
 */
export type Route<P extends TObject = TObject, Q extends TObject = TObject, B extends TSchema = TSchema> = {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  summary: string
  /** Longer prose for the OpenAPI document. */
  description?: string
  tag: string
  params?: P
  query?: Q
  body?: B
  /** A missing or empty body counts as `{}` (e.g. POST /v1/jobs/{id}/runs). */
  bodyOptional?: boolean
  /** The query string is not ours to validate: it belongs to something else (GET /v1/scrape/{url}'s target). */
  foreignQuery?: boolean
  /**
   * How the OpenAPI document names a wildcard route (`/v1/scrape/*` is `/v1/scrape/{url}`), with
   * the parameters the handler reads itself (that path parameter, headers).
   */
  doc?: { path: string; parameters: Record<string, unknown>[] }
  /**
   * Checks a schema cannot express (regexes, bounds, domains), run on the raw body beside the
   * schema so one 422 lists every problem. Must not trust the body's shape.
   */
  refine?: (body: unknown, errors: FieldErrors) => void
  /** Documentation of the success response. */
  response?: { status: number; schema?: TSchema; description?: string; contentType?: string }
  /** Management routes need X-Tenant-Id; scrape routes do not. */
  tenant?: boolean
  handle: (ctx: Ctx<P['static'], Q['static'], B['static']>) => Reply | Promise<Reply>
}

/**
 * A refine that names every string item of `body[key]` that `normalize` rejects (the handler
 * then normalizes the items again, which cannot fail: a pure call on at most a few hundred).
 */
export const itemsMust = (key: string, normalize: (raw: string) => string | null, message: string) => (body: unknown, errors: FieldErrors) => {
  const items = (body as Record<string, unknown>)[key]
  if (Array.isArray(items)) items.forEach((raw, i) => typeof raw === 'string' && normalize(raw) === null && errors.add(`${key}[${i}]`, message))
}

/** Declares a route with its schema types flowing into the handler. */
export const route = <P extends TObject, Q extends TObject, B extends TSchema>(r: Route<P, Q, B>) => r as unknown as Route

/** A JSON answer from text already serialized. */
export const jsonText = (status: number, text: string, headers: Record<string, string> = {}): Response => new Response(text, { status, headers: { ...headers, 'content-type': 'application/json' } })

export const json = (status: number, body: unknown, headers?: Record<string, string>): Response => jsonText(status, JSON.stringify(body), headers)

const NO_QUERY = Type.Object({}, { additionalProperties: false })
const TENANT_HEADERS = Type.Object({ 'x-tenant-id': Type.String({ pattern: TENANT_PATTERN, description: 'tenant identifier' }) })

/** OpenAPI references (the plugin's `references` option) collected while mounting. */
export type References = Record<string, Record<string, Record<string, unknown>>>

export function mount(app: Elysia, routes: Route[], refs: References) {
  for (const r of routes) {
    const needsTenant = r.tenant !== false
    app.route(
      r.method,
      r.path,
      async ({ request, body, params }: { request: Request; body: unknown; params: Record<string, string> }) => {
        const tenant = needsTenant ? tenantOf(request) : ''
        const url = new URL(request.url)
        const errors = new FieldErrors()
        const p = r.params ? errors.collect(() => validate(r.params!, params, 'params')) : {}
        const q = r.foreignQuery ? {} : errors.collect(() => parseQuery(r.query ?? NO_QUERY, url))
        const given = body === null || body === undefined || body === '' ? undefined : body
        const b = r.body ? errors.collect(() => validate(r.body!, given === undefined && r.bodyOptional ? {} : given, 'body')) : undefined
        if (r.refine && given !== null && typeof given === 'object') r.refine(given, errors)
        errors.throwIfAny()
        const reply = await r.handle({ tenant, params: p, query: q, body: b, request, url } as never)
        return reply instanceof Response ? reply : reply.status === 204 ? new Response(null, { status: 204 }) : json(reply.status, reply.body)
      },
      { detail: { summary: r.summary, ...(r.description ? { description: r.description } : {}), tags: [r.tag] }, ...(r.body ? { parse: 'json' } : {}) } as never,
    )
    const ref: Record<string, unknown> = {}
    if (r.params) ref.params = r.params
    if (r.query) ref.query = r.query
    if (r.body) ref.body = r.body
    if (needsTenant) ref.headers = TENANT_HEADERS
    if (r.response?.schema) ref.response = { [r.response.status]: r.response.schema }
    ;(refs[r.path] ??= {})[r.method.toLowerCase()] = ref
  }
}
