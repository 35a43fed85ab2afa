import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import type { Logger } from '../log'
import { httpRequests, httpSeconds } from '../metrics'
import { VERSION } from '../version'
import { DOCS_ASSETS } from './docs-assets'
import { mountDashboard } from './dashboard'
import { DomainError, ValidationError, type DomainCode } from '../core/errors'
import { ApiError, payloadTooLarge } from './errors'
import { allowedMethods } from './methods'
import { json, mount, type References, type Route } from './route'
import { tenantOf } from './tenant'

export type AppOptions = {
  title: string
  description: string
  routes: Route[]
  log: Logger
  maxRequestBytes: number
  /** Whether routes under /v1 need X-Tenant-Id (the management surface). */
  tenant: boolean
  /** The `surface` label of the HTTP metrics. */
  surface: 'management' | 'scrape'
  /** Serve GET /metrics (docs/metrics.md) with this answer; outside the OpenAPI document. */
  metrics?: () => Promise<Response>
  /** Answer browsers from any origin (the scrape surface): preflights, and these headers allowed and exposed. */
  cors?: { allowHeaders: readonly string[]; exposeHeaders: readonly string[] }
  /** Serve the dashboard at `/` (the management surface; docs/dashboard.md). */
  dashboard?: boolean
}

/**
 * One HTTP surface: JSON parsing, the single error mapping (design.md §3), the OpenAPI document
 * at /openapi.json and its docs page at /docs, and the routes.
 */
