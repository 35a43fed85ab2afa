#!/usr/bin/env bun
// Benchmark of the management API's list pages (not a test). One tenant with 100k links and
// 10k jobs beside 9 other tenants' data; first page, page 50 (by cursor) and a labels-filtered
// page of /v1/links and /v1/jobs at 32 keep-alive connections, against a bare Bun.serve hello
// handler measured in the same run as the ceiling. Exits 0 whatever the numbers; non-zero on a crash.
//
//   bun scripts/bench/api.ts [--duration 5] [--warmup 1] [--rounds 2] [--connections 32] [--json PATH]
//
// Each scenario gets `duration` seconds in all, split over `rounds` passes through the scenario
// list (each pass after its own warm-up), so a drift of the machine does not favour one scenario.
//
// The server, the bare handler and the load generator each run in their own process. The load
// generator is this file again (`--loadgen SPEC`): raw HTTP/1.1 over Bun.connect, one request in
// flight per connection, so the generator costs less than the servers it measures.
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createSqliteRepositories, type SqliteRepositories } from '../../src/store'
import { openDatabase } from '../../src/store/db'

type LoadSpec = { port: number; path: string; tenant: string | null; connections: number; warmupMs: number; durationMs: number }
type LoadSample = { latencies: number[]; errors: number; seconds: number }
type Result = { name: string; path: string; requests: number; errors: number; rps: number; p50: number; p99: number; max: number }

const ROOT = join(import.meta.dir, '..', '..')
const TENANT = 'bench'
const OTHERS = Array.from({ length: 9 }, (_, i) => `other-${i + 1}`)
const SLICES = 50 // seeding is interleaved: each transaction adds a slice of every tenant's rows

// ---------------------------------------------------------------- load generator (child process)

async function loadgen(spec: LoadSpec): Promise<LoadSample> {
  const tenantHeader = spec.tenant === null ? '' : `X-Tenant-Id: ${spec.tenant}\r\n`
  const request = Buffer.from(`GET ${spec.path} HTTP/1.1\r\nHost: 127.0.0.1:${spec.port}\r\n${tenantHeader}Connection: keep-alive\r\n\r\n`)
  const latencies: number[] = []
  let errors = 0
  let lastDone = 0
  const start = performance.now()
  const measureFrom = start + spec.warmupMs
  const stopAt = measureFrom + spec.durationMs

  const connection = () =>
    new Promise<void>((resolve, reject) => {
      let buf = Buffer.alloc(0)
      let sentAt = 0
      let finished = false
      const finish = (ok: boolean) => {
        if (!finished && !ok) errors++ // a refused or reset connection, or the server closed it on us
        finished = true
        resolve()
      }
      Bun.connect({
        hostname: '127.0.0.1',
        port: spec.port,
        socket: {
          open(socket) {
            sentAt = performance.now()
            socket.write(request)
          },
          data(socket, chunk) {
            buf = buf.length === 0 ? Buffer.from(chunk) : Buffer.concat([buf, chunk])
            for (;;) {
              const headEnd = buf.indexOf('\r\n\r\n')
              if (headEnd < 0) return
              const head = buf.toString('latin1', 0, headEnd)
              const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
              let end: number
              if (length) end = headEnd + 4 + Number(length[1])
              else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
                const last = buf.indexOf('\r\n0\r\n\r\n', headEnd + 2)
                if (last < 0) return
                end = last + 7
              } else return reject(new Error(`response without a length: ${head}`))
              if (buf.length < end) return
              const now = performance.now()
              if (sentAt >= measureFrom) {
                latencies.push(now - sentAt)
                if (head.slice(9, 12) !== '200') errors++
                lastDone = now
              }
              buf = buf.subarray(end)
              if (now >= stopAt) {
                finish(true)
                return void socket.end()
              }
              sentAt = performance.now()
              socket.write(request)
            }
          },
          close: () => finish(false),
          error: () => finish(false),
          connectError: () => finish(false),
        },
      }).catch(() => finish(false))
    })

  await Promise.all(Array.from({ length: spec.connections }, connection))
  const seconds = lastDone > measureFrom ? (lastDone - measureFrom) / 1000 : spec.durationMs / 1000
  return { latencies: latencies.map((ms) => Math.round(ms * 1000) / 1000), errors, seconds }
}

