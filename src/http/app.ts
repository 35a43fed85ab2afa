import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import type { Logger } from '../log'
import { VERSION } from '../version'
import { DOCS_ASSETS } from './docs-assets'
import { ApiError, payloadTooLarge, ValidationError } from './errors'
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
}

/**
 * One HTTP surface: JSON parsing, the single error mapping (DESIGN §3), the OpenAPI document
 * at /openapi.json and its docs page at /docs, and the routes.
 */
export function createApp(opts: AppOptions) {
  const refs: References = {}
  const app = new Elysia()
    .onRequest(({ request }) => {
      const length = Number(request.headers.get('content-length') ?? 0)
      if (length > opts.maxRequestBytes) return errorResponse(payloadTooLarge(opts.maxRequestBytes))
    })
    // Bodies are read as text and parsed here whatever the Content-Type, so a malformed body
    // is our 422 on `body`, never a plain-text 400.
    .onParse(async ({ request }) => {
      const text = await request.text()
      if (text.length > opts.maxRequestBytes) throw payloadTooLarge(opts.maxRequestBytes)
      if (text.trim() === '') return null
      try {
        return JSON.parse(text)
      } catch (err) {
        throw ValidationError.of('body', `is not valid JSON: ${(err as Error).message}`)
      }
    })
    .onError(({ code, error, request }) => {
      if (opts.tenant && (error instanceof ValidationError || code === 'PARSE') && new URL(request.url).pathname.startsWith('/v1/')) {
        try {
          tenantOf(request) // tenant is checked before validation, even when the body did not parse
        } catch (tenantError) {
          return errorResponse(tenantError as ApiError)
        }
      }
      if (error instanceof ApiError) return errorResponse(error)
      if (code === 'NOT_FOUND') {
        const url = new URL(request.url)
        return errorResponse(new ApiError(404, 'not_found', `no route for ${request.method} ${url.pathname}`))
      }
      if (code === 'PARSE') return errorResponse(ValidationError.of('body', 'is not valid JSON'))
      opts.log.error('unhandled error', { method: request.method, url: request.url, error: String((error as Error)?.stack ?? error) })
      return errorResponse(new ApiError(500, 'internal', 'internal error'))
    })
    .use(
      openapi({
        path: '/docs',
        specPath: '/openapi.json',
        provider: 'swagger-ui',
        swagger: { cdn: '/docs/assets/swagger-ui-bundle.js', theme: '/docs/assets/swagger-ui.css', autoDarkMode: false } as never,
        documentation: { info: { title: opts.title, version: VERSION, description: opts.description } },
        exclude: { paths: ['/docs/assets/:file'] },
        references: () => refs as never,
      }),
    )
    .get('/docs/assets/:file', ({ params }) => {
      const asset = DOCS_ASSETS[params.file]
      if (!asset) return errorResponse(new ApiError(404, 'not_found', 'no such asset'))
      return new Response(Bun.file(asset.path), { headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' } })
    }, { detail: { hide: true } })
  mount(app as unknown as Elysia, opts.routes, refs)
  return app
}

export function errorResponse(error: ApiError): Response {
  return json(error.status, error.body())
}
