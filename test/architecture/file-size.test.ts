import { expect, test } from 'bun:test'
import { readSource, sourceFiles } from './source'

/** The project's rule for src/: a file that grows past this is two concepts, to be split along their seam. */
const MAX_LINES = 400

const linesOf = (text: string) => (text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0))

test(`no .ts file in src/ is over ${MAX_LINES} lines`, () => {
  const files = sourceFiles()
  expect(files.length).toBeGreaterThan(100) // the walk found src/
  const over = files.map((file) => ({ file, lines: linesOf(readSource(file)) })).filter((f) => f.lines > MAX_LINES)
  expect(over.map((f) => `${f.file}: ${f.lines} lines`)).toEqual([])
})

test('lines are counted as an editor numbers them: a last line without a newline counts too', () => {
  expect([linesOf(''), linesOf('a'), linesOf('a\n'), linesOf('a\nb\n'), linesOf('a\n\n')]).toEqual([0, 1, 1, 2, 2])
})