/** Requests/s and latency percentiles (nearest rank) over the samples of every round. */
function summarize(name: string, path: string, samples: LoadSample[]): Result {
  const latencies = samples.flatMap((s) => s.latencies).sort((a, b) => a - b)
  const pct = (p: number) => latencies[Math.max(0, Math.ceil(p * latencies.length) - 1)] ?? NaN
  const seconds = samples.reduce((sum, s) => sum + s.seconds, 0)
  const errors = samples.reduce((sum, s) => sum + s.errors, 0)
  return { name, path, requests: latencies.length, errors, rps: latencies.length / seconds, p50: pct(0.5), p99: pct(0.99), max: pct(1) }
}

/** Runs the generator in a fresh process, so neither the seeding heap nor a server shares its thread. */
async function measure(spec: LoadSpec): Promise<LoadSample> {
  const proc = Bun.spawn([process.execPath, import.meta.path, '--loadgen', JSON.stringify(spec)], { stdout: 'pipe', stderr: 'inherit' })
  children.push(proc)
  const out = await new Response(proc.stdout).text()
  if ((await proc.exited) !== 0) throw new Error(`load generator failed (exit ${proc.exitCode}) for ${spec.path}`)
  return JSON.parse(out) as LoadSample
}

// ---------------------------------------------------------------- seeding

function seed(store: SqliteRepositories) {
  const plan = [{ tenant: TENANT, links: 100_000, jobs: 10_000 }, ...OTHERS.map((tenant) => ({ tenant, links: 10_000, jobs: 1_000 }))]
  const config = { seeds: ['https://site1.example/'], limits: { max_depth: 2, max_urls: 5000 } }
  for (let slice = 0; slice < SLICES; slice++) {
    store.transaction(() => {
      for (const { tenant, links, jobs } of plan) {
        const linkSlice = links / SLICES
        const urls: string[] = []
        for (let i = slice * linkSlice; i < (slice + 1) * linkSlice; i++) urls.push(`https://site${i % 1000}.example/p/${i}`)
        store.links.upsert(tenant, urls).forEach((link, j) => {
          const i = slice * linkSlice + j
          if (i % 10 === 0)
            store.links.labels.merge(tenant, link.hash, { tier: 'gold' }) // 10% gold
          else if (i % 10 < 4) store.links.labels.merge(tenant, link.hash, { tier: 'silver' })
        })
        const jobSlice = jobs / SLICES
        for (let i = slice * jobSlice; i < (slice + 1) * jobSlice; i++) {
          const labels = { team: i % 10 === 0 ? 'x' : `t${i % 7}`, env: i % 2 ? 'prod' : 'dev' } // 10% team x
          store.jobs.create(tenant, { id: crypto.randomUUID(), name: `job-${i}`, config, labels })
        }
      }
    })
  }
  const count = (table: string) => (store.db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
  return { links: count('links'), hosts: count('hosts'), jobs: count('jobs'), labels: count('labels') }
}

// ---------------------------------------------------------------- processes

const children: Bun.Subprocess[] = []

/** `n` distinct ports that were free a moment ago (bound on port 0 together, then closed). */
function freePorts(n: number): number[] {
  const listeners = Array.from({ length: n }, () => Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } }))
  for (const l of listeners) l.stop(true)
  return listeners.map((l) => l.port)
}

/** A child with the parent's environment minus TRAWL_* settings, so only the flags given here apply. */
function spawn(cmd: string[], env: Record<string, string> = {}) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRAWL_')))
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...base, ...env }, stdout: 'ignore', stderr: 'inherit' })
  children.push(proc)
  return proc
}

