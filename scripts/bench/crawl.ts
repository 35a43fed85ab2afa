#!/usr/bin/env bun
// Benchmark of whole crawls (not a test): one generated site, crawled in the same run by trawl
// (`dist/trawl crawl`, full recording: raw and parsed artifacts, logs, link graph), by Crawlee's
// CheerioCrawler under node (a devDependency of this bench only) and by `wget2 --recursive`
// (Debian; records nothing, so it is the speed ceiling, not the bar). Reports pages/s, CPU
// seconds, pages per CPU-second and peak RSS of each. Exits 0 whatever the numbers; non-zero on
// a crash.
//
//   bun scripts/bench/crawl.ts [--pages 20000] [--second 100000] [--only trawl,crawlee,wget2,floor,postgres]
//                              [--rounds 3] [--concurrency 16] [--threads 8] [--seed 1] [--timeout 900]
//                              [--server auto|nginx|bun] [--binary dist/trawl] [--keep] [--json PATH]
//                              [--page-bytes N] [--docs DIR [--docs-start PATH]] [--baseline BINARY]
//
// The site: `pages` pages, `/` and /p/1 ... /p/<pages-1>, made from `seed` (same seed, same
// site), written as static files to a temp dir and served by nginx (Debian's nginx or
// nginx-light: one process, no daemon, access log off, 127.0.0.1 and a free port), or, when no
// nginx is installed or with `--server bun`, by this file again (`--serve DIR --port P`) as a
// Bun static server in its own process. Every page has 20 links to pages of the site (about 16 distinct targets; a few
// spelled twice) spelled in varied ways that resolve to the same URLs: `/p/7`, `7`, `./7`,
// `../p/7`, `http://127.0.0.1:P/p/7`, `//127.0.0.1:P/p/7`, `/p/7#top`, `./7#s2`, plus one
// link to another host. Page i links to 2i+1 and 2i+2, so every page is reachable from / within
// log2(pages) hops. Bodies are 3-20 KB of text (skewed small: mean ~9 KB), or all about N bytes with
// `--page-bytes N` (3072: the small-page site, where per-page costs dominate); robots.txt is a 404.
//
// Rounds: wget2 and trawl take turns `rounds` times (wget2, trawl, wget2, trawl, ...), then
// Crawlee runs once. The speed target is a ratio to wget2 "in the same run", and this VM's speed
// drifts by a third or more from minute to minute (the same wget2 crawl took 3.4k-4.9k pages/s
// within an hour), so each trawl round is divided by the wget2 round just before it and the
// verdict takes the median of those ratios. The memory verdict takes trawl's highest peak.
//
// Each crawler runs in its own process, one after the other, timed by this driver: wall seconds
// from spawn to exit; CPU seconds (user+sys) and peak RSS from the kernel's rusage of the child
// (wait4, as /usr/bin/time -v reports it; it covers the children it waited for); RSS also sampled
// from /proc every 500 ms to show growth. The server's CPU seconds during each crawl are shown
// beside, read from /proc. trawl: the pages it fetched are read from its data dir
// (`SELECT count(*) FROM visits`) and its summary line; pages/s over the first and the last
// tenth of the crawl come from the visits' `visited_at` in visit order. Crawlee: its finished
// requests; wget2: the files it saved.
//
// Concurrency: trawl runs with `--concurrency C --per-host-concurrency C` (the site is one host,
// so the per-host limit would otherwise cap it at the manifest's default of 2), Crawlee with
// min = max concurrency = C (`--concurrency`, 16); wget2 with `--threads` (8, as in design.md,
// measured fact 8).
//
// `--second N` adds a trawl-only run on a site of N pages (the scalability check: peak RSS under
// 200 MB, pages/s over the last tenth at least 0.9x the first tenth). Needs ~10 KB of disk per
// page for the site and several times that for trawl's data dir; both are removed at the end
// unless `--keep`.
//
// `--docs DIR` crawls a real documentation site instead of a generated one: DIR served as it is
// by nginx (with its MIME types, so stylesheets and images are not taken for pages; symlinks
// followed; a DIR with symlinks to elsewhere is first copied with `cp -rL` into the work dir, so
// every file is in one tree nginx may read), each crawler starting at `<base>/<docs-start>`
// (`index.html` by default). Nobody knows its page count beforehand: trawl runs with
// `--max-urls 1000000`, wget2 without `--no-parent` (so both follow every link of the served host,
// as trawl's default scope does), and the count expected of each is what wget2 found (the HTML
// files it saved, not its stylesheets and images), or trawl's visits when wget2 is skipped. No
// target is judged on such a site; the table, trawl's tenths, RSS curve and recorded rows are
// as above, trawl's visits also counted by the type of what they fetched. Debian's libstdc++
// reference (`apt-get install -y libstdc++-12-doc`: 3,846 pages reachable from its index.html,
// hundreds of links a page):
//
//   bun scripts/bench/crawl.ts --docs /usr/share/doc/gcc-12-base/libstdc++ --only trawl,wget2 --rounds 3
//
// `--baseline BINARY` runs a second trawl binary (one built from an earlier commit, say) in every
// round, right after `--binary`'s: wget2, trawl, baseline, wget2, trawl, baseline, ... Each
// round's pages per CPU-second of trawl are divided by the baseline's of the same round, and the
// median of those ratios is how many times the baseline's pages per CPU-second trawl reaches: the
// VM's drift between rounds (wget2's CPU a page has tripled within minutes) falls on both alike,
// where two separate bench runs compare minutes that differ. Their peaks are shown side by side.
//
//   git worktree add /tmp/old <commit> && (cd /tmp/old && npm ci && npm run build)
//   bun scripts/bench/crawl.ts --page-bytes 3072 --only trawl,wget2 --baseline /tmp/old/dist/trawl
//
// `floor` (only when named in `--only`) runs scripts/bench/floor-crawler.ts in every round, right
// after trawl (and the baseline): the least a crawler on Bun does a page and still records it in
// SQLite, links by one regex and a row or two a table (its header says what it leaves out).
// Each round's pages per CPU-second of trawl are divided by the floor's: how far trawl's page
// is from the cheapest one the runtime allows, judged in the same minutes.
//
//   bun scripts/bench/crawl.ts --page-bytes 3072 --only trawl,wget2,floor --baseline /tmp/old/dist/trawl
//
// `postgres` (only when named in `--only`) runs the same binary again in every round, right after
// trawl, on the PostgreSQL engine: a fresh database of a throwaway PostgreSQL cluster and an
// s3rver bucket for the bodies (test/helpers/postgres.ts, s3-server.ts, as the tests start them),
// through TRAWL_DATABASE_URL and TRAWL_BLOB_URL. Each round's pages/s on PostgreSQL is divided by
// trawl's on SQLite of the same round (target: at least 0.5); the CPU seconds PostgreSQL and
// s3rver spent meanwhile are shown beside its own, since its process is not all it costs.
//
//   bun scripts/bench/crawl.ts --page-bytes 3072 --only trawl,postgres --rounds 3
//
// What to install: `apt-get install -y nginx-light wget2` (Debian), and `npm install` (Crawlee
// comes with the devDependencies), and for `postgres`, Debian's postgresql and node (s3rver); a
// crawler or server that is missing is reported and skipped.
import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, closeSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { cpuByGroup, procCpu } from './proc'

