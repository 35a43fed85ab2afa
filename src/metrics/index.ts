import { Registry, type CounterChild } from './registry'
import { processMetrics } from './process'

/**
 * The process's metrics (docs/metrics.md): one registry, and every metric trawl exposes, made
 * here so that their names and labels are in one place. The layers that count resolve the
 * children they need once and keep them.
 */
export const metrics = new Registry()

/** Seconds: from a millisecond to a minute (a step of a page, an HTTP request). */
export const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const

let tenantLabels = false

/** TRAWL_METRICS_TENANTS: whether the pages and runs metrics name their tenant (set once, at start). */
export function labelTenants(on: boolean): void {
  tenantLabels = on
  // Without tenants the page counters are one set, shown at 0 before the first crawl.
  if (!on) pageCounters('')
}

/** The value of a `tenant` label: the tenant, or `''` (left out of the exposition) unless TRAWL_METRICS_TENANTS is on. */
export const tenantLabel = (tenant: string) => (tenantLabels ? tenant : '')

// ------------------------------------------------------------------ crawling

export const pages = metrics.counter('trawl_pages_total', "URLs the crawl finished with, by outcome: visited and failed as the run's own counters count them, disallowed by robots.txt.", [
  'tenant',
  'outcome',
])
export const fetchedBytes = metrics.counter('trawl_fetched_bytes_total', "Bytes of the bodies the crawl fetched, as the run's bytes counter counts them.", ['tenant'])
export const stepSeconds = metrics.histogram(
  'trawl_crawl_step_duration_seconds',
  "Time a page's crawl step took (fetch, parse, store), as the crawl log's latency measures it.",
  ['step'],
  SECONDS_BUCKETS,
)

/** A run's page counters, resolved once for its tenant. */
export type PageCounters = { visited: CounterChild; failed: CounterChild; disallowed: CounterChild; bytes: CounterChild }
export const pageCounters = (tenant: string): PageCounters => {
  const t = tenantLabel(tenant)
  return { visited: pages.labels(t, 'visited'), failed: pages.labels(t, 'failed'), disallowed: pages.labels(t, 'disallowed'), bytes: fetchedBytes.labels(t) }
}

export const runs = metrics.gauge('trawl_runs', 'Runs in the store by status, over every tenant; read from the database at each scrape.', ['tenant', 'status'])
export const frontier = metrics.gauge('trawl_frontier_urls', 'URLs queued in runs not finished; read from the database at each scrape.', ['tenant'])

// ------------------------------------------------------------------ HTTP

export const httpRequests = metrics.counter('trawl_http_requests_total', 'HTTP requests answered, by surface, method, route template and status.', ['surface', 'method', 'route', 'status'])
export const httpSeconds = metrics.histogram(
  'trawl_http_request_duration_seconds',
  'Time from a request to its answer, by surface, method and route template.',
  ['surface', 'method', 'route'],
  SECONDS_BUCKETS,
)

// ------------------------------------------------------------------ scrape API and payments

export const scrapes = metrics.counter('trawl_scrapes_total', 'Scrape requests past validation, by payment (free or paid) and result.', ['payment', 'result'])
export const payments = metrics.counter('trawl_payments_total', 'x402 payments by what became of them: accepted into the ledger, then served, handler_failed, settled or settle_failed.', ['outcome'])
export const paymentRefusals = metrics.counter('trawl_payment_refusals_total', 'Scrape requests answered 402, by reason (payment_required when none was sent).', ['reason'])

// ------------------------------------------------------------------ triggers, webhooks

export const triggerFirings = metrics.counter('trawl_trigger_firings_total', 'Trigger firings by kind (schedule, on_finish) and outcome (created_run, skipped, deferred, failed).', ['kind', 'outcome'])

export const WEBHOOK_OUTCOMES = ['delivered', 'failed_attempt', 'gave_up'] as const
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number]
export const webhookDeliveries = metrics.counter('trawl_webhook_deliveries_total', 'Webhook delivery attempts by outcome: delivered, failed_attempt (to be retried), gave_up.', ['outcome'])
const webhookChildren = Object.fromEntries(WEBHOOK_OUTCOMES.map((o) => [o, webhookDeliveries.labels(o)])) as Record<WebhookOutcome, CounterChild>
/** Counts one webhook delivery attempt's outcome. */
export const countWebhookDelivery = (outcome: WebhookOutcome) => webhookChildren[outcome].inc()

// ------------------------------------------------------------------ failures

export const storeErrors = metrics.counter('trawl_store_errors_total', 'Store calls that failed (not a not-found, conflict or validation answer), by operation.', ['operation'])
export const blobErrors = metrics.counter('trawl_blob_errors_total', 'Blob store calls that failed, by operation (put, get, head, delete, list).', ['operation'])

processMetrics(metrics)
