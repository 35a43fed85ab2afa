/**
 * User regular expressions: RE2 syntax compiled with re2js (linear-time matching, unlike
 * JavaScriptCore's backtracking RegExp), within a size budget, and a cache of compiled programs.
 * Pattern sets, scope include/exclude, url guards, navigators and URL patterns all come here.
 */
import { RE2JS } from 're2js'

/**
 * How many RE2 instructions one user pattern may compile to. Matching costs time proportional to
 * the URL's length times the program's size (worse when re2js's DFA keeps meeting new states), and
 * compiling costs time proportional to the size. Each `{n}` copies
 * what it repeats n times, so a 2 KB pattern could reach 290,000 instructions: 230 ms to compile
 * and 2 s to search an 8 KB URL. 1000 is far above what site URL patterns use (a product-URL
 * regex is 20 to 110 instructions, a UUID 38, `[a-z0-9-]{1,255}` 511). It bounds one pattern's
 * cost, not a set's: a pattern at the budget built against a URL still takes up to about 0.9 s on
 * 8 KB of it.
 */
export const RE2_BUDGET = 1000

/** Thrown for a pattern that compiles to more than RE2_BUDGET instructions. */
export class PatternTooLarge extends Error {}

/** The error for a pattern over `budget`, with its (estimated or real) size. */
export const tooLarge = (size: number, budget: number) =>
  new PatternTooLarge(`is too large: it compiles to about ${size} RE2 instructions, more than the ${budget} a pattern may use (a repetition such as x{n} counts x n times)`)

/**
 * Compiles an RE2 pattern whose program fits `budget` instructions; throws PatternTooLarge when
 * it does not, RE2's own error when it does not compile. A quick upper bound estimated from the
 * text rejects the huge ones before re2js spends time expanding their repetitions.
 */
export function compileRe2(source: string, budget = RE2_BUDGET): RE2JS {
  const estimate = estimateProgramSize(source)
  if (estimate > 4 * budget) throw tooLarge(estimate, budget)
  const re = RE2JS.compile(source)
  if (re.programSize() > budget) throw tooLarge(re.programSize(), budget)
  return re
}

/**
 * Why RE2 rejects a pattern, or null when it compiles. Pattern sets' size budget holds here too
 * (RE2_BUDGET): it holds for every user regex of trawl.
 */
export function regexProblem(source: string): string | null {
  try {
    compileRe2(source)
    return null
  } catch (err) {
    if (err instanceof PatternTooLarge) return err.message
    return `is not a valid RE2 regular expression: ${(err as Error).message}`
  }
}

// Compiled RE2 programs by source. Pipelines repeat the same few patterns for every document
// of a crawl, and compiling costs far more than matching; the bound keeps hostile input from
// growing the cache without end.
const compiled = new Map<string, RE2JS>()
const MAX_CACHED = 1024

/** The RE2 program for a pattern the route or manifest check already accepted. */
export function re2(source: string): RE2JS {
  let re = compiled.get(source)
  if (!re) {
    if (compiled.size >= MAX_CACHED) compiled.clear()
    re = RE2JS.compile(source)
    compiled.set(source, re)
  }
  return re
}

/**
 * An estimate of the instructions RE2 compiles `source` to, read from the text alone in time
 * linear in its length: re2js's own size count (Parser.calcSize) over a light tokenization. Each
 * atom (a character, class, escape, `.` or anchor) counts 1, a group its alternatives plus one per
 * `|` (plus 2 when it captures), `*` adds 2, `+` and `?` add 1, and `x{n,m}` counts x m times plus
 * m - n. It may count a little more than RE2 does; it only guards the compile against huge
 * expansions, compileRe2 checks the real size.
 */