const ROOT = join(import.meta.dir, '..', '..')
const LINKS = 20
const DISTINCT = 16 // distinct targets among the 20 links; the rest repeat one with another spelling

/**
 * `pages` is the generated site's page count; a documentation site (`docs`, the DIR given) has
 * none known beforehand (0). `start` is the URL every crawler starts at.
 */
type Site = { dir: string; pages: number; bytes: number; port: number; base: string; start: string; docs?: string }
type Server = { kind: 'nginx' | 'bun'; pid: number; stop: () => Promise<void>; errors: () => string[] }
type Result = {
  crawler: string
  /** Which turn of wget2 and trawl (1-based); absent for Crawlee and the scalability run. */
  round?: number
  pages: number
  expected: number
  seconds: number
  pagesPerSec: number
  cpuSeconds: number
  peakRssMb: number
  serverCpuSeconds: number | null
  notes: string[]
  firstTenthPagesPerSec?: number
  lastTenthPagesPerSec?: number
  rssCurveMb?: { progress: number; rssMb: number }[]
  recorded?: Record<string, number>
}

// ---------------------------------------------------------------- the site

/** mulberry32: a small seeded PRNG, so the same seed makes the same site. */
function prng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = (
  'crawl frontier queue host robots politeness delay lease batch index sqlite page link anchor fragment ' +
  'query scheme origin path segment relative absolute resolve normalize dedupe filter bloom hash digest ' +
  'artifact body header status redirect retry backoff timeout deadline socket stream rewriter element ' +
  'attribute text paragraph heading section article footer navigation table list item value record'
).split(' ')

/** A link to page `t` as written on page `i`: varied spellings of one URL (page 0 is `/`). */
function spell(i: number, t: number, port: number, r: number): string {
  const abs = `http://127.0.0.1:${port}`
  if (t === 0) return ['/', abs + '/', i === 0 ? './' : '../', '/#top'][Math.floor(r * 4)]!
  const forms =
    i === 0
      ? [`/p/${t}`, `p/${t}`, `./p/${t}`, `${abs}/p/${t}`, `//127.0.0.1:${port}/p/${t}`, `/p/${t}#top`, `p/${t}#s2`, `${abs}/p/${t}#s3`]
      : [`/p/${t}`, `${t}`, `./${t}`, `../p/${t}`, `${abs}/p/${t}`, `//127.0.0.1:${port}/p/${t}`, `/p/${t}#top`, `./${t}#s2`]
  return forms[Math.floor(r * forms.length)]!
}

/** Writes the site's pages as files under `dir/site`; answers the bytes written. */
function generateSite(dir: string, pages: number, port: number, seed: number, pageBytes: number | null): Site {
  const root = join(dir, 'site')
  mkdirSync(join(root, 'p'), { recursive: true })
  const rand = prng(seed)
  // One pool of text; each page takes slices of it at random offsets.
  const pool = Array.from({ length: 12_000 }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ')
  let bytes = 0
  for (let i = 0; i < pages; i++) {
    const targets: number[] = []
    const add = (t: number) => {
      if (t >= 0 && t < pages && t !== i && !targets.includes(t)) targets.push(t)
    }
    add(2 * i + 1)
    add(2 * i + 2)
    add(Math.floor((i - 1) / 2))
    add(i + 1)
    let guard = 0
    while (targets.length < Math.min(DISTINCT, pages - 1) && guard++ < 1000) add(Math.floor(rand() * pages))
    const links: string[] = targets.map((t) => spell(i, t, port, rand()))
    while (links.length < LINKS && targets.length) links.push(spell(i, targets[Math.floor(rand() * targets.length)]!, port, rand()))
    // Shuffle, so the tree links are not always first.
    for (let k = links.length - 1; k > 0; k--) {
      const j = Math.floor(rand() * (k + 1))
      ;[links[k], links[j]] = [links[j]!, links[k]!]
    }
    const spread = 3 * 1024 + Math.floor(17 * 1024 * rand() ** 2)
    const target = pageBytes ?? spread
    const title = i === 0 ? 'Home' : `Page ${i}`
    const head = `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>\n<body>\n<h1 id="top">${title}</h1>\n`
    const nav = `<nav>${links
      .slice(0, 5)
      .map((h, k) => `<a href="${h}">link ${k}</a>`)
      .join(' | ')}</nav>\n`
    const foot = `<footer><a href="http://example.invalid/about">elsewhere</a> <a href="#top">top</a></footer>\n</body></html>\n`
    const rest = links.slice(5)
    const textBudget = Math.max(0, target - head.length - nav.length - foot.length - rest.length * 40)
    const paragraphs = rest.length + 1
    let body = ''
    for (let k = 0; k < paragraphs; k++) {
      const len = Math.floor(textBudget / paragraphs)
      const at = Math.floor(rand() * (pool.length - len - 1))
      const text = pool.slice(at, at + len)
      body += `<h2 id="s${k}">section ${k}</h2>\n<p>${text}${k < rest.length ? ` <a href="${rest[k]}">${WORDS[k % WORDS.length]}</a>` : ''}</p>\n`
    }
    const html = head + nav + body + foot
    bytes += html.length
    writeFileSync(i === 0 ? join(root, 'index.html') : join(root, 'p', String(i)), html)
  }
  return { dir: root, pages, bytes, port, base: `http://127.0.0.1:${port}`, start: `http://127.0.0.1:${port}/` }
}

/** Symlinks under `dir` whose targets lie outside it (nginx would serve them, but a copy keeps the tree whole and readable). */
function outsideLinks(dir: string): number {
  const root = realpathSync(dir)
  let n = 0
  // A link to a directory of the tree itself (or above a link) is walked once, not in a loop.
  const walked = new Set<string>()
  const walk = (d: string) => {
    if (walked.has(realpathSync(d))) return
    walked.add(realpathSync(d))
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isSymbolicLink()) {
        let target: string
        try {
          target = realpathSync(p)
        } catch {
          continue // dangling: nginx answers 404 for it either way
        }
        if (relative(root, target).startsWith('..')) n++
        else if (statSync(p).isDirectory()) walk(p)
      } else if (e.isDirectory()) walk(p)
    }
  }
  walk(dir)
  return n
}

