import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BINARY, childEnv, ensureBinary, REPO } from '../helpers/binary'
import { matches, Shell, walkthroughSteps } from './walkthrough'

// The README's examples, run as a person would run them from a clone: one shell, in order, in a
// directory that looks like the clone (the built binary at dist/trawl, the example site, npm's
// scripts), with no TRAWL_* setting inherited. `npm install` is what the test run already did.
const readme = readFileSync(join(REPO, 'README.md'), 'utf8')
const steps = walkthroughSteps(readme).filter((s) => !/^npm (install|ci)\b/.test(s.command))

const work = mkdtempSync(join(tmpdir(), 'trawl-readme-'))
let shell: Shell | null = null
afterAll(async () => {
  await shell?.close()
  rmSync(work, { recursive: true, force: true })
})

test('the README has a walk-through to run', () => {
  expect(steps.length).toBeGreaterThan(5)
  expect(steps.some((s) => s.command.includes('dist/trawl crawl'))).toBe(true)
})

test('every README command prints what the README shows', async () => {
  await ensureBinary()
  for (const name of ['package.json', 'node_modules', 'scripts', 'examples']) symlinkSync(join(REPO, name), join(work, name))
  mkdirSync(join(work, 'dist'))
  symlinkSync(BINARY, join(work, 'dist', 'trawl'))
  shell = new Shell(work, childEnv({ PATH: `${join(REPO, 'node_modules/.bin')}:${process.env.PATH}` }))
  for (const step of steps) {
    const { output, status } = await shell.run(step, 60_000)
    if (!matches(step.expected, output)) {
      throw new Error(`README: \`${step.command}\` printed (exit ${status}):\n${output.join('\n')}\n\nThe README shows:\n${step.expected.join('\n')}`)
    }
  }
}, 180_000)
