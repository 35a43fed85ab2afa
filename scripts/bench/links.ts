// Memory against links a page: trawl crawls one page of the same size (about 1.6 MB) holding
// 100 to 50,000 anchors to the same 100 URLs, and their 100 small pages, once per count. Peak
// RSS should not follow the count of anchors: a page repeating its links holds no more than one
// listing each once.
//
//   bun scripts/bench/links.ts [--binary dist/trawl] [--counts 100,5000,20000,50000] [--rounds 1]
//
// Prints, per count: seconds, CPU seconds and peak RSS (the kernel's rusage of the crawl), and
// how many pages the crawl recorded (101 expected). Exits non-zero only when a crawl fails.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'

const { values } = parseArgs({
  options: {
    binary: { type: 'string', default: 'dist/trawl' },
    counts: { type: 'string', default: '100,5000,20000,50000' },
    rounds: { type: 'string', default: '1' },
  },
})
const binary = resolve(values.binary!)
const counts = values.counts!.split(',').map(Number)
const rounds = Number(values.rounds)
const PAGE_BYTES = 1_600_000
const TARGETS = 100

/** A page of about PAGE_BYTES with `anchors` links over TARGETS URLs, padded with a paragraph. */
function page(anchors: number): string {
  const links: string[] = []
  for (let k = 0; k < anchors; k++) links.push(`<a href="/t/${k % TARGETS}">link ${k % TARGETS}</a>\n`)
  const body = links.join('')
  const pad = Math.max(0, PAGE_BYTES - body.length - 100)
  return `<!doctype html><html><head><title>links</title></head><body>${body}<p>${'x'.repeat(pad)}</p></body></html>`
}

const pages = new Map(counts.map((n) => [n, page(n)]))
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(req) {
    const path = new URL(req.url).pathname
    const html = { 'content-type': 'text/html; charset=utf-8' }
    if (path.startsWith('/t/')) return new Response(`<html><body><p>${path}</p></body></html>`, { headers: html })
    const n = Number(path.slice('/links/'.length))
    const body = path.startsWith('/links/') ? pages.get(n) : undefined
    return body ? new Response(body, { headers: html }) : new Response('not found', { status: 404 })
  },
})

console.log(`binary ${binary}; pages of ${(PAGE_BYTES / 1e6).toFixed(1)} MB, links to ${TARGETS} URLs`)
console.log('| anchors | round | pages | seconds | CPU s | peak RSS MB |')
console.log('|---|---|---|---|---|---|')
let failed = false
for (let round = 1; round <= rounds; round++) {
  for (const n of counts) {
    const dir = mkdtempSync(join(tmpdir(), 'trawl-links-'))
    const url = `http://127.0.0.1:${server.port}/links/${n}`
    const t0 = performance.now()
    const proc = Bun.spawn([binary, 'crawl', url, '--max-urls', String(TARGETS + 1), '--data-dir', dir], { stdout: 'pipe', stderr: 'pipe' })
    const [out] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
    const code = await proc.exited
    const seconds = (performance.now() - t0) / 1000
    const usage = proc.resourceUsage()!
    rmSync(dir, { recursive: true, force: true })
    // The crawl's summary line: "finished: … visited N, failed F, …".
    const recorded = /visited (\d+)/.exec(out)?.[1] ?? '?'
    if (code !== 0) failed = true
    console.log(
      `| ${n} | ${round} | ${recorded}${code === 0 ? '' : ` (exit ${code})`} | ${seconds.toFixed(1)} | ${(Number(usage.cpuTime.total) / 1e6).toFixed(2)} | ${(usage.maxRSS / 1024 / 1024).toFixed(1)} |`,
    )
  }
}
server.stop(true)
process.exit(failed ? 1 : 0)
