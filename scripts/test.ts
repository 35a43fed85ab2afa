// The test command (README, .ci/run): builds the binary the end-to-end tests drive, then runs the
// suite in two passes, as Drizzle runs its suite once per driver:
//   1. `bun test` of everything on the SQLite engine, but the PostgreSQL engine's own files;
//   2. the API tests (test/api) and the end-to-end files of POSTGRES_E2E again with
//      TRAWL_TEST_ENGINE=postgres, and the PostgreSQL engine's own files, on a throwaway cluster
//      the tests start (test/helpers/postgres.ts) and an S3-compatible server for the binary's
//      bodies (test/helpers/binary-engine.ts).
// Each pass writes its junit report; the script ends with the plain `N passed, N failed` line CI
// reads (bun's own summary is not read there), the sum of both, and fails when either failed.
// Above that line it lists each failed test with the start of its failure: with two workers a
// failure is printed far up the log, and a CI record may keep only the log's end.
//
// Extra arguments go to `bun test` in both passes. Paths among them choose the files: the first
// pass runs them as given, the second their share of test/api and POSTGRES_E2E (and none when
// there is none).
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { relative, resolve } from 'node:path'

const bun = process.execPath
const build = Bun.spawnSync([bun, 'scripts/build.ts'], { stdout: 'inherit', stderr: 'inherit' })
if (build.exitCode !== 0) {
  console.log('0 passed, 1 failed')
  process.exit(1)
}

/** What the second pass runs: the engine-neutral API suite and the PostgreSQL engine's own tests. */
const API = 'test/api'
const POSTGRES_FILES = 'postgres' // bun's path filter: every test file with it in its path
/**
 * The end-to-end files the second pass runs too: the compiled binary on PostgreSQL and S3. Not
 * here, for the suite's time (under 10 minutes on two cores): fetch, scrape and scrape-render,
 * whose processes never open the store (the fetcher, the scrape API and Chromium are the same on
 * both engines), and triggers, which mostly waits for clock ticks and whose firing on PostgreSQL
 * test/cluster/triggers-payments.test.ts and the store's trigger tests cover. Tests inside these
 * files about SQLite itself, or that the store takes no part in, are defined in the first pass
 * only (sqliteOnlyTest in test/helpers/binary-engine.ts).
 */
const POSTGRES_E2E = [
  'test/e2e/binary.test.ts',
  'test/e2e/crash-records.test.ts',
  'test/e2e/crawl-outcome.test.ts',
  'test/e2e/crawl.test.ts',
  'test/e2e/export.test.ts',
  'test/e2e/extract.test.ts',
  'test/e2e/mcp.test.ts',
  'test/e2e/metrics.test.ts',
  'test/e2e/parse.test.ts',
  'test/e2e/webhooks.test.ts',
  'test/e2e/x402.test.ts',
]
/** The PostgreSQL engine's own files, left out of the first pass when no path is given. */
const POSTGRES_IGNORED = ['**/*postgres*.test.ts', '**/postgres/**']

/** `isolate`: each file in a fresh global (bun's default with --parallel), or one global a worker. */
type Pass = { name: string; report: string; args: string[]; env: Record<string, string>; isolate: boolean }
type Outcome = { passed: number; failed: number; skipped: number; code: number; seconds: number; failures: string[] }

const args = process.argv.slice(2)
const isPath = (a: string) => !a.startsWith('-') && existsSync(a)
const flags = args.filter((a) => !isPath(a))
const paths = args.filter(isPath).map((p) => relative(process.cwd(), resolve(p)) || '.')

/** The given paths' share of the second pass: test/api (itself when a path holds it, else the paths inside it) and the POSTGRES_E2E files they hold. */
function secondPassPaths(given: string[]): string[] {
  const inside = (p: string, dir: string) => dir === '.' || p === dir || p.startsWith(`${dir}/`)
  const api = given.some((p) => inside(API, p)) ? [API] : given.filter((p) => inside(p, API))
  return [...api, ...POSTGRES_E2E.filter((file) => given.some((p) => inside(file, p)))]
}

const passes: Pass[] = []
const postgresEnv = { TRAWL_TEST_ENGINE: 'postgres' }
if (paths.length === 0) {
  passes.push({ name: 'sqlite', report: '.test-results/junit.xml', args: [...POSTGRES_IGNORED.map((p) => `--path-ignore-patterns=${p}`), ...flags], env: {}, isolate: true })
  passes.push({ name: 'postgres', report: '.test-results/junit-postgres.xml', args: [...flags, API, ...POSTGRES_E2E, POSTGRES_FILES], env: postgresEnv, isolate: false })
} else {
  passes.push({ name: 'sqlite', report: '.test-results/junit.xml', args: [...flags, ...paths], env: {}, isolate: true })
  const second = secondPassPaths(paths)
  if (second.length) passes.push({ name: 'postgres', report: '.test-results/junit-postgres.xml', args: [...flags, ...second], env: postgresEnv, isolate: false })
}

