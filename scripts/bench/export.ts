#!/usr/bin/env bun
// Benchmark of `trawl export` (not a test): a run of the crawl benchmark's synthetic site (made
// by scripts/bench/crawl.ts: `--pages` pages, 20 links and 3-20 KB of text each), crawled by the
// compiled binary with full recording, then exported by the same binary under /usr/bin/time -v:
// pages/s, CPU seconds and peak RSS, as JSONL to a file (markdown of the main content, metadata
// and links rendered on the parse workers) and optionally as an --out-dir. Targets:
// peak RSS under 200 MB on 100,000 pages; at least 300 pages/s with both cores busy.
//
//   bun scripts/bench/export.ts [--pages 100000] [--binary dist/trawl] [--data-dir DIR] [--out-dir] [--keep]
//
// `--data-dir DIR` exports a run already crawled there (the newest run) instead of crawling.
// Needs nginx or falls back to Bun's server, as the crawl bench does; ~2 GB of disk at 100,000
// pages, removed at the end unless `--keep`.
import { Database } from 'bun:sqlite'
import { existsSync, rmSync, statSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const ROOT = join(import.meta.dir, '..', '..')

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '100000' },
    binary: { type: 'string', default: join(ROOT, 'dist', 'trawl') },
    'data-dir': { type: 'string' },
    'out-dir': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
})
const pages = Number(values.pages)
const binary = values.binary!
if (!existsSync(binary)) throw new Error(`no binary at ${binary}: run \`npm run build\` first`)
if (!existsSync('/usr/bin/time')) throw new Error('/usr/bin/time is missing (apt-get install -y time)')

async function crawl(): Promise<{ dataDir: string; work: string }> {
  // The crawl bench crawls the site into <work>/site-<pages>/trawl-data-<pages> and keeps it with --keep.
  console.log(`crawling ${pages} pages of the synthetic site with scripts/bench/crawl.ts (trawl only, one round)…`)
  const proc = Bun.spawn([process.execPath, join(ROOT, 'scripts/bench/crawl.ts'), '--only', 'trawl', '--rounds', '1', '--pages', String(pages), '--binary', binary, '--keep', '--timeout', '3600'], {
    cwd: ROOT,
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const summary = out.split('\n').filter((l) => /^\| trawl|summary:/.test(l))
  for (const l of summary) console.log(`  ${l}`)
  const work = /^kept: (.+)$/m.exec(out)?.[1]
  if (!work) throw new Error(`the crawl bench kept no work dir:\n${out.slice(-2000)}`)
  return { dataDir: join(work, `site-${pages}`, `trawl-data-${pages}`), work }
}

type Timed = { seconds: number; cpuSeconds: number; peakRssMb: number; code: number; stdout: string; stderr: string }

/** One command under /usr/bin/time -v: wall, user+sys and maximum resident set size. */
async function timed(cmd: string[]): Promise<Timed> {
  const t0 = performance.now()
  const proc = Bun.spawn(['/usr/bin/time', '-v', ...cmd], { stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  const code = await proc.exited
  const seconds = (performance.now() - t0) / 1000
  const num = (label: string) => Number(new RegExp(`${label}: ([\\d.]+)`).exec(stderr)?.[1] ?? NaN)
  return { seconds, cpuSeconds: num('User time \\(seconds\\)') + num('System time \\(seconds\\)'), peakRssMb: num('Maximum resident set size \\(kbytes\\)') / 1024, code, stdout, stderr }
}

const { dataDir, work } = values['data-dir'] ? { dataDir: values['data-dir'], work: null } : await crawl()
const db = new Database(join(dataDir, 'trawl.db'), { readonly: true })
const run = db.query('SELECT r.id, r.tenant, (SELECT count(*) FROM visits v WHERE v.run_seq = r.seq) AS visits FROM runs r ORDER BY r.seq DESC LIMIT 1').get() as {
  id: string
  tenant: string
  visits: number
}
db.close()
console.log(`export bench: ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(2)}; run ${run.id}: ${run.visits} visits`)

const outFile = join(work ?? tmpdir(), `export-${run.id}.jsonl`)
const jsonl = await timed([binary, 'export', run.id, '--data-dir', dataDir, '--tenant', run.tenant, '-o', outFile])
// Judged by trawl's own line: GNU time, spawned from Bun, exits 1 after a command that exited 0
// (its stderr then lacks the "Command exited with non-zero status" line it writes otherwise).
const failed = (t: Timed) => !/^exported \d+ pages/.test(t.stdout) || /Command exited with non-zero status|Command terminated by signal/.test(t.stderr)
if (failed(jsonl)) throw new Error(`trawl export failed (${jsonl.code}):\n${jsonl.stdout}${jsonl.stderr.slice(0, 2000)}`)
const lines = Number((await Bun.$`wc -l < ${outFile}`.text()).trim())
const report = (what: string, t: Timed, n: number) =>
  console.log(
    `${what}: ${n} pages in ${t.seconds.toFixed(1)} s = ${(n / t.seconds).toFixed(0)} pages/s; CPU ${t.cpuSeconds.toFixed(1)} s (${((t.cpuSeconds / t.seconds) * 100).toFixed(0)}% of one core); peak RSS ${t.peakRssMb.toFixed(0)} MB`,
  )
report('export JSONL', jsonl, lines)
console.log(`  output ${(statSync(outFile).size / 1024 / 1024).toFixed(0)} MB; ${lines === run.visits ? 'one line per visit' : `LINES ${lines} != VISITS ${run.visits}`}`)
console.log(`  peak RSS < 200 MB: ${jsonl.peakRssMb < 200 ? 'met' : 'NOT met'}; ≥ 300 pages/s: ${lines / jsonl.seconds >= 300 ? 'met' : 'NOT met'}`)
rmSync(outFile, { force: true })

if (values['out-dir']) {
  const dir = join(work ?? tmpdir(), `export-${run.id}`)
  const t = await timed([binary, 'export', run.id, '--data-dir', dataDir, '--tenant', run.tenant, '--out-dir', dir])
  if (failed(t)) throw new Error(`trawl export --out-dir failed (${t.code}):\n${t.stdout}${t.stderr.slice(0, 2000)}`)
  report('export --out-dir', t, run.visits)
  rmSync(dir, { recursive: true, force: true })
}
if (work && !values.keep) rmSync(work, { recursive: true, force: true })
else if (work) console.log(`kept: ${work}`)
