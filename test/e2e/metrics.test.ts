// End-to-end: GET /metrics of the binary (docs/metrics.md). During a crawl its text passes
// `promtool check metrics`; after the run the page and byte counters equal the run's own
// counters, the runs gauge shows it finished, and the HTTP counters hold the calls made here under
// their route templates. With TRAWL_METRICS_PORT, /metrics is on that port and a 404 on the
// management port; TRAWL_METRICS_TENANTS adds a tenant label, which is absent otherwise.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cleanup, ensureBinary, freePorts, startTrawl, type Trawl } from '../helpers/binary'
import { createRun, finished, OPEN, site, stopSites, waitFor, WHOLE } from '../helpers/e2e-crawl'
import { promtoolCheck, samples, valueOf } from '../helpers/promtool'

let plain: Trawl
let own: Trawl
let metricsPort: number

beforeAll(async () => {
  await ensureBinary()
  metricsPort = freePorts(1)[0]!
  ;[plain, own] = await Promise.all([startTrawl({ env: OPEN }), startTrawl({ env: { ...OPEN, TRAWL_METRICS_PORT: String(metricsPort), TRAWL_METRICS_TENANTS: 'true' } })])
}, 120_000)

afterAll(async () => {
  stopSites()
  await cleanup()
})

const scrapeMetrics = async (url: string) => {
  const r = await fetch(url)
  expect(r.status).toBe(200)
  expect(r.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
  return r.text()
}

/** A port nothing listens on: a seed there fails to connect. */
async function closedPort(): Promise<number> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
  const port = probe.port!
  await probe.stop(true)
  return port
}

describe('GET /metrics on the management port', () => {
  test('during a crawl it passes promtool; after it, the page and byte counters are the run’s own, and the run shows finished', async () => {
    const s = site(40, 25)
    const refused = `http://127.0.0.1:${await closedPort()}/gone`
    const runId = await createRun(plain.api, s.url(0), { ...WHOLE(2), seeds: [s.url(0), refused] })
    const url = `${plain.managementUrl}/metrics`
    const during = await waitFor('a page counted while the run is running', async () => {
      const text = await scrapeMetrics(url)
      return valueOf(text, 'trawl_pages_total', { outcome: 'visited' }) > 0 && valueOf(text, 'trawl_runs', { status: 'running' }) === 1 ? text : null
    })
    expect(await promtoolCheck(during)).toEqual({ code: 0, output: '' })

    const run = await finished(plain.api, runId)
    expect(run.stats.failed).toBe(1)
    expect(run.stats.visited).toBe(40)
    const after = await scrapeMetrics(url)
    expect(await promtoolCheck(after)).toEqual({ code: 0, output: '' })
    expect({
      visited: valueOf(after, 'trawl_pages_total', { outcome: 'visited' }),
      failed: valueOf(after, 'trawl_pages_total', { outcome: 'failed' }),
      bytes: valueOf(after, 'trawl_fetched_bytes_total'),
    }).toEqual({ visited: run.stats.visited, failed: run.stats.failed, bytes: run.stats.bytes })
    expect(run.stats.bytes).toBeGreaterThan(40 * 100)
    expect(['pending', 'running', 'paused', 'finished'].map((status) => valueOf(after, 'trawl_runs', { status }))).toEqual([0, 0, 0, 1])
    expect(valueOf(after, 'trawl_frontier_urls')).toBe(0)
    // Every visited page was fetched once and timed; the refused seed's fetch too.
    expect(valueOf(after, 'trawl_crawl_step_duration_seconds_count', { step: 'fetch' })).toBeGreaterThanOrEqual(40)
    expect(valueOf(after, 'trawl_crawl_step_duration_seconds_count', { step: 'parse' })).toBe(40)
    // TRAWL_METRICS_TENANTS is off: no tenant label anywhere.
    expect(after).not.toContain('tenant=')
    expect(samples(after).some((x) => x.name === 'process_resident_memory_bytes' && x.value > 0)).toBe(true)
  }, 30_000)

  test('HTTP requests are counted by surface, method, route template (never the path) and status', async () => {
    const s = site(3, 0)
    const url = `${plain.managementUrl}/metrics`
    const before = await scrapeMetrics(url)
    const id = crypto.randomUUID()
    for (let i = 0; i < 3; i++) expect((await plain.api.get(`/v1/runs/${id}`)).status).toBe(404)
    expect((await plain.api.get('/v1/no-such-thing')).status).toBe(404)
    expect((await plain.api.get('/v1/jobs', { tenant: null })).status).toBe(400)
    const scraped = await fetch(`${plain.scrapeUrl}/v1/scrape/${s.url(1)}`)
    expect(scraped.status).toBe(200)
    // A request is counted once its answer is out: the last one's count may trail its answer a moment.
    const scraped1 = { surface: 'scrape', method: 'GET', route: '/v1/scrape/*', status: '200' }
    const after = await waitFor('the scrape counted', async () => {
      const text = await scrapeMetrics(url)
      return valueOf(text, 'trawl_http_requests_total', scraped1) > valueOf(before, 'trawl_http_requests_total', scraped1) ? text : null
    })
    const delta = (labels: Record<string, string>) => valueOf(after, 'trawl_http_requests_total', labels) - valueOf(before, 'trawl_http_requests_total', labels)
    expect(delta({ surface: 'management', method: 'GET', route: '/v1/runs/:run_id', status: '404' })).toBe(3)
    expect(delta({ surface: 'management', method: 'GET', route: 'unmatched', status: '404' })).toBe(1)
    expect(delta({ surface: 'management', method: 'GET', route: '/v1/jobs', status: '400' })).toBe(1)
    expect(delta(scraped1)).toBe(1)
    // The scrape of `before`, once its answer was out (and any poll of `after` before the last).
    expect(delta({ surface: 'management', method: 'GET', route: '/metrics', status: '200' })).toBeGreaterThanOrEqual(1)
    expect(valueOf(after, 'trawl_scrapes_total', { payment: 'free', result: 'ok' }) - valueOf(before, 'trawl_scrapes_total', { payment: 'free', result: 'ok' })).toBe(1)
    expect(
      valueOf(after, 'trawl_http_request_duration_seconds_count', { surface: 'management', route: '/v1/runs/:run_id' }) -
        valueOf(before, 'trawl_http_request_duration_seconds_count', { surface: 'management', route: '/v1/runs/:run_id' }),
    ).toBe(3)
    expect(after).not.toContain(id)
    // /metrics is not a tenant route of the OpenAPI document.
    const doc = await plain.api.get('/openapi.json', { tenant: null })
    expect(Object.keys(doc.body.paths)).not.toContain('/metrics')
  })
})

