/**
 * Drives the crawl engine for tests: a management API over a temp data dir (testApi), a Runner on
 * its store, and helpers to create a job with a run, wait for the run to finish and read what it
 * recorded through the API.
 */
import { afterAll, beforeAll } from 'bun:test'
import { Runner } from '../../src/crawl/runner'
import { createLogger } from '../../src/log'
import { testApi, type TestApi } from './api'

export type CrawlEnv = ReturnType<typeof crawlEnv>

export function crawlEnv(maxActive = 4) {
  const api: TestApi = testApi({ TRAWL_ALLOW_PRIVATE_NETWORKS: 'true' })
  const lines: string[] = []
  const log = createLogger('info', (l) => lines.push(l))
  let runner = new Runner({ store: api.store, fetcher: api.fetcher, parser: api.parser, blobs: api.blobs, log }, maxActive)
  runner.start()

  /** Every page of a list endpoint (per_page 100). */
  async function all(path: string, tenant?: string): Promise<any[]> {
    const out: any[] = []
    let page: string | null = null
    for (;;) {
      const sep = path.includes('?') ? '&' : '?'
      const r = await api.get(`${path}${sep}per_page=100${page ? `&page=${encodeURIComponent(page)}` : ''}`, { tenant })
      if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text.slice(0, 300)}`)
      out.push(...r.body.data)
      page = r.body.next_page
      if (!page) return out
    }
  }

  return {
    api,
    lines,
    get runner() {
      return runner
    },
    /** Creates a job with a run of this config; answers the run id. */
    async start(config: Record<string, unknown>, opts: { tenant?: string; name?: string } = {}): Promise<string> {
      const r = await api.post('/v1/jobs?create_run=true', { name: opts.name ?? 'crawl', config }, { tenant: opts.tenant })
      if (r.status !== 201) throw new Error(`POST /v1/jobs: ${r.status} ${r.text.slice(0, 500)}`)
      runner.notify()
      return r.body.run.id as string
    },
    async run(id: string, tenant?: string) {
      const r = await api.get(`/v1/runs/${id}`, { tenant })
      if (r.status !== 200) throw new Error(`GET run: ${r.status} ${r.text}`)
      return r.body
    },
    /** Polls until the run is finished; throws after `timeoutMs`. */
    async finished(id: string, timeoutMs = 15_000, tenant?: string) {
      const t0 = Date.now()
      for (;;) {
        const run = await this.run(id, tenant)
        if (run.status === 'finished') return run
        if (Date.now() - t0 > timeoutMs) throw new Error(`run ${id} did not finish within ${timeoutMs} ms: ${JSON.stringify(run.stats)} ${run.status}\n${lines.slice(-5).join('\n')}`)
        await Bun.sleep(50)
      }
    },
    /** Polls until `check(run)` holds. */
    async until(id: string, check: (run: any) => boolean, timeoutMs = 10_000, tenant?: string) {
      const t0 = Date.now()
      for (;;) {
        const run = await this.run(id, tenant)
        if (check(run)) return run
        if (Date.now() - t0 > timeoutMs) throw new Error(`run ${id}: condition not met within ${timeoutMs} ms: ${JSON.stringify(run)}`)
        await Bun.sleep(25)
      }
    },
    /** Crawls and waits: answers the finished run. */
    async crawl(config: Record<string, unknown>, opts: { tenant?: string; timeoutMs?: number } = {}) {
      const id = await this.start(config, opts)
      return this.finished(id, opts.timeoutMs, opts.tenant)
    },
    all,
    visits: (id: string, tenant?: string) => all(`/v1/runs/${id}/links`, tenant),
    edges: (id: string, tenant?: string) => all(`/v1/runs/${id}/edges`, tenant),
    logs: (id: string, query = '', tenant?: string) => all(`/v1/runs/${id}/logs${query ? `?${query}` : ''}`, tenant),
    artifacts: (id: string, query = '', tenant?: string) => all(`/v1/artifacts?run_ids=${id}${query ? `&${query}` : ''}`, tenant),
    /** Replaces the runner (a process restart): the old one shuts down first. */
    async restart(max = maxActive) {
      await runner.stop()
      runner = new Runner({ store: api.store, fetcher: api.fetcher, parser: api.parser, blobs: api.blobs, log }, max)
      runner.start()
      // A process's start-up sweep runs beside its runs; a test reads after it, as it did when the sweep was synchronous.
      await runner.swept()
    },
    async close() {
      await runner.stop()
      api.close()
    },
  }
}

/** The path (with query) of an absolute URL. */
export const pathOf = (url: string) => {
  const u = new URL(url)
  return u.pathname + u.search
}

/**
 * One crawl environment for a test file: made before its tests, closed after them. The answer
 * stands for the environment of the moment, so a file can use it at its top level.
 */
export function useCrawlEnv(maxActive = 4): CrawlEnv {
  let current: CrawlEnv | null = null
  beforeAll(() => {
    current = crawlEnv(maxActive)
  })
  afterAll(async () => {
    await current?.close()
  })
  return new Proxy({} as CrawlEnv, { get: (_, key) => (current as unknown as Record<PropertyKey, unknown>)[key] })
}
