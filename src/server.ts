import { managementRoutes } from './api'
import type { Deps } from './api/deps'
import { ListenError, type Config } from './config'
import { openCrawlResources } from './crawl/resources'
import type { EngineDeps } from './crawl/execution'
import { Runner } from './crawl/runner'
import { createApp } from './http/app'
import { metricsResponse, serveMetrics } from './http/metrics'
import { countWebhookDelivery, labelTenants, metrics } from './metrics'
import { runGauges } from './runs/gauges'
import { mcpRoutes } from './mcp/http'
import { Scheduler } from './schedule/scheduler'
import type { Logger } from './log'
import type { Fetcher } from './fetch/fetcher'
import type { ParsePool } from './parse/pool'
import { createPaymentGate } from './payment'
import { nativeSignerStatus } from './payment/native'
import { SCRAPE_CORS, scrapeRoutes, type Payments, type ScrapeDeps } from './scrape'
import { TokenBuckets } from './scrape/rate-limit'
import { Scraper } from './scrape/scraper'
import { VERSION } from './version'
import { Deliverer } from './webhooks/deliverer'

/** The management surface over a store (also what API tests drive with app.handle). */
export const managementApp = (deps: Deps) =>
  createApp({
    title: 'trawl management API',
    description: 'Crawl jobs, runs, the host and link catalogue. Every request carries X-Tenant-Id.',
    routes: [...managementRoutes(deps), ...mcpRoutes(deps)],
    log: deps.log,
    maxRequestBytes: deps.config.maxRequestBytes,
    tenant: true,
    dashboard: true,
    surface: 'management',
    // With TRAWL_METRICS_PORT set, /metrics is there and nowhere else (serveMetrics).
    ...(deps.config.metricsPort === null ? { metrics: () => metricsResponse(deps.log) } : {}),
  })

export const scrapeApp = (deps: ScrapeDeps) =>
  createApp({
    title: 'trawl scrape API',
    description: 'One URL in, markdown, html, json or binary out; paid per request with x402.',
    routes: scrapeRoutes(deps),
    log: deps.log,
    maxRequestBytes: SCRAPE_MAX_REQUEST_BYTES,
    tenant: false,
    surface: 'scrape',
    cors: SCRAPE_CORS,
  })

/**
 * What the scrape surface runs on in `trawl serve`: the process's fetcher and parse workers,
 * the payment gate when TRAWL_PAY_TO is set, the rate limit unless TRAWL_SCRAPE_RATE is off.
 * `clientIp` is asked of the listening server once there is one.
 */
export function scrapeDeps(config: Config, log: Logger, parts: { fetcher: Fetcher; parser: ParsePool; payments: Payments | null }, clientIp: (request: Request) => string): ScrapeDeps {
  return {
    scraper: new Scraper({ fetcher: parts.fetcher, parser: parts.parser, config, log }),
    config,
    log,
    payments: parts.payments,
    limiter: config.scrapeRate === null ? null : new TokenBuckets(config.scrapeRate),
    clientIp,
  }
}

const SCRAPE_MAX_REQUEST_BYTES = 1024 * 1024

/**
 * The crawl runner, the trigger scheduler and the webhook deliverer, wired as `trawl serve` runs
 * them: a run a trigger creates starts at once, and a run that ends (or is stopped through the
 * API: `notify`) lets the scheduler make the on_finish firings it recorded and the deliverer send
 * the deliveries the move wrote.
 */
export function createEngines(deps: EngineDeps, maxActiveRuns: number, opts: { allowPrivateNetworks?: boolean } = {}) {
  const runner = new Runner(deps, maxActiveRuns)
  const deliverer = new Deliverer({ store: deps.store.webhooks, log: deps.log, allowPrivate: opts.allowPrivateNetworks ?? false })
  deliverer.onAttempt = countWebhookDelivery
  const scheduler = new Scheduler(deps.store, deps.log, () => {
    runner.notify()
    deliverer.poke()
  })
  runner.onFinish = () => {
    scheduler.notify()
    deliverer.poke()
  }
  return {
    runner,
    scheduler,
    deliverer,
    notify() {
      runner.notify()
      scheduler.notify()
      deliverer.poke()
    },
    start() {
      runner.start()
      scheduler.start()
      deliverer.start()
    },
    /**
     * The scheduler first: nothing new is created while the runner checkpoints its runs. The
     * deliverer's attempts in flight finish and are recorded; what it has not sent stays in the
     * outbox for the next start (or another process).
     */
    async stop() {
      scheduler.stop()
      await Promise.all([runner.stop(), deliverer.stop()])
    },
  }
}

