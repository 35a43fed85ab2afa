#!/usr/bin/env bun
// Benchmark of the browser client (not a test): one page with `images` images, served by a Bun
// server on loopback, fetched `fetches` times in a row by a BrowserClient with private networks
// allowed (every connection through the guarding proxy, decision 85). Prints the median and the
// spread of a fetch's wall time and this process's CPU time (Chromium's own is not counted).
// Exits 0 whatever the numbers.
//
//   bun scripts/bench/browser.ts [--fetches 20] [--images 20] [--rounds 5] [--chromium chromium]
//
// To compare two builds, run it in each checkout in turn (A B A B …): the VM's speed drifts by
// more than a proxy hop costs.
import { parseArgs } from 'node:util'
import { BrowserClient } from '../../src/fetch/browser'
import { createLogger } from '../../src/log'

const { values } = parseArgs({
  options: {
    fetches: { type: 'string', default: '20' },
    images: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '5' },
    chromium: { type: 'string', default: process.env.TRAWL_CHROMIUM ?? 'chromium' },
  },
})
const fetches = Number(values.fetches)
const images = Number(values.images)
const rounds = Number(values.rounds)
for (const [name, n] of [
  ['--fetches', fetches],
  ['--images', images],
  ['--rounds', rounds],
] as const) {
  if (!Number.isInteger(n) || n < (name === '--images' ? 0 : 1)) throw new Error(`${name}: a whole number`)
}

const PNG = new Uint8Array(2000).fill(7)
const page = `<!doctype html><html><body><h1>bench</h1>${Array.from({ length: images }, (_, i) => `<img src="/i${i}.png">`).join('')}</body></html>`
const site = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (req) => (new URL(req.url).pathname === '/' ? new Response(page, { headers: { 'content-type': 'text/html' } }) : new Response(PNG, { headers: { 'content-type': 'image/png' } })),
})
const client = new BrowserClient({ chromium: values.chromium!, allowPrivate: true, maxBodyBytes: 5_000_000, log: createLogger('error', () => {}) })
const request = { url: `http://127.0.0.1:${site.port}/`, method: 'GET' as const, headers: [], cookies: [], proxy: null, waitUntil: 'load' as const, maxRedirects: 5 }

try {
  await client.fetch(request, AbortSignal.timeout(30_000)) // Chromium's start, not measured
  const wall: number[] = []
  const cpu: number[] = []
  for (let r = 0; r < rounds; r++) {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    for (let i = 0; i < fetches; i++) await client.fetch(request, AbortSignal.timeout(30_000))
    const c = process.cpuUsage(c0)
    wall.push((performance.now() - t0) / fetches)
    cpu.push((c.user + c.system) / 1000 / fetches)
  }
  const line = (xs: number[]) => {
    const s = xs.slice().sort((a, b) => a - b)
    return `median ${s[Math.floor(s.length / 2)]!.toFixed(1)} ms (${s[0]!.toFixed(1)}-${s.at(-1)!.toFixed(1)})`
  }
  console.log(`${rounds} rounds of ${fetches} fetches of a page with ${images} images`)
  console.log(`wall per fetch: ${line(wall)}`)
  console.log(`this process's CPU per fetch: ${line(cpu)}`)
} finally {
  await client.close()
  site.stop(true)
}
