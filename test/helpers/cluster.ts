/**
 * N compiled `trawl serve` processes sharing one store, for the cluster tests and the cluster
 * benchmark: one PostgreSQL database (test/helpers/postgres.ts) and one S3-compatible server
 * (test/helpers/s3-server.ts, one bucket and prefix for all), each process with its own data dir
 * and ports, fetching private addresses allowed (TRAWL_ALLOW_PRIVATE_NETWORKS). The processes are
 * started by test/helpers/binary.ts (which `cleanup()` ends); build the binary first
 * (`bun run build`, or TRAWL_BINARY=path).
 *
 * `store: 'sqlite'` starts the processes without TRAWL_DATABASE_URL, each on the SQLite database
 * of its own data dir (no sharing): a baseline, and what the harness is checked on alone.
 *
 * The processes are named n0, n1, …; `identify` tells a fixture server which of them sent a
 * request (multi-host-site.ts, socketOwner).
 */
import { SQL } from 'bun'
import { ensureBinary, startTrawl, tempDir, type Trawl } from './binary'
import { socketOwner } from './multi-host-site'
import { freshDatabase } from './postgres'
import { startS3Server, type S3TestServer } from './s3-server'
import type { CallOptions } from './client'

export type ClusterOptions = {
  /** How many processes (default 3). */
  processes?: number
  /** 'postgres' (default): one database for all; 'sqlite': each on its own data dir. */
  store?: 'postgres' | 'sqlite'
  /** TRAWL_* settings of every process, over the harness's own. */
  env?: Record<string, string>
  /** Settings of process i alone, over `env`. */
  envOf?: (i: number) => Record<string, string>
  /** A database to use instead of a fresh one. */
  databaseUrl?: string
  /** An S3 server to use instead of starting one (it is then not stopped with the cluster). */
  s3?: S3TestServer
}

export type Node = { name: string; index: number; trawl: Trawl; env: Record<string, string>; alive: boolean }

/** Settings every process of a test cluster gets: private addresses, no scrape rate limit, no browser. */
export const BASE_ENV = { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RATE: 'off', TRAWL_SCRAPE_RENDER: 'never' }

/** A job config crawling a multi-host site whole (any host, deep), with these politeness settings. */
export const wholeSite = (seed: string, politeness: Record<string, unknown>) => ({ seeds: [seed], scope: { domains: 'any' }, limits: { max_depth: 1000, max_urls: 100_000 }, politeness })

export type Cluster = Awaited<ReturnType<typeof startCluster>>