export type Server = { managementUrl: string; scrapeUrl: string; metricsUrl: string | null; stop: () => Promise<void> }

/** Opens the store and starts both HTTP surfaces (`trawl serve`). */
export async function startServer(config: Config, log: Logger): Promise<Server> {
  labelTenants(config.metricsTenants)
  const resources = await openCrawlResources(config, log)
  const { store, parser, fetcher, blobs } = resources
  const engine = createEngines(resources, config.maxActiveRuns, { allowPrivateNetworks: config.allowPrivateNetworks })
  const management = managementApp({ store, config, log, parser, fetcher, blobs, engine })
  const payments = createPaymentGate(config, store.payments, log)
  const scrape = scrapeApp(scrapeDeps(config, log, { fetcher, parser, payments }, (request) => scrape.server?.requestIP(request)?.address ?? 'unknown'))
  // reusePort off: Elysia turns it on, and then a second trawl on the same port starts without
  // error and the two split the traffic. Bun's own body cap sits above ours so that an oversized
  // body gets our JSON 413, not Bun's empty one.
  // development off: on, Bun answers an error that escapes every handler with its HTML page of
  // stack frames and source lines (Elysia turns it on unless NODE_ENV says production).
  // idleTimeout: Bun closes a connection idle this long even while its handler runs, and
  // Elysia's 30 s would cut a paid scrape (up to 120 s, plus a render and a facilitator's
  // answers) after it was charged. The scrape port takes Bun's most, 255 s; the management port,
  // whose fetches may wait 300 s for a target, none (it listens on loopback by default).
  const serveOpts = (port: number, maxRequestBytes: number, idleTimeout: number) => ({
    hostname: config.host,
    port,
    reusePort: false,
    development: false,
    idleTimeout,
    maxRequestBodySize: maxRequestBytes + 1024 * 1024,
  })
  let metricsServer: ReturnType<typeof serveMetrics> | null = null
  try {
    management.listen(serveOpts(config.port, config.maxRequestBytes, 0))
    scrape.listen(serveOpts(config.scrapePort, SCRAPE_MAX_REQUEST_BYTES, 255))
    if (config.metricsPort !== null) metricsServer = serveMetrics(config.host, config.metricsPort, log)
  } catch (err) {
    for (const app of [management, scrape]) if (app.server) await Promise.resolve(app.stop()).catch(() => {})
    await resources.close()
    const ports = [config.port, config.scrapePort, ...(config.metricsPort === null ? [] : [config.metricsPort])].join(', ')
    throw new ListenError(`cannot listen on ${config.host} (ports ${ports}): ${(err as Error).message}`, { cause: err })
  }
  const stopGauges = metrics.collect(runGauges(store))
  const url = (port: number) => `http://${formatHost(config.host)}:${port}`
  const managementUrl = url(management.server!.port!)
  const scrapeUrl = url(scrape.server!.port!)
  const metricsUrl = metricsServer ? `${url(metricsServer.port!)}/metrics` : null
  engine.start()
  log.info(`trawl ${VERSION} serving`, {
    management: managementUrl,
    scrape: scrapeUrl,
    ...(metricsUrl ? { metrics: metricsUrl } : {}),
    scrape_payment: payments ? payments.describe() : 'free',
    ...(payments ? { payment_signatures: nativeSignerStatus() } : {}),
    data_dir: config.dataDir,
    ...(resources.engine === 'postgres' ? { database: resources.where } : {}),
  })
  let stopped: Promise<void> | null = null
  return {
    managementUrl,
    scrapeUrl,
    metricsUrl,
    stop: () =>
      (stopped ??= (async () => {
        // Finish the requests in flight, checkpoint the runs being crawled (their in-flight URLs
        // go back to the queue), then close the store (SQLite's WAL is checkpointed).
        await Promise.all([management.stop(), scrape.stop(), metricsServer?.stop(), engine.stop()])
        stopGauges()
        await resources.close()
      })()),
  }
}

const formatHost = (host: string) => (host.includes(':') ? `[${host}]` : host)
