#!/usr/bin/env bun
// Benchmark of the scrape API (not a test): paid scrapes against free ones in the same run, or
// (--mode render) TRAWL_SCRAPE_RENDER=auto against never on a static page.
// Exits 0 whatever the numbers; non-zero on a crash.
//
//   bun scripts/bench/scrape.ts [--requests 2000] [--clients 32] [--rounds 3] [--size 20480] [--binary dist/trawl]
//   bun scripts/bench/scrape.ts --mode render [--requests 500] [--clients 4] [--rounds 3] [--size 20480]
//
// Render mode: two free binaries, one TRAWL_SCRAPE_RENDER=auto (Chromium installed and allowed to
// start) and one never; the page is static with a script tag of its own, as most are. Rounds
// alternate the two; the verdict compares the median round's p50: auto must stay within 1.5x of
// never (issue 20), answer rendered false, and start no Chromium (read from the process tree).
//
// Processes: the target (a Bun server in a child process answering one HTML page of `size`
// bytes), two trawl binaries (free: no TRAWL_PAY_TO; paid: TRAWL_PAY_TO set, local
// verification), both with TRAWL_SCRAPE_RATE=off and TRAWL_SCRAPE_RENDER=never, and this
// driver. Payments (x402 v1, X-PAYMENT) are signed ahead of time with a test key, one per
// request, so signing is not measured. Rounds alternate free and paid, each `requests` scrapes
// with `clients` in flight; the verdict compares the median round of each: payment may add at
// most 15% to p50, and paid scrapes must reach 200/s (issue 7).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { privateKeyToAccount } from 'viem/accounts'
import { payNetwork } from '../../src/payment/networks'
import { TRANSFER_WITH_AUTHORIZATION } from '../../src/payment/signature'
import { encodeJsonHeader } from '../../src/payment/wire'
import { procCpu } from './proc'

const ROOT = join(import.meta.dir, '..', '..')
// Anvil's first two well-known keys: a payer and a pay-to address. Test keys, never funded.
const PAYER = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')
const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const NETWORK = payNetwork('base-sepolia')

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string' },
    clients: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    size: { type: 'string', default: '20480' },
    binary: { type: 'string', default: join(ROOT, 'dist/trawl') },
    mode: { type: 'string', default: 'payment' },
  },
})
const RENDER_MODE = args.mode === 'render'
if (!RENDER_MODE && args.mode !== 'payment') throw new Error(`--mode: payment or render, not ${args.mode}`)
const REQUESTS = Number(args.requests ?? (RENDER_MODE ? 500 : 2000))
const CLIENTS = Number(args.clients ?? (RENDER_MODE ? 4 : 32))
const ROUNDS = Number(args.rounds)
const SIZE = Number(args.size)
const BINARY = args.binary!

type Round = { mode: 'free' | 'paid'; round: number; perSec: number; p50: number; p99: number; errors: number; statuses: Record<number, number>; cpuMs: number }
type Server = { base: string; pid: number }