export async function startCluster(opts: ClusterOptions = {}) {
  await ensureBinary()
  const n = opts.processes ?? 3
  const postgres = (opts.store ?? 'postgres') === 'postgres'
  const ownS3 = postgres && !opts.s3
  const s3 = postgres ? (opts.s3 ?? (await startS3Server())) : null
  const databaseUrl = postgres ? (opts.databaseUrl ?? freshDatabase()) : null
  const shared: Record<string, string> = { ...BASE_ENV, ...(postgres ? { TRAWL_DATABASE_URL: databaseUrl!, ...s3!.env('cluster') } : {}), ...opts.env }

  const nodes: Node[] = []
  const envOf = (i: number) => ({ ...shared, ...opts.envOf?.(i) })
  const started = await Promise.allSettled(Array.from({ length: n }, (_, i) => startTrawl({ env: envOf(i), dataDir: tempDir() })))
  for (const [i, s] of started.entries()) if (s.status === 'fulfilled') nodes.push({ name: `n${i}`, index: i, trawl: s.value, env: envOf(i), alive: true })
  const failed = started.find((s) => s.status === 'rejected')
  if (failed) {
    await Promise.all(nodes.map((x) => x.trawl.kill9()))
    if (ownS3) await s3!.stop()
    throw (failed as PromiseRejectedResult).reason
  }

  let db: SQL | null = null
  const identify = socketOwner(() => Object.fromEntries(nodes.filter((x) => x.alive).map((x) => [x.name, x.trawl.pid])))
  const liveNode = (via?: number): Node => {
    const node = via === undefined ? nodes.find((x) => x.alive) : nodes[via]
    if (!node || !node.alive) throw new Error(via === undefined ? 'no process of the cluster is alive' : `process n${via} is not alive`)
    return node
  }
  const api = (via?: number) => liveNode(via).trawl.api
  const ok = (what: string, r: { status: number; text: string }, status = 200) => {
    if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 500)}`)
  }

  /** Every page of a list (per_page 100) through process `via` (the first alive by default). */
  async function all(path: string, via?: number, opts: CallOptions = {}): Promise<any[]> {
    const out: any[] = []
    let page: string | null = null
    for (;;) {
      const sep = path.includes('?') ? '&' : '?'
      const r = await api(via).get(`${path}${sep}per_page=100${page ? `&page=${encodeURIComponent(page)}` : ''}`, opts)
      ok(`GET ${path}`, r)
      out.push(...r.body.data)
      page = r.body.next_page
      if (!page) return out
    }
  }

  async function run(id: string, via?: number) {
    const r = await api(via).get(`/v1/runs/${id}`)
    ok(`GET /v1/runs/${id}`, r)
    return r.body
  }

  /** Polls (through `via`, or the first process alive) until `check(run)` holds. */
  async function until(id: string, check: (run: any) => boolean, what: string, timeoutMs = 30_000, via?: number) {
    const deadline = Date.now() + timeoutMs
    let last: any = null
    for (;;) {
      last = await run(id, via)
      if (check(last)) return last
      if (Date.now() > deadline) {
        const tails = nodes.map((x) => `--- ${x.name}${x.alive ? '' : ' (dead)'}:\n${x.trawl.stderr().split('\n').slice(-8).join('\n')}`).join('\n')
        throw new Error(`run ${id}: ${what} not within ${timeoutMs} ms; last: ${last.status} ${JSON.stringify(last.stats)} stop_reason=${last.stop_reason}\n${tails}`)
      }
      await Bun.sleep(50)
    }
  }

  const move = async (id: string, to: 'pause' | 'resume' | 'stop', via?: number) => {
    const r = await api(via).put(`/v1/runs/${id}/${to}`)
    ok(`PUT /v1/runs/${id}/${to}`, r)
    return r.body
  }

  return {
    nodes,
    databaseUrl,
    s3,
    /** The management API of process `via` (default: the first alive). */
    api,
    /** The scrape API's base URL of each process. */
    scrapeUrls: () => nodes.map((x) => x.trawl.scrapeUrl),
    /** Names the process that owns a client socket; pass as `identify` to multiHostSite. */
    identify,
    all,
    /** Creates a job (and its first run, unless `run: false`) through process `via`. */
    async createJob(config: Record<string, unknown>, o: { via?: number; name?: string; run?: boolean } = {}): Promise<{ jobId: string; runId: string | null }> {
      const r = await api(o.via).post(`/v1/jobs${o.run === false ? '' : '?create_run=true'}`, { name: o.name ?? 'cluster crawl', config })
      ok('POST /v1/jobs', r, 201)
      return { jobId: r.body.id, runId: r.body.run?.id ?? null }
    },
    run,
    until,
    finished: (id: string, timeoutMs = 30_000, via?: number) => until(id, (r) => r.status === 'finished', 'finished', timeoutMs, via),
    pause: (id: string, via?: number) => move(id, 'pause', via),
    resume: (id: string, via?: number) => move(id, 'resume', via),
    stop: (id: string, via?: number) => move(id, 'stop', via),
    /** Every crawl log entry of a run (`query`: the list's filters, `statuses=retried&…`), newest first. */
    logs: (id: string, query = '', via?: number) => all(`/v1/runs/${id}/logs${query ? `?${query}` : ''}`, via),
    /** Every visited link of a run, in visit order. */
    visits: (id: string, via?: number) => all(`/v1/runs/${id}/links`, via),
    /** kill -9 of process i; answers its exit. */
    async kill9(i: number) {
      const node = nodes[i]!
      node.alive = false
      return node.trawl.kill9()
    },
    /** Starts process i again on its data dir and settings (new ports). */
    async restart(i: number) {
      const node = nodes[i]!
      if (node.alive) throw new Error(`${node.name} is alive`)
      node.trawl = await startTrawl({ env: node.env, dataDir: node.trawl.dataDir })
      node.alive = true
    },
    /** What each process wrote to stderr (its log lines), by name. */
    logLines: () => Object.fromEntries(nodes.map((x) => [x.name, x.trawl.stderr()])),
    /** A client on the shared database, to look at what the API does not show (closed with the cluster). */
    sql(): SQL {
      if (!databaseUrl) throw new Error('a SQLite cluster has no shared database')
      return (db ??= new SQL(databaseUrl, { max: 2 }))
    },
    /** SIGTERM to every process alive; answers their exits by name. Stops the S3 server the cluster started. */
    async close(): Promise<Record<string, { code: number | null; signal: string | number | null }>> {
      const exits = await Promise.all(nodes.map(async (x) => [x.name, x.alive ? await x.trawl.stop() : null] as const))
      for (const x of nodes) x.alive = false
      identify.close()
      await db?.close()
      if (ownS3) await s3!.stop()
      return Object.fromEntries(exits.filter(([, e]) => e !== null)) as Record<string, { code: number | null; signal: string | number | null }>
    },
  }
}
