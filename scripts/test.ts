// The test command (README, .ci/run): builds the binary the end-to-end tests drive, runs
// `bun test`, and ends with the plain `N passed, N failed` line CI reads (bun's own summary is
// not read there), keeping bun's exit code.
import { mkdirSync, readFileSync, rmSync } from 'node:fs'

const bun = process.execPath
const build = Bun.spawnSync([bun, 'scripts/build.ts'], { stdout: 'inherit', stderr: 'inherit' })
if (build.exitCode !== 0) {
  console.log('0 passed, 1 failed')
  process.exit(1)
}

const report = '.test-results/junit.xml'
mkdirSync('.test-results', { recursive: true })
rmSync(report, { force: true })
// bunfig's [test] timeout did not take effect in Bun 1.4.5; the flag does.
const run = Bun.spawnSync([bun, 'test', '--timeout=30000', '--reporter=junit', `--reporter-outfile=${report}`, ...process.argv.slice(2)], {
  stdout: 'inherit',
  stderr: 'inherit',
  env: { ...process.env, TRAWL_BINARY: `${process.cwd()}/dist/trawl` },
})

let passed = 0
let failed = 0
let skipped = 0
try {
  const xml = readFileSync(report, 'utf8')
  for (const [, body] of xml.matchAll(/<testcase\b[^>]*?(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    if (body && /<(failure|error)\b/.test(body)) failed++
    else if (body && /<skipped\b/.test(body)) skipped++
    else passed++
  }
} catch {
  failed = Math.max(failed, 1) // no report means the run itself broke
}
const code = run.exitCode ?? 1
if (code !== 0 && failed === 0) failed = 1 // e.g. an error outside any test
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
process.exit(code)