async function main() {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run npm run build first`)
  if (RENDER_MODE) return renderMain()
  const dir = mkdtempSync(join(tmpdir(), 'trawl-bench-scrape-'))
  const procs: ReturnType<typeof Bun.spawn>[] = []
  try {
    const target = await startTarget(dir, procs)
    const common = { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RATE: 'off', TRAWL_SCRAPE_RENDER: 'never', TRAWL_LOG_LEVEL: 'warn' }
    const free = await startTrawl(join(dir, 'free'), common, procs)
    const paid = await startTrawl(join(dir, 'paid'), { ...common, TRAWL_PAY_TO: PAY_TO, TRAWL_PAY_NETWORK: 'base-sepolia', TRAWL_PRICE: '$0.001', TRAWL_PAY_MAX_TIMEOUT: '3600s' }, procs)
    console.log(`scrape bench: ${cpus().length} cores; ${REQUESTS} scrapes a round, ${CLIENTS} clients, ${ROUNDS} rounds each; page ${SIZE} bytes`)
    const signStart = performance.now()
    const payments = await signPayments(ROUNDS * REQUESTS + CLIENTS * 2)
    console.log(`signed ${payments.length} payments ahead in ${((performance.now() - signStart) / 1000).toFixed(1)} s`)

    // A short warm-up of each, unmeasured: JIT, parse workers, keep-alive connections.
    let next = 0
    await drive(free.base, target, Math.min(REQUESTS, 300), () => null)
    await drive(paid.base, target, CLIENTS * 2, () => payments[next++]!)
    const rounds: Round[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of ['free', 'paid'] as const) {
        const server = mode === 'free' ? free : paid
        const cpuBefore = procCpu(server.pid) ?? 0
        const r = await drive(server.base, target, REQUESTS, () => (mode === 'paid' ? payments[next++]! : null))
        const cpuMs = (((procCpu(server.pid) ?? 0) - cpuBefore) * 1000) / REQUESTS
        rounds.push({ mode, round, ...r, cpuMs })
        console.log(
          `${mode} round ${round}: ${r.perSec.toFixed(0)} scrapes/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, trawl CPU ${cpuMs.toFixed(2)} ms a scrape, errors ${r.errors} ${JSON.stringify(r.statuses)}`,
        )
      }
    }
    report(rounds)
  } finally {
    for (const p of procs) p.kill()
    await Promise.all(procs.map((p) => p.exited))
    rmSync(dir, { recursive: true, force: true })
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

type RenderRound = { mode: 'auto' | 'never'; round: number; perSec: number; p50: number; p90: number; errors: number; rendered: number }

/** --mode render: auto against never on a static page, through the real servers. */
async function renderMain() {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-bench-scrape-'))
  const procs: ReturnType<typeof Bun.spawn>[] = []
  try {
    const target = await startTarget(dir, procs, '<script async src="/analytics.js"></script>')
    const common = { TRAWL_ALLOW_PRIVATE_NETWORKS: 'true', TRAWL_SCRAPE_RATE: 'off', TRAWL_LOG_LEVEL: 'warn' }
    const auto = await startTrawl(join(dir, 'auto'), { ...common, TRAWL_SCRAPE_RENDER: 'auto', ...(process.env.TRAWL_CHROMIUM ? { TRAWL_CHROMIUM: process.env.TRAWL_CHROMIUM } : {}) }, procs)
    const never = await startTrawl(join(dir, 'never'), { ...common, TRAWL_SCRAPE_RENDER: 'never' }, procs)
    console.log(`scrape render bench: ${cpus().length} cores; ${REQUESTS} scrapes a round, ${CLIENTS} clients, ${ROUNDS} rounds each; static page ${SIZE} bytes`)
    await renderDrive(auto.base, target, Math.min(REQUESTS, 200))
    await renderDrive(never.base, target, Math.min(REQUESTS, 200))
    const rounds: RenderRound[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of ['never', 'auto'] as const) {
        const r = await renderDrive((mode === 'auto' ? auto : never).base, target, REQUESTS)
        rounds.push({ mode, round, ...r })
        console.log(`${mode} round ${round}: ${r.perSec.toFixed(0)} scrapes/s, p50 ${r.p50.toFixed(2)} ms, p90 ${r.p90.toFixed(2)} ms, rendered ${r.rendered}, errors ${r.errors}`)
      }
    }
    const of = (mode: 'auto' | 'never') => rounds.filter((r) => r.mode === mode)
    console.log('\n| mode | round | scrapes/s | p50 ms | p90 ms | rendered | errors |')
    console.log('|---|---|---|---|---|---|---|')
    for (const r of rounds) console.log(`| ${r.mode} | ${r.round} | ${r.perSec.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p90.toFixed(2)} | ${r.rendered} | ${r.errors} |`)
    const [autoP50, neverP50] = [median(of('auto').map((r) => r.p50)), median(of('never').map((r) => r.p50))]
    const [autoP90, neverP90] = [median(of('auto').map((r) => r.p90)), median(of('never').map((r) => r.p90))]
    const bad = rounds.reduce((n, r) => n + r.errors + r.rendered, 0)
    const browsers = chromiumUnder(auto.pid)
    console.log(`\nmedian rounds: auto p50 ${autoP50.toFixed(2)} ms, p90 ${autoP90.toFixed(2)} ms; never p50 ${neverP50.toFixed(2)} ms, p90 ${neverP90.toFixed(2)} ms`)
    console.log(`Chromium processes under the auto server: ${browsers}`)
    const ratio = autoP50 / neverP50
    console.log(`auto p50 is ${ratio.toFixed(2)}x never's (target at most 1.5x, no render, no Chromium): ${ratio <= 1.5 && bad === 0 && browsers === 0 ? 'met' : 'NOT met'}`)
  } finally {
    for (const p of procs) p.kill()
    await Promise.all(procs.map((p) => p.exited))
    rmSync(dir, { recursive: true, force: true })
  }
}