/** A documentation site to serve as it is: `dir` itself, or a `cp -rL` copy of it in `work` when it links outside itself. */
function docsSite(dir: string, startPath: string, work: string, port: number): Site & { copied: number; files: number } {
  const given = resolve(dir)
  if (!existsSync(given) || !statSync(given).isDirectory()) throw new Error(`--docs: ${dir} is not a directory`)
  let root = realpathSync(given)
  const links = outsideLinks(root)
  if (links) {
    const copy = join(work, 'site')
    const cp = Bun.spawnSync(['cp', '-rL', root, copy], { stderr: 'pipe' })
    if (cp.exitCode !== 0) throw new Error(`cp -rL ${root} ${copy}: ${cp.stderr.toString().trim()}`)
    root = copy
  }
  const start = startPath.replace(/^\/+/, '')
  if (!existsSync(join(root, start))) throw new Error(`--docs-start: ${join(root, start)} does not exist`)
  const base = `http://127.0.0.1:${port}`
  return { dir: root, pages: 0, bytes: dirBytes(root), port, base, start: `${base}/${encodeURI(start)}`, docs: dir, copied: links, files: countFiles(root) }
}

async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

// ---------------------------------------------------------------- the server

const nginxBinary = () => Bun.which('nginx') ?? Bun.which('nginx', { PATH: '/usr/sbin:/usr/local/sbin:/sbin' })

async function waitForHttp(url: string, what: string) {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url)
      await r.arrayBuffer()
      if (r.ok) return
    } catch {}
    await Bun.sleep(50)
  }
  throw new Error(`${what} did not start serving ${url}`)
}

async function startServer(site: Site, work: string, choice: string): Promise<Server> {
  const nginx = choice === 'bun' ? null : nginxBinary()
  if (!nginx && choice === 'nginx') throw new Error('--server nginx: nginx is not installed (apt-get install -y nginx-light)')
  // The Bun fallback serves only the generated site's paths.
  if (site.docs && !nginx) throw new Error('--docs: needs nginx (apt-get install -y nginx-light), and not --server bun')
  // A documentation site has stylesheets, scripts, images and other files beside its pages:
  // each with its type as a stock nginx gives it, so no crawler takes them for HTML; the
  // generated site has pages only, some without an extension, all text/html.
  const mimeTypes = '/etc/nginx/mime.types'
  if (site.docs && !existsSync(mimeTypes)) throw new Error(`--docs: nginx's ${mimeTypes} is missing`)
  const types = site.docs ? `include ${mimeTypes};\n  default_type application/octet-stream;\n  disable_symlinks off;` : 'default_type text/html;'
  if (nginx) {
    const prefix = join(work, 'nginx')
    mkdirSync(join(prefix, 'tmp'), { recursive: true })
    const conf = join(prefix, 'nginx.conf')
    writeFileSync(
      conf,
      `daemon off;
master_process off;
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log crit;
events { worker_connections 4096; }
http {
  access_log off;
  ${types}
  charset utf-8;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_requests 10000000;
  keepalive_timeout 120s;
  client_body_temp_path ${prefix}/tmp/body;
  proxy_temp_path ${prefix}/tmp/proxy;
  fastcgi_temp_path ${prefix}/tmp/fastcgi;
  server {
    listen 127.0.0.1:${site.port};
    root ${site.dir};
    index index.html;
  }
}
`,
    )
    const proc = Bun.spawn([nginx, '-p', prefix, '-e', join(prefix, 'error.log'), '-c', conf], { stdout: 'inherit', stderr: 'inherit' })
    await waitForHttp(site.start, 'nginx')
    const errors = () => (existsSync(join(prefix, 'error.log')) ? readFileSync(join(prefix, 'error.log'), 'utf8').split('\n').filter(Boolean) : [])
    return { kind: 'nginx', pid: proc.pid, stop: async () => (proc.kill(), void (await proc.exited)), errors }
  }
  if (choice !== 'bun') console.log('nginx: not installed (apt-get install -y nginx-light); serving the site with a Bun static server instead')
  const proc = Bun.spawn([process.execPath, import.meta.path, '--serve', site.dir, '--port', String(site.port)], { stdout: 'inherit', stderr: 'inherit' })
  await waitForHttp(`${site.base}/`, 'the Bun static server')
  return { kind: 'bun', pid: proc.pid, stop: async () => (proc.kill(), void (await proc.exited)), errors: () => [] }
}

/** Child mode: a lean static server of the generated files (the fallback when there is no nginx). */
function serveMain(dir: string, port: number) {
  const headers = { 'content-type': 'text/html; charset=utf-8' }
  Bun.serve({
    hostname: '127.0.0.1',
    port,
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/' || path === '/index.html') return new Response(Bun.file(join(dir, 'index.html')), { headers })
      if (/^\/p\/\d+$/.test(path) && existsSync(join(dir, path))) return new Response(Bun.file(join(dir, path)), { headers })
      return new Response('not found', { status: 404 })
    },
  })
}

// ---------------------------------------------------------------- measuring a process

function procRssMb(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : null
  } catch {
    return null
  }
}

type Measured = {
  code: number | null
  timedOut: boolean
  seconds: number
  cpuSeconds: number
  peakRssMb: number
  serverCpuSeconds: number | null
  serverErrors: string[]
  stdout: string
  stderr: string
}

/**
 * Runs one crawler to its end: wall time, rusage (CPU, peak RSS), the server's CPU meanwhile.
 * `onTick` is called every 500 ms with the process id (for sampling); stderr lines go to `onLine`.
 */
async function measure(
  cmd: string[],
  opts: { env?: Record<string, string>; cwd?: string; server: Server; timeoutS: number; onTick?: (pid: number) => void; onLine?: (line: string) => void },
): Promise<Measured> {
  const serverCpu0 = procCpu(opts.server.pid)
  const serverErrors0 = opts.server.errors().length
  const t0 = performance.now()
  const proc = Bun.spawn(cmd, { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, stdout: 'pipe', stderr: 'pipe' })
  let timedOut = false
  const killer = setTimeout(() => ((timedOut = true), proc.kill('SIGKILL')), opts.timeoutS * 1000)
  const ticker = setInterval(() => opts.onTick?.(proc.pid), 500)
  const readLines = async (stream: ReadableStream<Uint8Array>, sink?: (line: string) => void) => {
    let all = ''
    let pending = ''
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true })
      all += all.length < 1_000_000 ? text : ''
      if (!sink) continue
      pending += text
      let nl: number
      while ((nl = pending.indexOf('\n')) >= 0) {
        sink(pending.slice(0, nl))
        pending = pending.slice(nl + 1)
      }
    }
    if (sink && pending) sink(pending)
    return all
  }
  const [stdout, stderr] = await Promise.all([readLines(proc.stdout), readLines(proc.stderr, opts.onLine)])
  const code = await proc.exited
  const seconds = (performance.now() - t0) / 1000
  clearTimeout(killer)
  clearInterval(ticker)
  const serverCpu1 = procCpu(opts.server.pid)
  const usage = proc.resourceUsage()!
  return {
    code,
    timedOut,
    seconds,
    cpuSeconds: Number(usage.cpuTime.total) / 1e6,
    peakRssMb: usage.maxRSS / 1024 / 1024,
    serverCpuSeconds: serverCpu0 !== null && serverCpu1 !== null ? serverCpu1 - serverCpu0 : null,
    serverErrors: opts.server.errors().slice(serverErrors0),
    stdout,
    stderr,
  }
}

