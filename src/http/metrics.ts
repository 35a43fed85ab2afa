import type { Logger } from '../log'
import { metrics } from '../metrics'
import { EXPOSITION_TYPE } from '../metrics/registry'
import { ApiError } from './errors'
import { errorResponse } from './app'

/**
 * GET /metrics (docs/metrics.md): the process's metrics in the Prometheus text format, no tenant
 * needed. A collector that failed (the database away) is logged and its gauges keep their last
 * values; the counters are still worth a scrape.
 */
export async function metricsResponse(log: Logger): Promise<Response> {
  const text = await metrics.expose((err) => log.warn('a metrics collector failed', { error: String(err) }))
  return new Response(text, { headers: { 'content-type': EXPOSITION_TYPE } })
}

/** /metrics on a port of its own (TRAWL_METRICS_PORT): that path and nothing else. */
export function serveMetrics(hostname: string, port: number, log: Logger) {
  return Bun.serve({
    hostname,
    port,
    reusePort: false,
    development: false,
    fetch(request) {
      const path = URL.parse(request.url)?.pathname
      if (path === '/metrics' && (request.method === 'GET' || request.method === 'HEAD')) return metricsResponse(log)
      return errorResponse(new ApiError(404, 'not_found', `no route for ${request.method} ${path ?? request.url}; this port serves GET /metrics`))
    },
  })
}