/** `count` default scrapes of the static page, `CLIENTS` in flight; counts answers that were rendered. */
async function renderDrive(base: string, target: string, count: number) {
  let rendered = 0
  const r = await drive(
    base,
    target,
    count,
    () => null,
    async (answer) => {
      if (((await answer.json()) as { rendered?: boolean }).rendered) rendered++
    },
  )
  return { perSec: r.perSec, p50: r.p50, p90: r.p90, errors: r.errors, rendered }
}

/** How many processes below `pid` (children and theirs) are Chromium, from /proc. */
function chromiumUnder(pid: number): number {
  let found = 0
  const walk = (p: number) => {
    let children: number[] = []
    try {
      children = readdirSync(`/proc/${p}/task`).flatMap((t) => readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').split(' ').filter(Boolean).map(Number))
    } catch {
      return
    }
    for (const c of children) {
      try {
        if (/chrom/i.test(readFileSync(`/proc/${c}/comm`, 'utf8'))) found++
      } catch {}
      walk(c)
    }
  }
  walk(pid)
  return found
}

function report(rounds: Round[]) {
  const of = (mode: 'free' | 'paid') => rounds.filter((r) => r.mode === mode)
  const freeP50 = median(of('free').map((r) => r.p50))
  const paidP50 = median(of('paid').map((r) => r.p50))
  const paidRate = median(of('paid').map((r) => r.perSec))
  console.log('\n| mode | round | scrapes/s | p50 ms | p99 ms | trawl CPU ms a scrape | errors |')
  console.log('|---|---|---|---|---|---|---|')
  for (const r of rounds) console.log(`| ${r.mode} | ${r.round} | ${r.perSec.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.cpuMs.toFixed(2)} | ${r.errors} |`)
  const cpu = (mode: 'free' | 'paid') => median(of(mode).map((r) => r.cpuMs))
  // CPU time is steadier than latency on a shared machine: it says what payment itself costs.
  console.log(`\ntrawl CPU a scrape (median rounds): free ${cpu('free').toFixed(2)} ms, paid ${cpu('paid').toFixed(2)} ms`)
  const added = paidP50 / freeP50 - 1
  const errors = rounds.reduce((n, r) => n + r.errors, 0)
  console.log(
    `\npayment adds ${(added * 100).toFixed(1)}% to p50 (median rounds: paid ${paidP50.toFixed(1)} ms, free ${freeP50.toFixed(1)} ms; target at most 15%): ${added <= 0.15 && errors === 0 ? 'met' : 'NOT met'}`,
  )
  console.log(`paid scrapes/s ${paidRate.toFixed(0)} (median round; target at least 200): ${paidRate >= 200 && errors === 0 ? 'met' : 'NOT met'}`)
  if (errors) console.log(`${errors} requests did not answer 200: no round with errors counts as met`)
}

/**
 * `count` scrapes, `CLIENTS` in flight; `payment()` gives each request's X-PAYMENT or null. An
 * answer's body is read by `read` (discarded by default) before its latency is taken.
 */
async function drive(base: string, target: string, count: number, payment: () => string | null, read = async (answer: Response) => void (await answer.arrayBuffer())) {
  const latencies: number[] = []
  const statuses: Record<number, number> = {}
  let errors = 0
  let issued = 0
  const start = performance.now()
  const client = async () => {
    while (issued < count) {
      const i = issued++
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      const pay = payment()
      if (pay) headers['x-payment'] = pay
      const t0 = performance.now()
      const r = await fetch(`${base}/v1/scrape`, { method: 'POST', headers, body: JSON.stringify({ url: `${target}/page?i=${i}` }) })
      await read(r)
      latencies.push(performance.now() - t0)
      statuses[r.status] = (statuses[r.status] ?? 0) + 1
      if (r.status !== 200) errors++
    }
  }
  await Promise.all(Array.from({ length: CLIENTS }, client))
  const seconds = (performance.now() - start) / 1000
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!
  return { perSec: count / seconds, p50: at(0.5), p90: at(0.9), p99: at(0.99), errors, statuses }
}

/** x402 v1 `exact` payments for base-sepolia USDC, as x402-fetch signs them, base64 for X-PAYMENT. */
async function signPayments(n: number): Promise<string[]> {
  const now = Math.floor(Date.now() / 1000)
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    const nonce = `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}` as `0x${string}`
    const authorization = { from: PAYER.address, to: PAY_TO, value: '1000', validAfter: String(now - 600), validBefore: String(now + 3600), nonce }
    const signature = await PAYER.signTypedData({
      domain: { name: NETWORK.name, version: NETWORK.version, chainId: NETWORK.chainId, verifyingContract: NETWORK.asset },
      types: TRANSFER_WITH_AUTHORIZATION,
      primaryType: 'TransferWithAuthorization',
      message: { ...authorization, value: 1000n, validAfter: BigInt(authorization.validAfter), validBefore: BigInt(authorization.validBefore), to: PAY_TO },
    })
    out.push(encodeJsonHeader({ x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: { signature, authorization } }))
  }
  return out
}