const result = (crawler: string, m: Measured, pages: number, expected: number, notes: string[]): Result => ({
  crawler,
  pages,
  expected,
  seconds: m.seconds,
  pagesPerSec: pages / m.seconds,
  cpuSeconds: m.cpuSeconds,
  peakRssMb: m.peakRssMb,
  serverCpuSeconds: m.serverCpuSeconds,
  notes: [
    ...(m.timedOut ? ['timed out and killed'] : []),
    ...(m.code !== 0 && !m.timedOut ? [`exit code ${m.code}`] : []),
    ...(m.serverErrors.length ? [`the server logged ${m.serverErrors.length} errors meanwhile, first: ${m.serverErrors[0]!.slice(0, 300)}`] : []),
    ...notes,
  ],
})

// ---------------------------------------------------------------- the crawlers

/**
 * trawl on the PostgreSQL engine: a fresh database and a fresh bucket prefix each round. The
 * cluster and s3rver start on first use, outside any timing, and stop when the bench exits.
 */
async function runOnPostgres(binary: string, site: Site, work: string, server: Server, timeoutS: number, concurrency: number): Promise<Result> {
  pg ??= await (async () => {
    const { clusterPort, freshDatabase } = await import('../../test/helpers/postgres')
    const { startS3Server } = await import('../../test/helpers/s3-server')
    clusterPort()
    return { s3: await startS3Server(), freshDatabase }
  })()
  const round = ++pgRounds
  const env = { TRAWL_DATABASE_URL: pg.freshDatabase({ migrated: false }), ...pg.s3.env(`bench-${round}`) }
  const group = (pid: number, comm: string, cmdline: string) => (comm === 'postgres' ? 'postgres' : cmdline.includes('s3rver') ? 's3rver' : null)
  const before = cpuByGroup(group)
  const r = await runTrawl(binary, site, work, server, timeoutS, POSTGRES, concurrency, env)
  const after = cpuByGroup(group)
  const spent = Object.keys(after).map((k) => `${k} ${f1(after[k]! - (before[k] ?? 0))} s`)
  r.notes.push(`CPU meanwhile: ${spent.join(', ')} (trawl's own: ${f1(r.cpuSeconds)} s)`)
  return r
}
let pg: { s3: { env(prefix: string): Record<string, string>; stop(): Promise<void> }; freshDatabase: (opts: { migrated: boolean }) => string } | null = null
let pgRounds = 0

async function runTrawl(binary: string, site: Site, work: string, server: Server, timeoutS: number, label = 'trawl', concurrency = 16, env?: Record<string, string>): Promise<Result> {
  const dataDir = join(work, `trawl-data-${site.docs ? 'docs' : site.pages}`)
  // Each round crawls into an empty data dir, as the first did.
  rmSync(dataDir, { recursive: true, force: true })
  let visited = 0
  const curve: { visited: number; rssMb: number }[] = []
  const otherStderr: string[] = []
  const c = String(concurrency)
  // A documentation site's size is not known: a budget it will not reach.
  const maxUrls = site.docs ? '1000000' : String(site.pages)
  const m = await measure([binary, 'crawl', site.start, '--max-urls', maxUrls, '--max-depth', '1000', '--concurrency', c, '--per-host-concurrency', c, '--data-dir', dataDir], {
    env,
    server,
    timeoutS,
    onLine: (line) => {
      const p = /^visited (\d+)\s+queued \d+\s+failed \d+/.exec(line)
      if (p) visited = Number(p[1])
      else if (line.trim()) otherStderr.push(line)
    },
    onTick: (pid) => {
      const rss = procRssMb(pid)
      if (rss !== null) curve.push({ visited, rssMb: rss })
    },
  })
  const notes: string[] = []
  const summary = /^(finished: \S+|left \S+) after .*$/m.exec(m.stdout)?.[0]
  notes.push(summary ? `summary: ${summary}` : `no summary line; stdout: ${m.stdout.trim().slice(0, 300)}`)
  if (otherStderr.length) notes.push(`${otherStderr.length} other stderr lines, first: ${otherStderr.slice(0, 3).join(' / ').slice(0, 500)}`)
  let pages = Number(/visited (\d+)/.exec(summary ?? '')?.[1] ?? 0)
  const out = result(label, m, pages, site.pages, notes)
  const dbPath = join(dataDir, 'trawl.db')
  if (existsSync(dbPath)) {
    const db = new Database(dbPath, { readonly: true })
    try {
      // The schema moves under this bench (edges went into visits.children): a table that is
      // gone shows as a dash, not a crash.
      const count = (sql: string) => {
        try {
          return (db.query(sql).get() as { n: number }).n
        } catch {
          return NaN
        }
      }
      pages = count('SELECT count(*) AS n FROM visits')
      const ok = count('SELECT count(*) AS n FROM visits WHERE status = 200')
      out.recorded = {
        visits: pages,
        visits200: ok,
        frontierUrls: count('SELECT count(*) AS n FROM frontier'),
        // A run's edges are its visits' children: 32 hex characters each (decision 101).
        edges: count('SELECT coalesce(sum(length(children)), 0) / 32 AS n FROM visits'),
        links: count('SELECT count(*) AS n FROM links'),
        artifacts: count('SELECT count(*) AS n FROM artifacts'),
        crawlLogs: count('SELECT count(*) AS n FROM crawl_logs'),
        dataDirMb: dirBytes(dataDir) / 1024 / 1024,
      }
      if (!site.docs && pages !== site.pages) out.notes.push(`visited ${pages} of ${site.pages} pages`)
      if (site.docs) {
        // What trawl fetched besides pages: wget2's count is of HTML files only.
        try {
          const types = db.query("SELECT coalesce(content_type, '?') AS t, count(*) AS n FROM artifacts WHERE kind = 'raw' GROUP BY 1 ORDER BY 2 DESC").all() as { t: string; n: number }[]
          out.notes.push(`raw artifacts by type: ${types.map((t) => `${t.t} ${t.n}`).join(', ') || 'none'}`)
        } catch (e) {
          out.notes.push(`raw artifacts by type: unreadable (${(e as Error).message})`)
        }
      }
      if (ok !== pages) out.notes.push(`${pages - ok} visits without status 200`)
      const times = (db.query('SELECT visited_at AS t FROM visits ORDER BY seq').all() as { t: number }[]).map((r) => r.t)
      const tenth = Math.floor(times.length / 10)
      if (tenth >= 2) {
        out.firstTenthPagesPerSec = tenth / Math.max(0.001, (times[tenth]! - times[0]!) / 1000)
        out.lastTenthPagesPerSec = tenth / Math.max(0.001, (times[times.length - 1]! - times[times.length - 1 - tenth]!) / 1000)
      }
    } finally {
      db.close()
    }
    out.pages = pages
    out.pagesPerSec = pages / m.seconds
  } else out.notes.push(`no database at ${dbPath}`)
  // RSS at each tenth of the crawl (the last sample at or before it); a documentation site's
  // tenths are of what trawl visited.
  const whole = site.docs ? pages : site.pages
  out.rssCurveMb = []
  for (let k = 1; k <= 10; k++) {
    const at = curve.filter((c) => c.visited <= (whole * k) / 10).at(-1)
    if (at) out.rssCurveMb.push({ progress: k / 10, rssMb: at.rssMb })
  }
  return out
}