async function waitForHttp(url: string, proc: Bun.Subprocess, what: string) {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode} before answering`)
    try {
      if ((await fetch(url)).ok) return
    } catch {}
    await Bun.sleep(50)
  }
  throw new Error(`${what} did not answer ${url} within 30 s`)
}

/**
 * $TRAWL_BINARY or dist/trawl when it is newer than every file of src/; otherwise a binary built
 * into the temp dir (a stale binary would measure old code, and dist/ is the test runner's).
 */
function trawlBinary(dir: string): string {
  if (process.env.TRAWL_BINARY) return process.env.TRAWL_BINARY
  const binary = join(ROOT, 'dist', 'trawl')
  const newest = (d: string): number => Math.max(...readdirSync(d, { withFileTypes: true }).map((e) => (e.isDirectory() ? newest(join(d, e.name)) : statSync(join(d, e.name)).mtimeMs)))
  if (existsSync(binary) && statSync(binary).mtimeMs > newest(join(ROOT, 'src'))) return binary
  const fresh = join(dir, 'trawl')
  console.log(`${existsSync(binary) ? 'dist/trawl is older than src/' : 'no dist/trawl'}: building ${fresh}`)
  const build = Bun.spawnSync([process.execPath, 'scripts/build.ts', fresh], { cwd: ROOT, stdout: 'ignore', stderr: 'inherit' })
  if (build.exitCode !== 0) throw new Error('bun scripts/build.ts failed')
  return fresh
}

// ---------------------------------------------------------------- main

async function getJson(port: number, path: string): Promise<{ data: Record<string, any>[]; next_page: string | null }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'x-tenant-id': TENANT } })
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`)
  return res.json() as never
}

/** The cursor `hops` pages in: next_page followed from the first page (49 hops reach page 50). */
async function cursorOf(port: number, base: string, hops: number): Promise<string> {
  let cursor: string | null = null
  for (let n = 0; n < hops; n++) {
    cursor = (await getJson(port, cursor ? `${base}?page=${encodeURIComponent(cursor)}` : base)).next_page
    if (!cursor) throw new Error(`${base} has only ${n + 1} pages`)
  }
  return cursor!
}

