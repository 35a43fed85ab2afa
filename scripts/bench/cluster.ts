#!/usr/bin/env bun
// Benchmark of a trawl cluster (not a test): N `trawl serve` processes sharing one PostgreSQL
// database and one S3 bucket crawl one run together (decision 112). Two measures, printed with
// their targets; exits 0 whatever the numbers, non-zero on a crash.
//
//   bun scripts/bench/cluster.ts [--hosts 50] [--pages-per-host 40] [--delay-ms 50] [--links 4]
//                                [--concurrency 8] [--per-host 2] [--processes 3] [--rounds 2]
//                                [--links-total 100000] [--requests 300] [--per-page 100]
//                                [--only crawl,links] [--no-bodies] [--sqlite] [--binary dist/trawl] [--json PATH]
//
// 1. Crawl throughput. The site is test/helpers/multi-host-site.ts in this process: `hosts`
//    loopback addresses (127.0.0.10 …) on one port, `pages-per-host` pages each, every page
//    answering after `delay-ms` (50 ms), linking to `links` pages on other hosts plus two more.
//    It is crawled by 1 process and by `processes` (3), at the same per-process `concurrency`
//    and `per-host` limit, each crawl on a fresh database with the processes already up. The
//    two take turns `rounds` times (1, 3, 1, 3, …), since this VM's speed drifts from minute to
//    minute; each round's ratio is N processes' pages/s over the single process's of the same
//    round, and the verdict takes their median. pages/s is the run's pages over the wall time
//    from the job's creation to the run's finish as the API reports it (polled every 50 ms);
//    the site's own span (first page request to last answer) is shown beside it, and the CPU
//    milliseconds a page cost over the crawl by who spent them: the trawl processes, PostgreSQL
//    (every backend), s3rver, and this script (the site and the polling), read from /proc,
//    since on one machine they all share its cores. Duplicate
//    fetches are what the site counted: fetches of a page beyond its first. Targets: N processes
//    at least 2.5x the pages/s of one, and 0 duplicates. With `--no-bodies` the runs store no
//    artifacts (`store.raw` and `store.parsed` false), to see what S3 costs. `--sqlite` adds a
//    third crawl to each round, one process on SQLite (no shared mode, bodies on its disk): what
//    the engine does on the same site when one process holds the run whole.
//
// 2. List latency. One process on a fresh database; `links-total` links (100,000) put through the
//    API (`PUT /v1/links`, 255 a request, 4 at once) on 100 hosts; then `requests` (300)
//    `GET /v1/links?per_page=P` in sequence, half of them first pages, half walking the keyset
//    pages (`page=<next_page>`) from the first; p50 and p99 of each and of all, timed by the
//    client (HTTP included). Target: p99 under 20 ms.
//
// Needs what the cluster tests need: PostgreSQL's server (initdb, pg_ctl: Debian's postgresql),
// node for s3rver, and the binary (`bun run build`). The database cluster and s3rver are
// throwaway ones this script starts (test/helpers/postgres.ts, s3-server.ts) and stops.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { cpuByGroup } from './proc'

const ROOT = join(import.meta.dir, '..', '..')

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '50' },
    'pages-per-host': { type: 'string', default: '40' },
    'delay-ms': { type: 'string', default: '50' },
    links: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '8' },
    'per-host': { type: 'string', default: '2' },
    processes: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '2' },
    'links-total': { type: 'string', default: '100000' },
    requests: { type: 'string', default: '300' },
    'per-page': { type: 'string', default: '100' },
    only: { type: 'string', default: 'crawl,links' },
    'no-bodies': { type: 'boolean', default: false },
    sqlite: { type: 'boolean', default: false },
    binary: { type: 'string', default: join(ROOT, 'dist', 'trawl') },
    timeout: { type: 'string', default: '300' },
    json: { type: 'string' },
  },
})
const int = (name: keyof typeof values, min = 1) => {
  const n = Number(values[name])
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: a whole number of at least ${min}`)
  return n
}
const hosts = int('hosts')
const pagesPerHost = int('pages-per-host')
const delayMs = int('delay-ms', 0)
const links = int('links')
const concurrency = int('concurrency')
const perHost = int('per-host')
const processes = int('processes', 2)
const rounds = int('rounds')
const linksTotal = int('links-total')
const requests = int('requests', 2)
const perPage = int('per-page')
const timeoutMs = int('timeout') * 1000
const only = new Set(values.only!.split(',').map((s) => s.trim()))
for (const o of only) if (o !== 'crawl' && o !== 'links') throw new Error(`--only: crawl or links, got "${o}"`)
if (!existsSync(values.binary!)) throw new Error(`no binary at ${values.binary}: run \`bun run build\` first`)