/** The Crawlee driver, run by node (`node -e`, from the repository so `@crawlee/cheerio` resolves). */
const CRAWLEE_DRIVER = `
const { CheerioCrawler, Configuration, log, LogLevel } = require('@crawlee/cheerio')
const spec = JSON.parse(process.env.BENCH_CRAWLEE_SPEC)
log.setLevel(LogLevel.WARNING)
;(async () => {
  const config = new Configuration({ persistStorage: false, purgeOnStart: true })
  let pages = 0
  const crawler = new CheerioCrawler(
    {
      minConcurrency: spec.concurrency,
      maxConcurrency: spec.concurrency,
      // No maxRequestsPerCrawl: the site is finite, and with a budget that nears the site's size
      // Crawlee 3.18's enqueueLinks adds the last URLs one per batch with a 1 s sleep between.
      maxRequestRetries: 2,
      async requestHandler({ enqueueLinks }) {
        pages++
        await enqueueLinks({ strategy: 'same-hostname' })
      },
    },
    config,
  )
  const stats = await crawler.run([spec.url])
  console.log(JSON.stringify({ pages, finished: stats.requestsFinished, failed: stats.requestsFailed }))
})().catch((e) => { console.error(e); process.exit(1) })
`

function crawleeMissing(): string | null {
  if (!Bun.which('node')) return 'node is not on PATH'
  if (!existsSync(join(ROOT, 'node_modules', '@crawlee', 'cheerio'))) return '@crawlee/cheerio is not installed (npm install: it is a devDependency)'
  return null
}

async function runCrawlee(site: Site, work: string, server: Server, concurrency: number, timeoutS: number): Promise<Result> {
  const storage = join(work, 'crawlee-storage')
  mkdirSync(storage, { recursive: true })
  const m = await measure([Bun.which('node')!, '-e', CRAWLEE_DRIVER], {
    server,
    timeoutS,
    env: { BENCH_CRAWLEE_SPEC: JSON.stringify({ url: site.start, pages: site.pages, concurrency }), CRAWLEE_STORAGE_DIR: storage },
  })
  const line = m.stdout.trim().split('\n').at(-1) ?? ''
  const notes: string[] = []
  let pages = 0
  try {
    const r = JSON.parse(line) as { pages: number; finished: number; failed: number }
    pages = r.finished
    if (r.failed) notes.push(`${r.failed} failed requests`)
  } catch {
    notes.push(`no result line; stderr: ${m.stderr.trim().slice(0, 300)}`)
  }
  if (!site.docs && pages && pages !== site.pages) notes.push(`fetched ${pages} of ${site.pages} pages`)
  const warnings = m.stderr.split('\n').filter((l) => l.trim())
  if (warnings.length) notes.push(`${warnings.length} stderr lines, first: ${warnings.slice(0, 2).join(' / ').slice(0, 300)}`)
  return result(`Crawlee CheerioCrawler (node, concurrency ${concurrency})`, m, pages, site.pages, notes)
}

/** scripts/bench/floor-crawler.ts under this Bun, in a data dir of its own; it prints {"pages": N}. */
async function runFloor(site: Site, work: string, server: Server, concurrency: number, timeoutS: number): Promise<Result> {
  const dir = join(work, 'floor')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const max = site.docs ? 1_000_000 : site.pages
  const m = await measure([process.execPath, join(ROOT, 'scripts', 'bench', 'floor-crawler.ts'), site.start, String(max), String(concurrency), dir], { server, timeoutS })
  const notes: string[] = []
  let pages = 0
  try {
    pages = (JSON.parse(m.stdout.trim().split('\n').pop()!) as { pages: number }).pages
  } catch {
    notes.push(`no result line; stderr: ${m.stderr.trim().slice(0, 300)}`)
  }
  if (!site.docs && pages !== site.pages) notes.push(`fetched ${pages} of ${site.pages} pages`)
  rmSync(dir, { recursive: true, force: true })
  return result(FLOOR, m, pages, site.pages, notes)
}

async function runWget2(site: Site, work: string, server: Server, threads: number, timeoutS: number): Promise<Result> {
  const dir = join(work, 'wget2')
  rmSync(dir, { recursive: true, force: true })
  // wget2 stays on the start URL's host unless told --span-hosts. On a documentation site it
  // goes up from the start page too, as trawl does: the start need not be at the top of the site.
  const parent = site.docs ? [] : ['--no-parent']
  const cmd = [Bun.which('wget2')!, '--recursive', '--level=inf', ...parent, '--no-host-directories', `--directory-prefix=${dir}`, `--max-threads=${threads}`, '-q', site.start]
  const m = await measure(cmd, { server, timeoutS })
  let pages: number
  const notes: string[] = []
  if (site.docs) {
    // It also saves the stylesheets, scripts and images the pages use: its pages are the HTML.
    const files = existsSync(dir) ? listFiles(dir) : []
    const others = new Map<string, number>()
    for (const f of files) if (!isHtmlFile(f)) others.set(extension(f), (others.get(extension(f)) ?? 0) + 1)
    pages = files.length - [...others.values()].reduce((a, b) => a + b, 0)
    if (others.size)
      notes.push(
        `saved ${files.length} files: ${pages} HTML, ${[...others]
          .sort((a, b) => b[1] - a[1])
          .map(([e, n]) => `${n} ${e}`)
          .join(', ')}`,
      )
  } else {
    pages = existsSync(dir) ? countFiles(dir) : 0
    if (pages !== site.pages) notes.push(`saved ${pages} of ${site.pages} pages`)
  }
  if (m.stderr.trim()) notes.push(`stderr: ${m.stderr.trim().slice(0, 300)}`)
  const r = result(`wget2 (${threads} threads)`, m, pages, site.pages, notes)
  // Exit code 8 is an error status somewhere: a documentation site's dead links give it.
  if (site.docs) r.notes = r.notes.map((n) => (n === 'exit code 8' ? 'exit code 8: some URLs answered an error status (wget2 saves no file for them)' : n))
  return r
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name)) : [join(dir, e.name)]))
}

const extension = (path: string) => /\.([A-Za-z0-9]{1,8})$/.exec(path)?.[1]?.toLowerCase() ?? '(none)'

