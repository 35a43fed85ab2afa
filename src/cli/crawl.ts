import { ConfigError, loadConfig, tenantFlag } from '../config'
import { DomainError } from '../core/errors'
import { checkConfig, CrawlConfig } from '../crawl/manifest'
import { LEASE_MS, type Outcome } from '../crawl/execution'
import { Scope } from '../crawl/scope'
import type { Run } from '../store/runs'
import { parseDuration } from '../util/duration'
import { regexProblem } from '../util/re2'
import { openCrawlResources } from '../crawl/resources'
import { createAdHocRun } from '../runs/create'
import { Runner } from '../crawl/runner'
import { processOwner } from '../util/process'
import { normalizeUrl } from '../core/url'
import { createLogger } from '../log'
import { Value } from '@sinclair/typebox/value'
import { exportTarget, writeExport } from './export-output'

/**
 * `trawl crawl URL [--max-urls N] [--max-depth N] [--concurrency N] [--per-host-concurrency N]
 * [--include REGEX]… [--exclude REGEX]… [--same-domain] [--sitemaps] [--delay DURATION]
 * [-o FILE] [--out-dir DIR] [--data-dir D] [--tenant T]`: an ad-hoc job and
 * run in the local data dir, crawled in this process with a live progress line, then a summary
 * with the run's outcome and its failed URLs by reason, then its pages (`-o` JSONL, `--out-dir`
 * markdown files) as `trawl export` writes them. Ctrl-C stops the run with stop reason
 * `manual`. Private addresses are allowed (design.md §1). Exit statuses: docs/crawl.md.
 */