// A private copy of the binary, so a rebuild of dist/ during the run does not pull it away; the
// harness reads TRAWL_BINARY when it is imported.
const work = mkdtempSync(join(tmpdir(), 'trawl-bench-cluster-'))
copyFileSync(values.binary!, join(work, 'trawl'))
process.env.TRAWL_BINARY = join(work, 'trawl')
const { cleanup } = await import('../../test/helpers/binary')
const { startCluster } = await import('../../test/helpers/cluster')
const { multiHostSite } = await import('../../test/helpers/multi-host-site')
const { clusterPort, freshDatabase } = await import('../../test/helpers/postgres')
const { startS3Server } = await import('../../test/helpers/s3-server')

const f0 = (n: number) => n.toFixed(0)
const f1 = (n: number) => n.toFixed(1)
const f2 = (n: number) => n.toFixed(2)
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
/** CPU milliseconds a page, by who spent them, and in all. */
const cpuPerPage = (c: { cpu: Record<string, number>; pages: number }) => {
  const ms = (s: number) => f2((s * 1000) / Math.max(1, c.pages))
  const total = Object.values(c.cpu).reduce((a, b) => a + b, 0)
  return `${Object.entries(c.cpu)
    .map(([k, v]) => `${k} ${ms(v)}`)
    .join(', ')}; all ${ms(total)}`
}
/** Nearest-rank percentile. */
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)]!
}

type Crawl = {
  engine: 'postgres' | 'sqlite'
  processes: number
  round: number
  pages: number
  expected: number
  seconds: number
  pagesPerSec: number
  siteSeconds: number
  duplicates: number
  unfetched: number
  maxInFlightPerHost: number
  byProcess: Record<string, number>
  outcome: string
  /** CPU seconds over the crawl by who spent them: the trawl processes, PostgreSQL (every
   * backend), s3rver, and this script (the site and the polling). */
  cpu: Record<string, number>
  /** When pages were missed: what the run logged and the processes' last log lines, as evidence. */
  evidence?: string
}