/** A saved file is a page when its name says HTML, or (no such extension) its first bytes do. */
function isHtmlFile(path: string): boolean {
  const ext = extension(path)
  if (ext === 'html' || ext === 'htm' || ext === 'xhtml') return true
  if (ext !== '(none)') return false
  const fd = openSync(path, 'r')
  try {
    const head = Buffer.alloc(512)
    const n = readSync(fd, head, 0, 512, 0)
    return /^\s*(<\?xml[^>]*>\s*)?<!doctype html|^\s*<html/i.test(head.subarray(0, n).toString('latin1'))
  } finally {
    closeSync(fd)
  }
}

function countFiles(dir: string): number {
  let n = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? countFiles(join(dir, e.name)) : 1
  return n
}

function dirBytes(dir: string): number {
  let n = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    n += e.isDirectory() ? dirBytes(p) : statSync(p).size
  }
  return n
}

// ---------------------------------------------------------------- driver

const f0 = (n: number | undefined | null) => (n === undefined || n === null || !Number.isFinite(n) ? '—' : n.toFixed(0))
const f1 = (n: number | undefined | null) => (n === undefined || n === null || !Number.isFinite(n) ? '—' : n.toFixed(1))
const f2 = (n: number | undefined | null) => (n === undefined || n === null || !Number.isFinite(n) ? '—' : n.toFixed(2))

const isWget2 = (r: Result) => r.crawler.startsWith('wget2')
/** The wget2 result a result is compared with: the same round's, or the first. */
const wget2For = (results: Result[], r: Result) => results.find((w) => isWget2(w) && w.round === r.round) ?? results.find(isWget2)
const label = (r: Result) => (r.round === undefined ? r.crawler : `${r.crawler}, round ${r.round}`)
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

function printTable(results: Result[]) {
  console.log('| crawler | pages | seconds | pages/s | CPU s | pages per CPU-s | peak RSS MB | ratio to wget2 pages/s | server CPU s |')
  console.log('|---|---|---|---|---|---|---|---|---|')
  for (const r of results) {
    const wget = wget2For(results, r)
    console.log(
      `| ${label(r)} | ${r.pages}${r.pages !== r.expected ? ` of ${r.expected}` : ''} | ${f1(r.seconds)} | ${f0(r.pagesPerSec)} | ${f1(r.cpuSeconds)} | ${f0(r.pages / r.cpuSeconds)} | ${f0(r.peakRssMb)} | ${wget && wget.pagesPerSec > 0 ? f2(r.pagesPerSec / wget.pagesPerSec) : '—'} | ${f1(r.serverCpuSeconds)} |`,
    )
  }
  for (const r of results) {
    if (r.firstTenthPagesPerSec !== undefined)
      console.log(
        `${label(r)}: first tenth ${f0(r.firstTenthPagesPerSec)} pages/s, last tenth ${f0(r.lastTenthPagesPerSec)} pages/s (last/first ${f2(r.lastTenthPagesPerSec! / r.firstTenthPagesPerSec)})`,
      )
    if (r.rssCurveMb?.length) console.log(`${label(r)}: RSS MB at each tenth of the crawl: ${r.rssCurveMb.map((c) => f0(c.rssMb)).join(', ')}`)
    if (r.recorded)
      console.log(
        `${label(r)}: recorded ${f0(r.recorded.visits)} visits (${f0(r.recorded.visits200)} with 200), ${f0(r.recorded.frontierUrls)} frontier URLs, ${f0(r.recorded.edges)} edges (children), ${f0(r.recorded.links)} links, ${f0(r.recorded.artifacts)} artifacts, ${f0(r.recorded.crawlLogs)} crawl_logs rows, data dir ${f0(r.recorded.dataDirMb)} MB`,
      )
    for (const n of r.notes) console.log(`${label(r)}: ${n}`)
  }
}

/** The issue's targets for the main site, judged: speed against wget2 and memory against Crawlee. */
function printVerdicts(results: Result[]) {
  const trawl = results.filter((r) => r.crawler === 'trawl')
  // A round where either crawler did not fetch the whole site is no measurement of the target:
  // it is named, and the verdict cannot be met with it missing.
  const incomplete: string[] = []
  const ratios = trawl.flatMap((t) => {
    const w = wget2For(results, t)
    if (!w || !(w.pagesPerSec > 0) || w.pages !== w.expected || t.pages !== t.expected) {
      incomplete.push(t.round === undefined ? 'the only round' : `round ${t.round}`)
      return []
    }
    return [t.pagesPerSec / w.pagesPerSec]
  })
  if (trawl.length && results.some(isWget2)) {
    const m = ratios.length ? median(ratios) : NaN
    const met = !incomplete.length && m >= 0.25
    console.log(
      `trawl pages/s ÷ wget2 pages/s of the same round: ${ratios.map(f2).join(', ') || 'none'}; median ${f2(m)} (target ≥ 0.25): ${met ? 'met' : 'NOT met'}${incomplete.length ? ` (incomplete, left out: ${incomplete.join(', ')})` : ''}`,
    )
  }
  const crawlee = results.find((r) => r.crawler.startsWith('Crawlee') && r.pages === r.expected)
  if (crawlee && trawl.length) {
    const peak = Math.max(...trawl.map((t) => t.peakRssMb))
    console.log(
      `trawl's highest peak RSS ÷ Crawlee's: ${f0(peak)} / ${f0(crawlee.peakRssMb)} MB = ${f2(peak / crawlee.peakRssMb)} (target ≤ 0.33): ${peak * 3 <= crawlee.peakRssMb ? 'met' : 'NOT met'}`,
    )
  }
}

/**
 * A documentation site's expected count: what wget2 found in the same round (or its first
 * round), or, with no wget2, what trawl's first round visited.
 */
function expectFromWget2(results: Result[]) {
  const trawl = results.find((r) => r.crawler === 'trawl')
  for (const r of results) {
    const by = wget2For(results, r) ?? trawl
    if (!by) continue
    r.expected = by.pages
    if (r !== by && r.pages !== by.pages) r.notes.push(`got ${r.pages} pages, ${by.crawler.split(' ')[0]} ${by.pages}`)
  }
}

/** On a documentation site no target is set: the speed ratio to wget2 is shown, not judged. */
function printDocsRatios(results: Result[]) {
  const ratios = results
    .filter((r) => r.crawler === 'trawl')
    .flatMap((t) => {
      const w = wget2For(results, t)
      return w && w.pagesPerSec > 0 ? [t.pagesPerSec / w.pagesPerSec] : []
    })
  if (ratios.length) console.log(`trawl pages/s ÷ wget2 pages/s of the same round: ${ratios.map(f2).join(', ')}; median ${f2(median(ratios))} (no target on this site)`)
}

/** The crawler name of `--baseline`'s rounds. */
const BASELINE = 'trawl (baseline)'
const FLOOR = 'floor (minimal recorder, bun)'
const POSTGRES = 'trawl on PostgreSQL'