mkdirSync('.test-results', { recursive: true })

function run(pass: Pass): Outcome {
  rmSync(pass.report, { force: true })
  console.log(`\n== ${pass.name}: bun test ${pass.args.join(' ')}`)
  const t0 = performance.now()
  // bunfig's [test] timeout did not take effect in Bun 1.4.5; the flag does.
  // Two worker processes share the files: most of a file's time is waiting (on the binary, the
  // fixture sites, Chromium, PostgreSQL), so two at once take about 0.75 of one's time on two
  // cores. More workers were no faster here. The SQLite pass isolates its files, so none meets
  // what an earlier one left running in its worker (a server, a timer, a grown heap), for about 15 s
  // more; the PostgreSQL pass does not (--no-isolate), so a worker keeps one PostgreSQL cluster
  // rather than starting one per file, which cost it 75 s.
  const r = Bun.spawnSync([bun, 'test', '--parallel=2', ...(pass.isolate ? [] : ['--no-isolate']), '--timeout=30000', '--reporter=junit', `--reporter-outfile=${pass.report}`, ...pass.args], {
    stdout: 'inherit',
    stderr: 'inherit',
    env: { ...process.env, TRAWL_BINARY: `${process.cwd()}/dist/trawl`, ...pass.env },
  })
  const seconds = (performance.now() - t0) / 1000
  let passed = 0
  let failed = 0
  let skipped = 0
  const failures: string[] = []
  try {
    const xml = readFileSync(pass.report, 'utf8')
    for (const [, head, body] of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
      if (body && /<(failure|error)\b/.test(body)) {
        failed++
        failures.push(describeFailure(head ?? '', body))
      } else if (body && /<skipped\b/.test(body)) skipped++
      else passed++
    }
  } catch {
    failed = Math.max(failed, 1) // no report means the run itself broke
    failures.push(`no report at ${pass.report}: bun test itself broke (see above)`)
  }
  const code = r.exitCode ?? 1
  if (code !== 0 && failed === 0) {
    failed = 1 // e.g. an error outside any test
    failures.push(`bun test exited ${code} with no failed test in its report: an error outside any test (see above)`)
  }
  return { passed, failed, skipped, code, seconds, failures }
}

const unescape = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))
    .replace(/&amp;/g, '&')
const attr = (head: string, name: string) => unescape(head.match(new RegExp(`\\b${name}="([^"]*)"`))?.[1] ?? '')

/**
 * One failed test as CI's log tail shows it: file, line, describe > name, then the first lines of
 * its failure. Bun's own report of a failure is far up a log of thousands of lines, and a CI
 * record may keep only the end of it.
 */
function describeFailure(head: string, body: string): string {
  const where = `${attr(head, 'file')}:${attr(head, 'line')}`
  const name = [attr(head, 'classname'), attr(head, 'name')].filter(Boolean).join(' > ')
  const failure = body.match(/<(?:failure|error)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/(?:failure|error)>)/)
  // The element's text is the message and then the stack; the attribute is the message alone.
  const text = unescape(failure?.[2] || attr(failure?.[1] ?? '', 'message'))
  const lines = text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter(Boolean)
    .slice(0, 16)
  return [`${where} ${name}`, ...lines.map((l) => `    ${l}`)].join('\n')
}

const outcomes = passes.map((pass) => ({ pass, ...run(pass) }))
console.log('')
for (const o of outcomes) {
  if (o.failures.length === 0) continue
  console.log(`${o.pass.name} pass, the failed tests:`)
  for (const f of o.failures) console.log(f)
  console.log('')
}
// Not in the `N passed, N failed` form, so the total below is the only line CI can take.
for (const o of outcomes) console.log(`${o.pass.name} pass: ${o.passed} passed (${o.failed} failed${o.skipped ? `, ${o.skipped} skipped` : ''}) in ${o.seconds.toFixed(1)} s`)
const sum = (k: 'passed' | 'failed' | 'skipped') => outcomes.reduce((n, o) => n + o[k], 0)
const skipped = sum('skipped')
console.log(`${sum('passed')} passed, ${sum('failed')} failed${skipped ? `, ${skipped} skipped` : ''}`)
process.exit(outcomes.find((o) => o.code !== 0)?.code ?? (sum('failed') ? 1 : 0))