export function createApp(opts: AppOptions) {
  const refs: References = {}
  const starts = new WeakMap<Request, number>()
  const cors = opts.cors && { allow: opts.cors.allowHeaders.join(', '), expose: opts.cors.exposeHeaders.join(', ') }
  const allowed = allowedMethods(() => app.routes, { options: Boolean(cors) })
  /** The answer to whatever a route or hook threw (design.md §3). */
  const answerError = (code: string | number, thrown: unknown, request: Request): Response => {
    // Elysia wraps whatever onParse throws in a ParseError; our own errors are in its cause.
    const cause = code === 'PARSE' ? (thrown as Error).cause : undefined
    const error = cause instanceof ApiError || cause instanceof DomainError ? cause : thrown
    const ours = error instanceof ApiError || error instanceof DomainError
    if (opts.tenant && (ours || code === 'PARSE') && pathOf(request).startsWith('/v1/')) {
      try {
        tenantOf(request) // tenant is checked before validation, even when the body did not parse
      } catch (tenantError) {
        return errorResponse(tenantError as ApiError)
      }
    }
    if (ours) return errorResponse(error)
    if (code === 'NOT_FOUND') return unrouted(request, allowed)
    if (code === 'PARSE') return errorResponse(ValidationError.of('body', 'is not valid JSON'))
    opts.log.error('unhandled error', { method: request.method, url: request.url, error: String((error as Error)?.stack ?? error) })
    return errorResponse(new ApiError(500, 'internal', 'internal error'))
  }
  const app = new Elysia()
    .onRequest(({ request, set }) => {
      starts.set(request, performance.now())
      if (cors) {
        // Set here, the headers go on every answer: routes', errors' and 404s alike.
        set.headers['access-control-allow-origin'] = '*'
        set.headers['access-control-expose-headers'] = cors.expose
        if (request.method === 'OPTIONS') {
          return counted(
            request,
            new Response(null, {
              status: 204,
              headers: {
                'access-control-allow-origin': '*',
                'access-control-allow-methods': 'GET, POST, OPTIONS',
                'access-control-allow-headers': cors.allow,
                'access-control-max-age': '86400',
              },
            }),
          )
        }
      }
      // Bun leaves request.url relative, or unparsable, when the Host header names no host
      // (`a/b`, `bad host`): a malformed request (RFC 9112 §3.2 asks for a 400), which no route
      // could read its URL from.
      if (URL.parse(request.url) === null) return counted(request, errorResponse(new ApiError(400, 'invalid_host', 'the Host header does not name a host')))
      const length = Number(request.headers.get('content-length') ?? 0)
      if (length > opts.maxRequestBytes) return counted(request, errorResponse(payloadTooLarge(opts.maxRequestBytes)))
    })
    // Bodies are read as text and parsed here whatever the Content-Type, so a malformed body
    // is our 422 on `body`, never a plain-text 400.
    .onParse(async ({ request }) => {
      const bytes = await request.arrayBuffer()
      if (bytes.byteLength > opts.maxRequestBytes) throw payloadTooLarge(opts.maxRequestBytes)
      const text = new TextDecoder().decode(bytes)
      if (text.trim() === '') return null
      try {
        return JSON.parse(text)
      } catch (err) {
        throw ValidationError.of('body', `is not valid JSON: ${(err as Error).message}`)
      }
    })
    .onError(({ code, error, request, set }) => {
      const response = answerError(code, error, request)
      // The access line reads the status from here: an error's reply never reaches onAfterResponse.
      set.status = response.status
      return response
    })
    // The plugin knows nothing of query encodings; say how our objects travel (design.md §3).
    .onAfterHandle({ as: 'global' }, ({ path, response }) => {
      if (path !== '/openapi.json') return
      annotateQueryStyles(response)
      hoistSchemaIds(response)
      renameDocumentedPaths(response, opts.routes)
    })
    .use(
      openapi({
        path: '/docs',
        specPath: '/openapi.json',
        provider: 'swagger-ui',
        // An absolute spec URL, so /docs/ (trailing slash) finds it too.
        swagger: { url: '/openapi.json', cdn: '/docs/assets/swagger-ui-bundle.js', theme: '/docs/assets/swagger-ui.css', autoDarkMode: false } as never,
        documentation: { info: { title: opts.title, version: VERSION, description: opts.description } },
        exclude: { paths: ['/docs/assets/:file'] },
        references: () => refs as never,
      }),
    )
    .get(
      '/docs/assets/:file',
      ({ params }) => {
        const asset = DOCS_ASSETS[params.file]
        if (!asset) return errorResponse(new ApiError(404, 'not_found', 'no such asset'))
        return new Response(Bun.file(asset.path), { headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' } })
      },
      { detail: { hide: true } },
    )
  /**
   * The HTTP metrics of one answer, and its access line at debug level. A request is labelled with
   * the template of the route that took it, never its path (one series a route, whatever the ids),
   * or UNMATCHED: no route (404, 405), or answered before routing (a preflight, 400, 413).
   */
  const observe = (request: Request, route: string | undefined, status: number) => {
    const started = starts.get(request)
    const seconds = started === undefined ? 0 : (performance.now() - started) / 1000
    const template = route || UNMATCHED
    httpRequests.labels(opts.surface, request.method, template, String(status)).inc()
    httpSeconds.labels(opts.surface, request.method, template).observe(seconds)
    if (!opts.log.debugEnabled) return
    const url = urlOf(request)
    opts.log.debug('request', { method: request.method, path: url ? url.pathname + url.search : request.url, status, ms: started === undefined ? null : Math.round(seconds * 10_000) / 10 })
  }
  // onAfterResponse never sees what onRequest answered itself.
  const counted = (request: Request, response: Response) => {
    observe(request, undefined, response.status)
    return response
  }
  app.onAfterResponse({ as: 'global' }, (ctx) => {
    // Our replies are Response objects; an error reply has no response here, only its code.
    const { response, code, route } = ctx as { response?: unknown; code?: string; route?: string }
    const status = response instanceof Response ? response.status : code === 'NOT_FOUND' ? unrouted(ctx.request, allowed).status : Number(ctx.set.status ?? 200)
    observe(ctx.request, code === 'NOT_FOUND' ? undefined : route, status)
  })
  if (opts.metrics) {
    const answer = opts.metrics
    app.get('/metrics', () => answer(), { detail: { hide: true } })
  }
  if (opts.dashboard) mountDashboard(app as unknown as Elysia, errorResponse)
  mount(app as unknown as Elysia, opts.routes, refs)
  return app
}

/** The `route` label of a request no route took. */
export const UNMATCHED = 'unmatched'

/** Wildcard routes under the names and parameters their `doc` gives (idempotent, like the others). */
function renameDocumentedPaths(doc: unknown, routes: Route[]) {
  const paths = (doc as { paths?: Record<string, Record<string, { parameters?: unknown[] }>> })?.paths
  if (!paths) return
  for (const r of routes) {
    if (!r.doc || !paths[r.path]) continue
    const ops = paths[r.path]!
    delete paths[r.path]
    for (const op of Object.values(ops)) op.parameters = [...r.doc.parameters, ...(op.parameters ?? [])]
    paths[r.doc.path] = { ...paths[r.doc.path], ...ops }
  }
}

/**
 * The request's path, whatever Bun made of its URL: a Host header holding `/` leaves
 * request.url relative. onRequest answers those 400 before any route; the access line of that
 * answer still wants the path.
 */
const urlOf = (request: Request) => URL.parse(request.url) ?? URL.parse(request.url, 'http://invalid')
const pathOf = (request: Request) => urlOf(request)?.pathname ?? '/'

/** Marks object query parameters as deepObject (`labels[env]=prod`) and arrays as repeated keys. */
function annotateQueryStyles(doc: unknown) {
  const paths = (doc as { paths?: Record<string, Record<string, { parameters?: Record<string, any>[] }>> })?.paths ?? {}
  for (const ops of Object.values(paths))
    for (const op of Object.values(ops))
      for (const p of op.parameters ?? []) {
        if (p.in !== 'query') continue
        if (p.schema?.type === 'object') Object.assign(p, { style: 'deepObject', explode: true })
        if (p.schema?.type === 'array') Object.assign(p, { style: 'form', explode: true })
      }
}

/**
 * Recursive TypeBox schemas (Field) carry `$id` and refer to themselves by bare `$ref`; OpenAPI
 * tools resolve `#/components/schemas/…` only, so move each `$id` schema there. Idempotent:
 * the plugin caches the document and hands us the same object every time.
 */
function hoistSchemaIds(doc: unknown) {
  const d = doc as { components?: { schemas?: Record<string, unknown> } }
  const components = ((d.components ??= {}).schemas ??= {})
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit)
    if (!node || typeof node !== 'object') return node
    const obj = node as Record<string, unknown>
    if (typeof obj.$ref === 'string' && !obj.$ref.startsWith('#')) obj.$ref = `#/components/schemas/${obj.$ref}`
    for (const [k, v] of Object.entries(obj)) obj[k] = visit(v)
    if (typeof obj.$id === 'string') {
      const { $id, ...schema } = obj
      components[$id] = schema
      return { $ref: `#/components/schemas/${$id}` }
    }
    return obj
  }
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) if (k !== 'components') (doc as Record<string, unknown>)[k] = visit(v)
}

