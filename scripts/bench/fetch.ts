#!/usr/bin/env bun
// Benchmark of the fetcher (not a test): POST /v1/fetch/batch with 64 items against a local
// target server, beside raw Bun fetch of the same 64 URLs in the same run. Exits 0 whatever the
// numbers; non-zero on a crash.
//
//   bun scripts/bench/fetch.ts [--duration 5] [--warmup 1] [--rounds 2] [--clients 4] [--size 4096] [--binary dist/trawl] [--json PATH]
//
// Three processes: the target (Bun.serve, pages of `size` bytes), trawl (the compiled binary,
// TRAWL_ALLOW_PRIVATE_NETWORKS=true) and the driver. The raw scenario runs in its own child
// process (`--raw SPEC`) so that it, like trawl, has a process and a core to itself. Each
// scenario keeps `clients` batches in flight; a batch is 64 distinct URLs. Throughput is counted
// in fetched pages per second; latency is per batch.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

type Spec = { base: string; clients: number; warmupMs: number; durationMs: number; trawl: string | null }
type Sample = { latencies: number[]; errors: number; seconds: number; pages: number }
type Result = { name: string; batches: number; errors: number; pagesPerSec: number; batchesPerSec: number; p50: number; p99: number }

const ROOT = join(import.meta.dir, '..', '..')
const ITEMS = 64

const urlsFor = (base: string, round: number) => Array.from({ length: ITEMS }, (_, i) => `${base}/page/${round % 1000}/${i}`)

/** Keeps `clients` batches in flight for the duration; `batch` fetches 64 URLs one way or the other. */
async function drive(spec: Spec, batch: (urls: string[]) => Promise<number>): Promise<Sample> {
  const latencies: number[] = []
  let errors = 0
  let pages = 0
  const start = performance.now()
  const measureFrom = start + spec.warmupMs
  const stopAt = measureFrom + spec.durationMs
  let round = 0
  const client = async () => {
    while (performance.now() < stopAt) {
      const t0 = performance.now()
      let ok = 0
      try {
        ok = await batch(urlsFor(spec.base, round++))
      } catch {
        ok = 0
      }
      const t1 = performance.now()
      if (t0 >= measureFrom && t1 <= stopAt) {
        latencies.push(t1 - t0)
        pages += ok
        if (ok !== ITEMS) errors++
      }
    }
  }
  await Promise.all(Array.from({ length: spec.clients }, client))
  return { latencies, errors, pages, seconds: spec.durationMs / 1000 }
}

const rawBatch = (urls: string[]) => Promise.all(urls.map((u) => fetch(u).then(async (r) => (await r.arrayBuffer(), r.ok ? 1 : 0)))).then((oks) => oks.reduce<number>((a, b) => a + b, 0))