const report: Record<string, unknown> = { cores: cpus().length, loadavgBefore: loadavg(), hosts, pagesPerHost, delayMs, links, concurrency, perHost, processes, bodies: !values['no-bodies'] }
const s3 = await startS3Server()
try {
  const load = loadavg()[0]!
  console.log(`cluster bench: ${cpus().length} cores, load average ${f2(load)}${load > 1 ? ' (the machine is busy: numbers will be low and noisy)' : ''}`)
  clusterPort() // PostgreSQL starts here, outside any timing

  if (only.has('crawl')) {
    const expected = hosts * pagesPerHost
    console.log(
      `\ncrawl: ${expected} pages on ${hosts} hosts, ${delayMs} ms an answer, ${links}+2 links a page; per process concurrency ${concurrency}, per_host_concurrency ${perHost}; ${rounds} round(s) of 1 then ${processes} processes${values['no-bodies'] ? '; no bodies stored' : ''}`,
    )
    const crawls: Crawl[] = []
    for (let round = 1; round <= rounds; round++) {
      const plan: [number, 'postgres' | 'sqlite'][] = [[1, 'postgres'], [processes, 'postgres'], ...(values.sqlite ? [[1, 'sqlite'] as [number, 'sqlite']] : [])]
      for (const [n, engine] of plan) {
        const c = await crawl(n, round, expected, engine)
        crawls.push(c)
        console.log(
          `round ${round}, ${n} process(es) on ${engine}: ${c.pages}/${expected} pages in ${f2(c.seconds)} s = ${f1(c.pagesPerSec)} pages/s (site span ${f2(c.siteSeconds)} s); duplicates ${c.duplicates}, unfetched ${c.unfetched}, most in flight to a host ${c.maxInFlightPerHost}; by process ${JSON.stringify(c.byProcess)}; ${c.outcome}; CPU ms a page: ${cpuPerPage(c)}`,
        )
      }
    }
    report.crawls = crawls
    console.log(`\n| processes | engine | round | pages | seconds | pages/s | site span s | duplicates | unfetched | max in flight per host |`)
    console.log('|---|---|---|---|---|---|---|---|---|---|')
    for (const c of crawls)
      console.log(
        `| ${c.processes} | ${c.engine} | ${c.round} | ${c.pages} | ${f2(c.seconds)} | ${f1(c.pagesPerSec)} | ${f2(c.siteSeconds)} | ${c.duplicates} | ${c.unfetched} | ${c.maxInFlightPerHost} |`,
      )
    // A crawl that missed pages (the run ended early) says nothing of speed: its round is left out.
    const whole = (c: Crawl | undefined): c is Crawl => !!c && c.unfetched === 0 && c.pages === c.expected
    const ratios: number[] = []
    const spanRatios: number[] = []
    const sqliteRatios: number[] = []
    let left = 0
    for (let round = 1; round <= rounds; round++) {
      const one = crawls.find((c) => c.round === round && c.processes === 1 && c.engine === 'postgres')
      const many = crawls.find((c) => c.round === round && c.processes === processes)
      const lite = crawls.find((c) => c.round === round && c.engine === 'sqlite')
      if (whole(one) && whole(lite)) sqliteRatios.push(one.pagesPerSec / lite.pagesPerSec)
      if (!whole(one) || !whole(many)) {
        left++
        continue
      }
      ratios.push(many.pagesPerSec / one.pagesPerSec)
      spanRatios.push(many.pages / many.siteSeconds / (one.pages / one.siteSeconds))
    }
    if (values.sqlite)
      console.log(
        `1 process on PostgreSQL ÷ 1 process on SQLite, pages/s, round by round: ${sqliteRatios.map(f2).join(', ') || 'none'}${sqliteRatios.length ? `; median ${f2(median(sqliteRatios))}` : ''} (no target)`,
      )
    const dups = crawls.filter((c) => c.processes === processes).reduce((a, c) => a + c.duplicates, 0)
    const missed = crawls.filter((c) => c.unfetched > 0 || c.pages !== c.expected)
    report.ratios = ratios
    const leftOut = left ? ` (${left} round(s) left out: a crawl missed pages)` : ''
    if (ratios.length) {
      const ratio = median(ratios)
      console.log(`\n${processes} processes' pages/s ÷ 1 process's, round by round: ${ratios.map(f2).join(', ')}; median ${f2(ratio)} (target ≥ 2.5): ${ratio >= 2.5 ? 'met' : 'NOT met'}${leftOut}`)
      console.log(`the same over the site's span: ${spanRatios.map(f2).join(', ')}; median ${f2(median(spanRatios))}`)
    } else console.log(`\n${processes} processes' pages/s ÷ 1 process's: no round to judge${leftOut}: NOT met`)
    console.log(`duplicate fetches with ${processes} processes, all rounds: ${dups} (target 0): ${dups === 0 ? 'met' : 'NOT met'}`)
    for (const c of missed)
      console.log(`round ${c.round}, ${c.processes} process(es) on ${c.engine}: ${c.unfetched} of ${c.expected} pages never fetched, ${c.pages} visited; the run ended ${c.outcome}`)
  }

  if (only.has('links')) {
    console.log(`\nlinks: ${linksTotal} links on 100 hosts, then ${requests} GET /v1/links?per_page=${perPage} on PostgreSQL`)
    const r = await linkLatency()
    report.links = r
    for (const [what, xs] of Object.entries(r.samples)) console.log(`${what}: ${xs.length} requests, p50 ${f2(pct(xs, 50))} ms, p99 ${f2(pct(xs, 99))} ms, max ${f2(Math.max(...xs))} ms`)
    const p99 = pct([...r.samples['first pages'], ...r.samples['keyset pages']], 99)
    console.log(`p99 of all ${requests}: ${f2(p99)} ms (target < 20): ${p99 < 20 ? 'met' : 'NOT met'}; inserting took ${f1(r.insertSeconds)} s (${f0(linksTotal / r.insertSeconds)} links/s)`)
  }
  report.loadavgAfter = loadavg()
  if (values.json) await Bun.write(values.json, JSON.stringify(report, null, 2))
} finally {
  await cleanup()
  await s3.stop()
  rmSync(work, { recursive: true, force: true })
}
// The PostgreSQL cluster is stopped by its helper's exit hook.
process.exit(0)