export async function crawlCommand(argv: string[], out: NodeJS.WriteStream = process.stdout, err: NodeJS.WriteStream = process.stderr): Promise<number> {
  const { config, positionals, flags } = loadConfig(
    argv,
    { ...process.env, TRAWL_ALLOW_PRIVATE_NETWORKS: process.env.TRAWL_ALLOW_PRIVATE_NETWORKS ?? 'true' },
    {
      'max-urls': { type: 'string' },
      'max-depth': { type: 'string' },
      concurrency: { type: 'string' },
      'per-host-concurrency': { type: 'string' },
      tenant: { type: 'string' },
      include: { type: 'string', multiple: true },
      exclude: { type: 'string', multiple: true },
      'same-domain': { type: 'boolean' },
      sitemaps: { type: 'boolean' },
      delay: { type: 'string' },
      out: { type: 'string', short: 'o' },
      'out-dir': { type: 'string' },
    },
  )
  if (positionals.length !== 1) throw new ConfigError('crawl takes one URL: trawl crawl URL [--max-urls N] [--max-depth N]')
  const seed = normalizeUrl(positionals[0]!)
  if (!seed) throw new ConfigError(`crawl: "${positionals[0]}" is not an absolute http(s) URL`)
  const tenant = tenantFlag(flags.tenant)
  const whole = (name: string, max: number) => {
    const raw = flags[name] as string | undefined
    if (raw === undefined) return undefined
    if (!/^\d+$/.test(raw) || Number(raw) > max) throw new ConfigError(`--${name}: must be a whole number 0..${max}, got "${raw}"`)
    return Number(raw)
  }
  const maxUrls = whole('max-urls', 100_000_000)
  const maxDepth = whole('max-depth', 1000)
  const concurrency = whole('concurrency', 256)
  const perHost = whole('per-host-concurrency', 64)
  if (maxUrls === 0) throw new ConfigError('--max-urls: must be at least 1')
  if (concurrency === 0 || perHost === 0) throw new ConfigError(`--${concurrency === 0 ? 'concurrency' : 'per-host-concurrency'}: must be at least 1`)
  const include = patterns('include', flags.include)
  const exclude = patterns('exclude', flags.exclude)
  const delay = delayFlag(flags.delay as string | undefined)
  // Checked now: a crawl must not run for an hour and then refuse to write its pages.
  const target = exportTarget(flags, null)
  const scope = {
    ...(flags['same-domain'] ? { domains: 'same_domain' as const } : {}),
    ...(include.length ? { include } : {}),
    ...(exclude.length ? { exclude } : {}),
  }
  // A seed the flags put out of scope would end the run before its first fetch: say so now.
  const outOfScope = new Scope([seed], { domains: scope.domains ?? 'same_host', include, exclude }).whyOut(seed)
  if (outOfScope) throw new ConfigError(`crawl: the seed ${seed} ${outOfScope.replace('scope.include', '--include').replace('scope.exclude', '--exclude')}, so nothing would be crawled`)
  const jobConfig = {
    seeds: [seed],
    ...(flags.sitemaps ? { sitemaps: true } : {}),
    ...(Object.keys(scope).length ? { scope } : {}),
    limits: { ...(maxUrls !== undefined ? { max_urls: maxUrls } : {}), ...(maxDepth !== undefined ? { max_depth: maxDepth } : {}) },
    politeness: { ...(concurrency !== undefined ? { concurrency } : {}), ...(perHost !== undefined ? { per_host_concurrency: perHost } : {}), ...(delay !== undefined ? { delay } : {}) },
  }
  const problems = checkConfig(jobConfig, 'config', Object.keys(config.proxies))
  if (!Value.Check(CrawlConfig, jobConfig) || problems.size) throw new ConfigError('crawl: the job config is not valid')

  const log = createLogger(config.logLevel === 'debug' ? 'debug' : 'warn')
  const resources = await openCrawlResources(config, log)
  const { store } = resources
  const owner = processOwner()
  // The run is leased to this runner as it is created: a `trawl serve` on the same data dir
  // sees it running and held, never pending, so it cannot take it first.
  const created = await createAdHocRun(store, tenant, seed, jobConfig, { owner, ms: LEASE_MS })
  const { run } = created
  const runSeq = created.runSeq!
  const runner = new Runner(resources, 1, runSeq, owner)
  const finished = new Promise<Outcome>((resolve) => {
    runner.onFinish = (seq, outcome) => {
      if (seq === runSeq && 'finished' in outcome) resolve(outcome)
      else if (seq === runSeq && 'left' in outcome && outcome.left !== 'shutdown') resolve(outcome)
    }
  })
  out.write(`crawling ${seed} (run ${run.id}, ${resources.engine === 'sqlite' ? 'data dir' : 'database'} ${resources.where})\n`)
  const started = Date.now()
  const tty = Boolean(err.isTTY)
  let last = ''
  let crawling = true
  const progress = setInterval(async () => {
    const c = (await store.runs.get(tenant, run.id))!.stats
    if (!crawling) return // the summary is being written
    const seconds = (Date.now() - started) / 1000
    const line = `visited ${c.visited}  queued ${c.queued}  failed ${c.failed}  ${(c.visited / Math.max(seconds, 0.001)).toFixed(1)} pages/s`
    if (line === last) return
    last = line
    err.write(tty ? `\r\x1b[K${line}` : `${line}\n`)
  }, 500)
  let interrupted: NodeJS.Signals | null = null
  const onSigint = (signal: NodeJS.Signals) => {
    interrupted ??= signal
    // The stop endpoint's move: the run finishes with `manual` and the execution leaves promptly.
    // A run that finished meanwhile (a conflict) has nothing left to stop.
    store.runs.move(tenant, run.id, 'stop').catch((e: unknown) => {
      if (!(e instanceof DomainError && e.code === 'conflict')) throw e
    })
  }
  // Ctrl-C, and the ends a terminal or a supervisor gives (SIGTERM, SIGHUP), all stop the run:
  // left with a dead holder's lease it would be finished by any serve on the data dir instead.
  for (const signal of STOP_SIGNALS) process.on(signal, onSigint)
  runner.start()
  const outcome = await finished
  crawling = false
  clearInterval(progress)
  for (const signal of STOP_SIGNALS) process.off(signal, onSigint)
  await runner.stop()
  const final = (await store.runs.get(tenant, run.id))!
  if (tty) err.write('\n')
  const seconds = (Date.now() - started) / 1000
  out.write(
    `${final.status === 'finished' ? `finished: ${final.stop_reason}` : `left ${final.status}`} after ${seconds.toFixed(1)}s: visited ${final.stats.visited}, failed ${final.stats.failed}, queued ${final.stats.queued}, ${formatBytes(final.stats.bytes)}\n`,
  )
  out.write(outcomeLines(final))
  // The pages as a person reads them (main-content markdown), even of a stopped crawl: what it
  // got is what the run holds.
  if (target && final.stats.visited + final.stats.failed > 0) {
    try {
      await writeExport(resources, tenant, run.id, target, true, out)
    } catch (e) {
      err.write(`trawl: the pages could not be written: ${(e as Error).message}\n`)
      await resources.close()
      return 1
    }
  }
  await resources.close()
  // 128 + the signal's number, as a shell reports a command a signal ended: 130 for Ctrl-C.
  if (interrupted) return 128 + SIGNAL_NUMBERS[interrupted as (typeof STOP_SIGNALS)[number]]
  if (!('finished' in outcome) && final.status !== 'finished') return 1
  return final.outcome === 'failed' ? 1 : 0
}