/**
 * A request no route takes. A path that some route serves with other methods is a 405 with
 * Allow (RFC 9110 §15.5.6); any other is a 404. Neither needs a tenant: both are about the
 * route, before anything a tenant owns.
 */
function unrouted(request: Request, allowed: (path: string) => string[]): Response {
  const path = pathOf(request)
  const methods = allowed(path)
  if (methods.length === 0) return errorResponse(new ApiError(404, 'not_found', `no route for ${request.method} ${path}`))
  const allow = methods.join(', ')
  return errorResponse(new ApiError(405, 'method_not_allowed', `${request.method} is not allowed on ${path}; it answers ${allow}`), { allow })
}

/** The status of each domain error code (design.md §3). */
const DOMAIN_STATUS: Record<DomainCode, number> = {
  not_found: 404,
  conflict: 409,
  validation: 422,
  not_html: 422,
  parse_error: 500,
}

/**
 * The answer to an error: the one place a domain error gets its status and body. A code of a
 * family of its own (a scrape's target failures, design.md §7) is a failure of the work: a 500
 * that keeps its code.
 */
export function errorResponse(error: ApiError | DomainError<string>, headers?: Record<string, string>): Response {
  if (error instanceof ValidationError) return json(DOMAIN_STATUS.validation, { error: 'validation', fields: error.fields }, headers)
  const status = error instanceof ApiError ? error.status : (DOMAIN_STATUS[error.code as DomainCode] ?? 500)
  return json(status, { error: error.code, message: error.message }, headers)
}