/** `--only …,postgres`: trawl's pages/s on PostgreSQL over its pages/s on SQLite, round by round. */
function printPostgres(results: Result[]) {
  const pairs = roundPairs(results, POSTGRES)
  if (!pairs.length) return
  const whole = pairs.filter(({ t, o }) => t.pages === t.expected && o.pages === o.expected)
  const left = pairs.length - whole.length
  const ratios = whole.map(({ t, o }) => o.pagesPerSec / t.pagesPerSec)
  const verdict = ratios.length ? (median(ratios) >= 0.5 ? 'met' : 'NOT met') : 'no round to judge'
  console.log(`${ratioLine('pages/s on PostgreSQL ÷ on SQLite, round by round', ratios)} (target ≥ 0.5): ${verdict}${left ? ` (${left} round(s) left out: missed pages)` : ''}`)
}

/** Each trawl round with the round of crawler `name` run beside it. */
function roundPairs(results: Result[], name: string): { t: Result; o: Result }[] {
  return results
    .filter((r) => r.crawler === 'trawl')
    .flatMap((t) => {
      const o = results.find((r) => r.crawler === name && r.round === t.round)
      return o ? [{ t, o }] : []
    })
}

const ratioLine = (what: string, ratios: number[]) => `${what}: ${ratios.map(f2).join(', ') || 'none'}; median ${f2(ratios.length ? median(ratios) : NaN)}`

/**
 * `--only …,floor`: trawl's pages per CPU-second over the floor's, round by round, and their
 * median. On the generated site (`known`) a round is left out where either missed pages.
 */
function printFloor(results: Result[], known: boolean) {
  const pairs = roundPairs(results, FLOOR)
  if (!pairs.length) return
  const whole = pairs.filter(({ t, o }) => (!known || (t.pages === t.expected && o.pages === o.expected)) && t.cpuSeconds > 0 && o.cpuSeconds > 0)
  const left = pairs.length - whole.length
  const perCpu = whole.map(({ t, o }) => t.pages / t.cpuSeconds / (o.pages / o.cpuSeconds))
  console.log(`${ratioLine("trawl's pages per CPU-second ÷ the floor's, round by round", perCpu)}${left ? ` (${left} round(s) left out: missed pages)` : ''}`)
}

/**
 * `--baseline`: trawl's pages per CPU-second over the baseline's, round by round, and their
 * median; wall pages/s likewise; the peaks of both. A round is left out where the two visited
 * different counts, or, on the generated site (`known`: its page count is), missed pages.
 */
function printBaseline(results: Result[], known: boolean) {
  const pairs = roundPairs(results, BASELINE)
  if (!pairs.length) return
  const whole = pairs.filter(({ t, o }) => t.pages === o.pages && (!known || t.pages === t.expected) && t.cpuSeconds > 0 && o.cpuSeconds > 0)
  const left = pairs.length - whole.length
  const perCpu = whole.map(({ t, o }) => t.pages / t.cpuSeconds / (o.pages / o.cpuSeconds))
  const wall = whole.map(({ t, o }) => t.pagesPerSec / o.pagesPerSec)
  console.log(`${ratioLine("trawl's pages per CPU-second ÷ the baseline's, round by round", perCpu)}${left ? ` (${left} round(s) left out: the two visited different counts, or missed pages)` : ''}`)
  console.log(ratioLine("trawl's pages/s ÷ the baseline's", wall))
  console.log(`peak RSS MB, trawl: ${pairs.map(({ t }) => f0(t.peakRssMb)).join(', ')}; baseline: ${pairs.map(({ o }) => f0(o.peakRssMb)).join(', ')}`)
}