/**
 * The outcome in words and the failed URLs by reason, most frequent first, one a line (the
 * end-of-crawl stats a person reads first).
 */
function outcomeLines(run: Run): string {
  if (!run.outcome) return ''
  const counts = Object.entries(run.error_counts)
  const width = Math.max(0, ...counts.map(([reason]) => reason.length))
  return `outcome: ${run.outcome} (${OUTCOME_WORDS[run.outcome](run)})\n${counts.length ? `errors by reason:\n${counts.map(([reason, n]) => `  ${reason.padEnd(width)}  ${n}\n`).join('')}` : ''}`
}

const OUTCOME_WORDS: Record<NonNullable<Run['outcome']>, (run: Run) => string> = {
  complete: () => 'nothing was left to visit',
  limited: (run) => (run.stop_reason === 'max_depth' ? 'max_depth kept links out of the crawl' : `${run.stop_reason} ended the crawl with URLs left to visit`),
  stalled: () => 'the URLs still queued waited too long and were given up',
  stopped: () => 'stopped before the end',
  failed: (run) => (run.stop_reason === 'empty_seed' && run.stats.failed === 0 ? 'no seed could be crawled: out of scope or disallowed by robots.txt' : 'no page could be fetched'),
}

/** `--include` / `--exclude`: RE2 patterns, each checked as the job config checks them. */
function patterns(name: string, raw: unknown): string[] {
  const list = raw === undefined ? [] : Array.isArray(raw) ? (raw as string[]) : [raw as string]
  if (list.length > 100) throw new ConfigError(`--${name}: at most 100 patterns, got ${list.length}`)
  for (const p of list) {
    if (!p || p.length > 4096) throw new ConfigError(`--${name}: a pattern must be 1..4096 characters, got ${p.length}`)
    const problem = regexProblem(p)
    if (problem) throw new ConfigError(`--${name}: "${p}" ${problem}`)
  }
  return list
}

/** `--delay`: a duration (`500ms`, `2s`, `1m`) or a bare number of seconds (`1.5`), at most 1h. */
function delayFlag(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  const seconds = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : null
  const ms = seconds !== null ? Math.round(seconds * 1000) : parseDuration(raw)
  if (ms === null) throw new ConfigError(`--delay: must be a duration such as 500ms or 2s, or a number of seconds, got "${raw}"`)
  if (ms > 3_600_000) throw new ConfigError(`--delay: must be at most 1h, got "${raw}"`)
  return seconds !== null ? `${ms}ms` : raw
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
const SIGNAL_NUMBERS: Record<(typeof STOP_SIGNALS)[number], number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }

const formatBytes = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`)