describe('TRAWL_METRICS_PORT and TRAWL_METRICS_TENANTS', () => {
  test('/metrics is on its own port, named in the start-up line, and a 404 on the management port', async () => {
    expect(own.stdout()).toContain(`, metrics http://127.0.0.1:${metricsPort}/metrics (`)
    const text = await scrapeMetrics(`http://127.0.0.1:${metricsPort}/metrics`)
    expect(await promtoolCheck(text)).toEqual({ code: 0, output: '' })
    const onManagement = await own.api.get('/metrics', { tenant: null })
    expect(onManagement.status).toBe(404)
    expect(onManagement.body.error).toBe('not_found')
    const elsewhere = await fetch(`http://127.0.0.1:${metricsPort}/v1/jobs`)
    expect(elsewhere.status).toBe(404)
    expect(((await elsewhere.json()) as { error: string }).error).toBe('not_found')
  })

  test('with tenant labels on, the pages and runs metrics name their tenant', async () => {
    const s = site(5, 0)
    const runId = await createRun(own.api, s.url(0), WHOLE(2), 'tenant-a')
    const run = await finished(own.api, runId, 30_000, 'tenant-a')
    const text = await scrapeMetrics(`http://127.0.0.1:${metricsPort}/metrics`)
    expect(valueOf(text, 'trawl_pages_total', { tenant: 'tenant-a', outcome: 'visited' })).toBe(run.stats.visited)
    expect(valueOf(text, 'trawl_fetched_bytes_total', { tenant: 'tenant-a' })).toBe(run.stats.bytes)
    expect(valueOf(text, 'trawl_runs', { tenant: 'tenant-a', status: 'finished' })).toBe(1)
    expect(samples(text).filter((x) => x.name === 'trawl_runs' && x.labels.tenant === undefined)).toEqual([])
    expect(samples(text).filter((x) => x.name === 'trawl_http_requests_total' && 'tenant' in x.labels)).toEqual([])
  })
})
