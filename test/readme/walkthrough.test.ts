import { expect, test } from 'bun:test'
import { matches, normalize, walkthroughSteps } from './walkthrough'

test('steps: commands, continuations, background and what each prints', () => {
  const md = 'x\n<!-- run:start -->\n```console\n$ a --x \\\n  --y\nout 1\nout 2\n$ b &\nready\n$ c && d\n```\n<!-- run:end -->\n```console\n$ not run\n```\n'
  expect(walkthroughSteps(md)).toEqual([
    { command: 'a --x \\\n  --y', expected: ['out 1', 'out 2'], background: false },
    { command: 'b &', expected: ['ready'], background: true },
    { command: 'c && d', expected: [], background: false },
  ])
})

test('matching: volatile values, `...` lines and `…` inside a line', () => {
  expect(normalize('run 1b4e28ba-2fa1-11d2-883f-0016d3cca427 at 2026-11-27T13:00:00.123Z took 1.5s, 12 KiB')).toBe('run <uuid> at <time> took <duration>, <size>')
  expect(matches(['a', '...', 'd'], ['a', 'b', 'c', 'd'])).toBe(true)
  expect(matches(['a', '...', 'd'], ['a', 'd'])).toBe(true)
  expect(matches(['a', '...', 'd'], ['a', 'b', 'c'])).toBe(false)
  expect(matches(['{"id":"…","status":"finished"…'], ['{"id":"x","status":"finished","n":1}'])).toBe(true)
  expect(matches(['{"id":"…","status":"finished"…'], ['{"id":"x","status":"running"}'])).toBe(false)
  expect(matches(['one'], ['one', 'two'])).toBe(false)
})