/** One crawl of a fresh site by `n` processes on a fresh database (or one process on SQLite). */
async function crawl(n: number, round: number, expected: number, engine: 'postgres' | 'sqlite'): Promise<Crawl> {
  const cluster = engine === 'postgres' ? await startCluster({ processes: n, databaseUrl: freshDatabase({ migrated: false }), s3 }) : await startCluster({ processes: 1, store: 'sqlite' })
  const site = multiHostSite({ hosts, pagesPerHost, linksPerPage: links, delayMs, identify: cluster.identify })
  try {
    const config = {
      seeds: [site.seed],
      scope: { domains: 'any' },
      limits: { max_depth: 1000, max_urls: expected * 2 },
      politeness: { concurrency, per_host_concurrency: perHost },
      ...(values['no-bodies'] ? { store: { raw: false, parsed: false } } : {}),
    }
    const trawlPids = new Set(cluster.nodes.map((x) => x.trawl.pid))
    const groups = () => ({
      ...cpuByGroup((pid, comm, cmdline) => (trawlPids.has(pid) ? 'trawl' : comm === 'postgres' ? 'postgres' : cmdline.includes('s3rver') ? 's3rver' : null)),
      bench: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
    })
    const cpu0 = groups()
    const t0 = performance.now()
    const { runId } = await cluster.createJob(config, { name: `bench ${n}` })
    const run = await cluster.until(runId!, (r) => r.status === 'finished', 'finished', timeoutMs)
    const seconds = (performance.now() - t0) / 1000
    const cpu1 = groups()
    const cpu = Object.fromEntries(Object.entries(cpu1).map(([k, v]) => [k, v - ((cpu0 as Record<string, number>)[k] ?? 0)]))
    const pages = site.pageRequests()
    let evidence: string | undefined
    if (site.unfetched().length) {
      const logs = await cluster.logs(runId!).catch((err) => [String(err)])
      const lines = Object.entries(cluster.logLines()).map(([name, text]) => `--- ${name}:\n${text.trimEnd().split('\n').slice(-12).join('\n')}`)
      evidence = `site requests: ${site.requests.length} (${site.requests
        .slice(0, 5)
        .map((r) => `${r.url} ${r.status}`)
        .join(
          ', ',
        )}); run: ${JSON.stringify({ stats: run.stats, error_counts: run.error_counts, started_at: run.started_at, finished_at: run.finished_at })}\ncrawl log, newest first: ${JSON.stringify(logs.slice(0, 8))}\n${lines.join('\n')}`
    }
    const first = pages.length ? Math.min(...pages.map((r) => r.at)) : 0
    const last = pages.length ? Math.max(...pages.map((r) => r.end ?? r.at)) : 0
    return {
      engine,
      processes: n,
      round,
      pages: run.stats.visited,
      expected,
      seconds,
      pagesPerSec: run.stats.visited / seconds,
      siteSeconds: (last - first) / 1000,
      duplicates: site.duplicates().reduce((a, [, k]) => a + k - 1, 0),
      unfetched: site.unfetched().length,
      maxInFlightPerHost: site.maxInFlight(),
      byProcess: site.byClient(),
      outcome: `${run.outcome} (${run.stop_reason})`,
      cpu,
      evidence,
    }
  } finally {
    await site.close()
    await cluster.close()
  }
}

/** Inserts the links through the API, then times list pages. */
async function linkLatency() {
  const cluster = await startCluster({ processes: 1, databaseUrl: freshDatabase(), s3 })
  try {
    const api = cluster.api(0)
    const urls = Array.from({ length: linksTotal }, (_, i) => `https://h${i % 100}.bench.example/p/${i}`)
    const batches: string[][] = []
    for (let i = 0; i < urls.length; i += 255) batches.push(urls.slice(i, i + 255))
    const t0 = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < batches.length) {
          const batch = batches[next++]!
          const r = await api.put('/v1/links', { urls: batch })
          if (r.status !== 200) throw new Error(`PUT /v1/links: ${r.status} ${r.text.slice(0, 300)}`)
        }
      }),
    )
    const insertSeconds = (performance.now() - t0) / 1000
    const time = async (path: string) => {
      const t = performance.now()
      const r = await api.get(path)
      const ms = performance.now() - t
      if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text.slice(0, 300)}`)
      return { ms, next: r.body.next_page as string | null, n: r.body.data.length as number }
    }
    // Warm the connection pool and the plans, as a running server's would be.
    for (let i = 0; i < 10; i++) await time(`/v1/links?per_page=${perPage}`)
    const firstPages: number[] = []
    const keyset: number[] = []
    const half = Math.floor(requests / 2)
    for (let i = 0; i < half; i++) firstPages.push((await time(`/v1/links?per_page=${perPage}`)).ms)
    let cursor: string | null = null
    for (let i = 0; i < requests - half; i++) {
      const r = await time(`/v1/links?per_page=${perPage}${cursor ? `&page=${encodeURIComponent(cursor)}` : ''}`)
      keyset.push(r.ms)
      cursor = r.next
    }
    return { insertSeconds, samples: { 'first pages': firstPages, 'keyset pages': keyset } }
  } finally {
    await cluster.close()
  }
}