async function main() {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      duration: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '2' },
      connections: { type: 'string', default: '32' },
      json: { type: 'string' },
    },
  })
  const [durationMs, warmupMs] = [Number(values.duration) * 1000, Number(values.warmup) * 1000]
  const [rounds, connections] = [Number(values.rounds), Number(values.connections)]
  if (!(durationMs > 0 && warmupMs >= 0 && rounds >= 1 && connections >= 1)) throw new Error('--duration, --rounds and --connections must be positive, --warmup not negative')
  const started = performance.now()
  const dir = mkdtempSync(join(tmpdir(), 'trawl-bench-'))
  const dataDir = join(dir, 'data')
  const cleanup = async () => {
    for (const child of children) child.kill()
    await Promise.all(children.map((c) => c.exited))
    rmSync(dir, { recursive: true, force: true })
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)))
  try {
    console.log(
      `trawl API benchmark: bun ${Bun.version}, ${cpus().length} CPUs, ${connections} connections, ${durationMs / 1000} s per scenario in ${rounds} round(s), each after a ${warmupMs / 1000} s warm-up`,
    )
    const t0 = performance.now()
    const db = openDatabase(dataDir)
    const counts = seed(createSqliteRepositories(db))
    db.close()
    const seedSeconds = (performance.now() - t0) / 1000
    console.log(`seeded ${counts.links} links, ${counts.hosts} hosts, ${counts.jobs} jobs, ${counts.labels} label rows (10 tenants) in ${seedSeconds.toFixed(1)} s`)

    const [port, scrapePort, barePort] = freePorts(3) as [number, number, number]
    const server = spawn([trawlBinary(dir), 'serve', '--data-dir', dataDir, '--port', String(port), '--scrape-port', String(scrapePort)], { TRAWL_LOG_LEVEL: 'warn' })
    const bare = spawn([process.execPath, '-e', `Bun.serve({ hostname: '127.0.0.1', port: ${barePort}, fetch: () => new Response('hello') })`])
    await Promise.all([waitForHttp(`http://127.0.0.1:${port}/openapi.json`, server, 'trawl'), waitForHttp(`http://127.0.0.1:${barePort}/`, bare, 'bare Bun.serve')])

    const scenarios: { name: string; port: number; path: string; tenant: string | null; label?: [string, string] }[] = [{ name: 'bare Bun.serve hello', port: barePort, path: '/', tenant: null }]
    for (const [resource, key, value] of [
      ['links', 'tier', 'gold'],
      ['jobs', 'team', 'x'],
    ] as const) {
      const base = `/v1/${resource}`
      scenarios.push(
        { name: `${resource} page 1`, port, path: base, tenant: TENANT },
        { name: `${resource} page 50`, port, path: `${base}?page=${encodeURIComponent(await cursorOf(port, base, 49))}`, tenant: TENANT },
        { name: `${resource} labels[${key}]=${value}`, port, path: `${base}?labels[${key}]=${value}`, tenant: TENANT, label: [key, value] },
      )
    }
    // Sanity: every list page is full, and a filtered page holds only matching rows.
    for (const s of scenarios.filter((s) => s.tenant)) {
      const page = await getJson(port, s.path)
      if (page.data.length !== 10 || !page.next_page) throw new Error(`${s.path}: expected a full page, got ${page.data.length} rows`)
      if (s.label && !page.data.every((row) => row.labels?.[s.label![0]] === s.label![1])) throw new Error(`${s.path}: a row without the label`)
    }

    const samples = scenarios.map((): LoadSample[] => [])
    for (let round = 1; round <= rounds; round++) {
      for (const [i, s] of scenarios.entries()) {
        const sample = await measure({ port: s.port, path: s.path, tenant: s.tenant, connections, warmupMs, durationMs: durationMs / rounds })
        samples[i]!.push(sample)
        console.log(`  round ${round}/${rounds} ${s.name.padEnd(26)} ${(sample.latencies.length / sample.seconds).toFixed(0).padStart(6)} req/s`)
      }
    }
    const results = scenarios.map((s, i) => summarize(s.name, s.path, samples[i]!))

    const by = (name: string) => results.find((r) => r.name === name)!
    const bareRps = by('bare Bun.serve hello').rps
    const lists = results.filter((r) => r.name !== 'bare Bun.serve hello')
    const checks: { check: string; value: string; pass: boolean }[] = []
    for (const r of lists) {
      checks.push({ check: `${r.name}: p99 < 20 ms`, value: `${r.p99.toFixed(2)} ms`, pass: r.p99 < 20 })
      checks.push({ check: `${r.name}: req/s >= 25% of bare`, value: `${((100 * r.rps) / bareRps).toFixed(1)}%`, pass: r.rps >= 0.25 * bareRps })
    }
    for (const resource of ['links', 'jobs']) {
      const ratio = by(`${resource} page 50`).p50 / by(`${resource} page 1`).p50
      checks.push({ check: `${resource}: page 50 p50 <= 1.5x page 1 p50`, value: `${ratio.toFixed(2)}x`, pass: ratio <= 1.5 })
    }
    const errors = results.reduce((sum, r) => sum + r.errors, 0)
    checks.push({ check: 'every response a 200 (bare handler included)', value: `${errors} errors`, pass: errors === 0 })

    const row = (cells: string[], widths: number[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')
    const widths = [26, 10, 9, 9, 9, 9, 8]
    console.log(`\n${row(['scenario', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'requests', 'errors'], widths)}`)
    for (const r of results) console.log(row([r.name, r.rps.toFixed(0), r.p50.toFixed(2), r.p99.toFixed(2), r.max.toFixed(2), String(r.requests), String(r.errors)], widths))
    console.log('\nchecks (targets: p99 < 20 ms, page 50 <= 1.5x page 1, >= 25% of bare req/s, no errors):')
    for (const c of checks) console.log(`  ${c.pass ? 'PASS' : 'FAIL'}  ${c.check.padEnd(48)} ${c.value}`)
    const failed = checks.filter((c) => !c.pass).length
    const totalSeconds = (performance.now() - started) / 1000
    console.log(`\n${failed === 0 ? 'all checks pass' : `${failed} of ${checks.length} checks FAIL`}; benchmark took ${totalSeconds.toFixed(1)} s`)

    const report = {
      bun: Bun.version,
      cpus: cpus().length,
      connections,
      rounds,
      warmup_s: warmupMs / 1000,
      duration_s: durationMs / 1000,
      seed: { ...counts, seconds: seedSeconds },
      results,
      checks,
      total_seconds: totalSeconds,
    }
    if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2) + '\n')
    else console.log(JSON.stringify(report))
  } finally {
    await cleanup()
  }
}

if (Bun.argv[2] === '--loadgen') {
  const result = await loadgen(JSON.parse(Bun.argv[3]!) as LoadSpec)
  process.stdout.write(JSON.stringify(result))
} else {
  await main()
}