export function estimateProgramSize(source: string): number {
  // `chars`: every branch so far is one character or class, which RE2 merges into one class.
  type Frame = { done: number; branches: number; cur: number; last: number; capture: boolean; chars: boolean; char: boolean }
  const frame = (capture: boolean): Frame => ({ done: 0, branches: 1, cur: 0, last: 0, capture, chars: true, char: false })
  const stack: Frame[] = []
  let f = frame(false)
  const atom = (n: number, char = false) => {
    f.char = char && f.cur === 0
    f.cur += n
    f.last = n
  }
  const repeat = (size: number) => {
    f.char = false
    f.cur += size - f.last
    f.last = size
  }
  const close = (inner: Frame) => {
    if (inner.chars && inner.char && inner.branches > 1) return 1 + (inner.capture ? 2 : 0)
    return Math.max(1, inner.done + inner.cur + inner.branches - 1 + (inner.capture ? 2 : 0))
  }
  const n = source.length
  // Skips `{…}` at i (the braces of \x{…} and \p{…}), or one character.
  const skipBraced = (i: number) => (source[i] === '{' ? Math.max(source.indexOf('}', i), i) + 1 : i + 1)
  // The index after the escape starting at i (source[i] is the backslash).
  const skipEscape = (i: number) => {
    const c = source[i + 1]
    if (c === 'x' || c === 'p' || c === 'P') return c === 'x' && source[i + 2] !== '{' ? i + 4 : skipBraced(i + 2)
    return i + 2
  }
  let i = 0
  while (i < n) {
    const c = source[i]!
    if (c === '\\' && source[i + 1] === 'Q') {
      const end = source.indexOf('\\E', i + 2)
      const literal = source.slice(i + 2, end < 0 ? n : end)
      if (literal.length > 0) {
        f.cur += literal.length - 1
        atom(1, literal.length === 1)
      }
      i = end < 0 ? n : end + 2
    } else if (c === '\\') {
      atom(1, !'bBAz'.includes(source[i + 1] ?? 'b'))
      i = skipEscape(i)
    } else if (c === '[') {
      let j = i + 1
      if (source[j] === '^') j++
      if (source[j] === ']') j++
      while (j < n && source[j] !== ']') {
        if (source[j] === '\\') j = skipEscape(j)
        else if (source.startsWith('[:', j)) j = Math.max(source.indexOf(':]', j + 2) + 2, j + 1)
        else j++
      }
      atom(1, true)
      i = j + 1
    } else if (c === '(') {
      const flagsOnly = /^\(\?[a-zA-Z-]*\)/.exec(source.slice(i, i + 16))
      if (flagsOnly) {
        i += flagsOnly[0].length
        continue
      }
      const opening = /^\((?:\?(?:P?<[^>]*>|[a-zA-Z-]*:))?/.exec(source.slice(i, i + 300))![0]
      stack.push(f)
      f = frame(opening === '(' || opening.includes('<'))
      i += opening.length
    } else if (c === ')') {
      const inner = f
      f = stack.pop() ?? frame(false)
      atom(close(inner))
      i++
    } else if (c === '|') {
      f.chars &&= f.char
      f.done += f.cur
      f.branches++
      f.cur = 0
      f.last = 0
      f.char = false
      i++
    } else if (c === '*' || c === '+' || c === '?') {
      repeat(f.last + (c === '*' ? 2 : 1))
      i += source[i + 1] === '?' ? 2 : 1
    } else {
      const counted = c === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i, i + 24)) : null
      if (counted) {
        const min = Number(counted[1])
        const max = counted[2] === undefined ? min : counted[3] === '' ? -1 : Number(counted[3])
        repeat(Math.max(1, max === -1 ? (min === 0 ? 2 + f.last : 1 + min * f.last) : max * f.last + (max - min)))
        i += counted[0].length + (source[i + counted[0].length] === '?' ? 1 : 0)
      } else {
        const cp = source.codePointAt(i)!
        atom(1, c !== '^' && c !== '$')
        i += cp > 0xffff ? 2 : 1
      }
    }
  }
  while (stack.length > 0) {
    const inner = f
    f = stack.pop()!
    atom(close(inner))
  }
  return f.done + f.cur + f.branches - 1 + 2
}