async function main() {
  const { values } = parseArgs({
    options: {
      pages: { type: 'string', default: '20000' },
      second: { type: 'string' },
      only: { type: 'string' },
      concurrency: { type: 'string', default: '16' },
      threads: { type: 'string', default: '8' },
      seed: { type: 'string', default: '1' },
      server: { type: 'string', default: 'auto' },
      timeout: { type: 'string', default: '900' },
      rounds: { type: 'string', default: '3' },
      binary: { type: 'string', default: join(ROOT, 'dist', 'trawl') },
      keep: { type: 'boolean', default: false },
      'page-bytes': { type: 'string' },
      json: { type: 'string' },
      serve: { type: 'string' },
      port: { type: 'string' },
      docs: { type: 'string' },
      'docs-start': { type: 'string', default: 'index.html' },
      baseline: { type: 'string' },
    },
  })
  if (values.serve) return serveMain(values.serve, Number(values.port))

  const pages = Number(values.pages)
  const second = values.second ? Number(values.second) : null
  const seed = Number(values.seed)
  const pageBytes = values['page-bytes'] === undefined ? null : Number(values['page-bytes'])
  if (pageBytes !== null && (!Number.isInteger(pageBytes) || pageBytes < 1024)) throw new Error('--page-bytes: a whole number of at least 1024')
  const timeoutS = Number(values.timeout)
  const concurrency = Number(values.concurrency)
  const threads = Number(values.threads)
  const rounds = Number(values.rounds)
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds: a whole number of at least 1')
  const only = new Set((values.only ?? 'trawl,crawlee,wget2').split(',').map((s) => s.trim()))
  for (const o of only) if (!['trawl', 'crawlee', 'wget2', 'floor', 'postgres'].includes(o)) throw new Error(`--only: trawl, crawlee, wget2, floor or postgres, got "${o}"`)
  if (only.has('postgres') && !only.has('trawl')) throw new Error('--only postgres: only with trawl, which it is compared with')
  if (!['auto', 'nginx', 'bun'].includes(values.server!)) throw new Error(`--server: auto, nginx or bun, got "${values.server}"`)
  if (!Number.isInteger(pages) || pages < 10) throw new Error('--pages: a whole number of at least 10')
  const docs = values.docs
  if (docs && (second || pageBytes !== null)) throw new Error('--docs: not with --second or --page-bytes, which shape the generated site')

  // What is there to run, and what is not (reported, skipped).
  const skip: Record<string, string> = {}
  if (only.has('trawl') && !existsSync(values.binary!)) skip.trawl = `no binary at ${values.binary}: run \`bun run build\` first`
  if (values.baseline !== undefined && !only.has('trawl')) throw new Error('--baseline: only with trawl among --only')
  if (values.baseline !== undefined && !existsSync(values.baseline)) throw new Error(`--baseline: no binary at ${values.baseline}`)
  if (only.has('crawlee')) {
    const why = crawleeMissing()
    if (why) skip.crawlee = why
  }
  if (only.has('wget2') && !Bun.which('wget2')) skip.wget2 = 'wget2 is not installed (apt-get install -y wget2)'
  for (const [name, why] of Object.entries(skip)) console.log(`${name}: unavailable, skipped: ${why}`)

  const work = mkdtempSync(join(tmpdir(), 'trawl-bench-crawl-'))
  const servers: Server[] = []
  // A private copy of the binary, so a rebuild of dist/ during the run does not pull it away.
  const binary = join(work, 'trawl')
  if (!skip.trawl) copyFileSync(values.binary!, binary)
  const baseline = values.baseline === undefined ? null : join(work, 'trawl-baseline')
  if (baseline && !skip.trawl) copyFileSync(values.baseline!, baseline)
  const report: Record<string, unknown> = { cores: cpus().length, loadavgBefore: loadavg(), seed, pageBytes }
  try {
    const load = loadavg()[0]!
    console.log(`crawl bench: ${cpus().length} cores, load average ${load.toFixed(2)}${load > 1 ? ' (the machine is busy: numbers will be low and noisy)' : ''}`)

    // `which`: crawlers in order, each with the round it belongs to (if any).
    // `n`: the generated site's pages, or 'docs' for the documentation site.
    const runSite = async (n: number | 'docs', which: { name: string; round?: number }[]): Promise<{ site: Site; server: Server; results: Result[] }> => {
      const port = await freePort()
      const dir = join(work, `site-${n}`)
      const g0 = performance.now()
      let site: Site
      let server: Server
      if (n === 'docs') {
        mkdirSync(dir, { recursive: true })
        const d = docsSite(docs!, values['docs-start']!, dir, port)
        site = d
        server = await startServer(site, dir, values.server!)
        console.log(
          `site: ${docs}${d.copied ? ` (copied with cp -rL: ${d.copied} symlinks lead outside it)` : ''}, ${d.files} files, ${(site.bytes / 1024 / 1024).toFixed(1)} MB, served by ${server.kind} at ${site.base}, crawled from ${site.start}`,
        )
      } else {
        site = generateSite(dir, n, port, seed, pageBytes)
        server = await startServer(site, dir, values.server!)
        console.log(
          `site: ${n} pages, ${(site.bytes / 1024 / 1024).toFixed(1)} MB (mean ${(site.bytes / n / 1024).toFixed(1)} KB), ${LINKS} links a page, generated in ${((performance.now() - g0) / 1000).toFixed(1)}s, served by ${server.kind} at ${site.base}`,
        )
      }
      servers.push(server)
      const results: Result[] = []
      for (const { name, round } of which) {
        if (skip[name]) continue
        process.stdout.write(`running ${name}${round === undefined ? '' : ` (round ${round})`} ... `)
        const r =
          name === 'trawl'
            ? await runTrawl(binary, site, dir, server, timeoutS, 'trawl', concurrency)
            : name === 'baseline'
              ? await runTrawl(baseline!, site, dir, server, timeoutS, BASELINE, concurrency)
              : name === 'postgres'
                ? await runOnPostgres(binary, site, dir, server, timeoutS, concurrency)
                : name === 'crawlee'
                  ? await runCrawlee(site, dir, server, concurrency, timeoutS)
                  : name === 'floor'
                    ? await runFloor(site, dir, server, concurrency, timeoutS)
                    : await runWget2(site, dir, server, threads, timeoutS)
        console.log(`${r.pages} pages in ${r.seconds.toFixed(1)}s (${r.pagesPerSec.toFixed(0)} pages/s)`)
        if (round !== undefined) r.round = round
        results.push(r)
      }
      return { site, server, results }
    }

    // wget2 first (also warms the page cache for the others), then trawl, `rounds` times; then
    // Crawlee once (it takes minutes, and only its memory is judged).
    const turns: { name: string; round?: number }[] = []
    const crawlers = [
      ...['wget2', 'trawl'].filter((n) => only.has(n)),
      ...(baseline && !skip.trawl ? ['baseline'] : []),
      ...(only.has('postgres') && !skip.trawl ? ['postgres'] : []),
      ...(only.has('floor') ? ['floor'] : []),
    ]
    for (let round = 1; round <= rounds; round++) for (const name of crawlers) turns.push({ name, ...(rounds > 1 ? { round } : {}) })
    if (only.has('crawlee')) turns.push({ name: 'crawlee' })
    if (docs) {
      const run = await runSite('docs', turns)
      expectFromWget2(run.results)
      console.log(`\ntrawl: concurrency and per-host concurrency ${concurrency}; Crawlee: concurrency ${concurrency}; wget2: ${threads} threads`)
      console.log(`site: ${docs}, from ${values['docs-start']}; pages each crawler got: ${run.results.map((r) => `${label(r)} ${r.pages}`).join(', ')}`)
      printTable(run.results)
      printDocsRatios(run.results)
      printBaseline(run.results, false)
      printFloor(run.results, false)
      report.docs = { dir: docs, start: values['docs-start'], server: run.server.kind, siteBytes: run.site.bytes, results: run.results }
      await run.server.stop()
      servers.splice(servers.indexOf(run.server), 1)
    } else {
      const main = await runSite(pages, turns)
      console.log(`\ntrawl: concurrency and per-host concurrency ${concurrency}; Crawlee: concurrency ${concurrency}; wget2: ${threads} threads`)
      printTable(main.results)
      printVerdicts(main.results)
      printBaseline(main.results, true)
      printFloor(main.results, true)
      printPostgres(main.results)
      report.main = { pages, server: main.server.kind, siteBytes: main.site.bytes, results: main.results }
      await main.server.stop()
      servers.splice(servers.indexOf(main.server), 1)
      if (!values.keep) rmSync(main.site.dir.replace(/\/site$/, ''), { recursive: true, force: true })
    }

    if (second && !skip.trawl) {
      console.log(`\nscalability: trawl alone on ${second} pages`)
      const big = await runSite(second, [{ name: 'trawl' }])
      const r = big.results[0]!
      printTable(big.results)
      const ratio = (r.lastTenthPagesPerSec ?? NaN) / (r.firstTenthPagesPerSec ?? NaN)
      console.log(`peak RSS ${f0(r.peakRssMb)} MB (target < 200): ${r.peakRssMb < 200 ? 'met' : 'NOT met'}`)
      console.log(`last tenth / first tenth pages/s ${f2(ratio)} (target ≥ 0.9): ${ratio >= 0.9 ? 'met' : 'NOT met'}`)
      console.log(`all ${second} pages visited: ${r.pages === second ? 'yes' : `NO (${r.pages})`}`)
      report.second = { pages: second, server: big.server.kind, siteBytes: big.site.bytes, result: r, lastOverFirst: ratio }
      await big.server.stop()
      servers.splice(servers.indexOf(big.server), 1)
    } else if (second) console.log('\nscalability run skipped: trawl is unavailable')
    report.loadavgAfter = loadavg()
    if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2))
  } finally {
    for (const s of servers) await s.stop()
    await pg?.s3.stop()
    if (values.keep) console.log(`kept: ${work}`)
    else rmSync(work, { recursive: true, force: true })
  }
}

await main()