function trawlBatch(trawl: string) {
  return async (urls: string[]) => {
    const r = await fetch(`${trawl}/v1/fetch/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tenant-id': 'bench' },
      body: JSON.stringify({ items: urls.map((url) => ({ url })) }),
    })
    // Counted in the text rather than parsed: on 2 cores, this driver's JSON.parse of ~400 KB a
    // batch took CPU from the server it measures. Each ok item has `"ok":true` and the target's
    // `"status":200`; a failure would lack one of them.
    const text = await r.text()
    return Math.min(occurrences(text, '"ok":true'), occurrences(text, '"status":200'))
  }
}

function occurrences(text: string, needle: string): number {
  let n = 0
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++
  return n
}

// ---------------------------------------------------------------- child modes

async function targetMain(size: number) {
  const page = Buffer.from(`<!doctype html><html><head><title>t</title></head><body>${'<p>lorem ipsum dolor sit amet</p>'.repeat(Math.ceil(size / 34))}</body></html>`.slice(0, size))
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }) })
  console.log(JSON.stringify({ port: server.port }))
}

async function rawMain(spec: Spec) {
  const sample = await drive(spec, rawBatch)
  console.log(JSON.stringify(sample))
}

// ---------------------------------------------------------------- driver

async function firstLine(proc: ReturnType<typeof Bun.spawn>, match: RegExp, what: string): Promise<string> {
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  let text = ''
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const { value, done } = await reader.read()
    if (done) break
    text += new TextDecoder().decode(value)
    const m = match.exec(text)
    if (m) {
      reader.releaseLock()
      return m[1]!
    }
  }
  throw new Error(`${what} did not start: ${text}`)
}

function summarize(name: string, s: Sample): Result {
  const sorted = [...s.latencies].sort((a, b) => a - b)
  const q = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : NaN)
  return { name, batches: sorted.length, errors: s.errors, pagesPerSec: s.pages / s.seconds, batchesPerSec: sorted.length / s.seconds, p50: q(0.5), p99: q(0.99) }
}

const merge = (a: Sample, b: Sample): Sample => ({ latencies: [...a.latencies, ...b.latencies], errors: a.errors + b.errors, pages: a.pages + b.pages, seconds: a.seconds + b.seconds })

async function main() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '2' },
      clients: { type: 'string', default: '4' },
      size: { type: 'string', default: '4096' },
      binary: { type: 'string', default: join(ROOT, 'dist', 'trawl') },
      json: { type: 'string' },
      target: { type: 'string' },
      raw: { type: 'string' },
    },
  })
  if (values.target) return targetMain(Number(values.target))
  if (values.raw) return rawMain(JSON.parse(values.raw) as Spec)

  const binary = values.binary!
  if (!existsSync(binary)) throw new Error(`no binary at ${binary}: run \`bun run build\` first`)
  const rounds = Number(values.rounds)
  const perRound = (Number(values.duration) * 1000) / rounds
  const warmupMs = Number(values.warmup) * 1000
  const clients = Number(values.clients)

  const target = Bun.spawn([process.execPath, import.meta.path, '--target', values.size!], { stdout: 'pipe', stderr: 'inherit' })
  const dataDir = mkdtempSync(join(tmpdir(), 'trawl-bench-fetch-'))
  let trawl: ReturnType<typeof Bun.spawn> | null = null
  try {
    const targetPort = JSON.parse(await firstLine(target, /(\{"port":\d+\})/, 'target')).port as number
    trawl = Bun.spawn([binary, 'serve', '--port', '0', '--scrape-port', '0', '--data-dir', dataDir], {
      env: { ...process.env, TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_LOG_LEVEL: 'info' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const trawlUrl = await firstLine(trawl, /management (http:\/\/[^,\s]+)/, 'trawl')
    const base = `http://127.0.0.1:${targetPort}`
    const spec = (trawlUrl: string | null): Spec => ({ base, clients, warmupMs, durationMs: perRound, trawl: trawlUrl })

    let raw: Sample = { latencies: [], errors: 0, pages: 0, seconds: 0 }
    let viaTrawl: Sample = { latencies: [], errors: 0, pages: 0, seconds: 0 }
    for (let round = 0; round < rounds; round++) {
      // Alternate the order so a drift of the machine favours neither.
      const order = round % 2 === 0 ? ['raw', 'trawl'] : ['trawl', 'raw']
      for (const which of order) {
        if (which === 'raw') {
          const child = Bun.spawn([process.execPath, import.meta.path, '--raw', JSON.stringify(spec(null))], { stdout: 'pipe', stderr: 'inherit' })
          raw = merge(raw, JSON.parse(await new Response(child.stdout).text()) as Sample)
          await child.exited
        } else viaTrawl = merge(viaTrawl, await drive(spec(trawlUrl), trawlBatch(trawlUrl)))
      }
    }
    const results = [summarize('raw Bun fetch, 64 at once', raw), summarize('trawl /v1/fetch/batch (64 items)', viaTrawl)]
    const ratio = results[1]!.pagesPerSec / results[0]!.pagesPerSec
    console.log(`fetch bench: ${cpus().length} cores, ${clients} batches in flight, ${values.size}-byte pages, ${values.duration}s per scenario in ${rounds} rounds`)
    console.log('| scenario | pages/s | batches/s | p50 ms (batch) | p99 ms (batch) | errors |')
    console.log('|---|---|---|---|---|---|')
    for (const r of results) console.log(`| ${r.name} | ${r.pagesPerSec.toFixed(0)} | ${r.batchesPerSec.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.errors} |`)
    console.log(`trawl / raw throughput: ${(ratio * 100).toFixed(1)}% (target ≥ 70%)`)
    if (values.json) writeFileSync(values.json, JSON.stringify({ results, ratio }, null, 2))
  } finally {
    trawl?.kill()
    target.kill()
    await trawl?.exited
    rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