async function startTarget(dir: string, procs: ReturnType<typeof Bun.spawn>[], head = ''): Promise<string> {
  const script = join(dir, 'target.ts')
  writeFileSync(
    script,
    `const words = 'crawl frontier politeness robots sitemap artifact markdown table link anchor'.split(' ')
let body = '<!doctype html><html><head><meta charset="utf-8"><title>Bench page</title>${head}</head><body><h1>Bench page</h1>'
for (let i = 0; body.length < ${SIZE} - 40; i++) body += '<p>' + Array.from({ length: 20 }, (_, j) => words[(i * 7 + j) % words.length]).join(' ') + ' <a href="/p/' + i + '">link ' + i + '</a></p>'
body += '</body></html>'
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8' } }) })
console.log(server.port)`,
  )
  const proc = Bun.spawn([process.execPath, script], { stdout: 'pipe', stderr: 'inherit' })
  procs.push(proc)
  const reader = proc.stdout.getReader()
  const { value } = await reader.read()
  return `http://127.0.0.1:${new TextDecoder().decode(value).trim()}`
}

async function startTrawl(dataDir: string, env: Record<string, string>, procs: ReturnType<typeof Bun.spawn>[]): Promise<Server> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRAWL_'))) as Record<string, string>
  const proc = Bun.spawn([BINARY, 'serve', '--data-dir', dataDir, '--port', '0', '--scrape-port', '0'], { env: { ...clean, ...env }, stdout: 'pipe', stderr: 'inherit' })
  procs.push(proc)
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`trawl exited before it started: ${text}`)
    text += new TextDecoder().decode(value)
  }
  const m = / scrape (http:\/\/[^ ,]+)/.exec(text)
  if (!m) throw new Error(`no scrape address in the start-up line: ${text}`)
  return { base: m[1]!, pid: proc.pid }
}

await main()
