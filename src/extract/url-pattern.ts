import { RE2JS } from 're2js'
import { estimateProgramSize, RE2_BUDGET, tooLarge } from '../util/re2'

/**
 * URLPattern (https://urlpattern.spec.whatwg.org/) matched by RE2 instead of a backtracking
 * engine. Bun's URLPattern turns each component into a JavaScript RegExp, and those backtrack:
 * the pathname pattern `/*a*a*a*a*b` took 1 s against a 300-character path (70 s with one more
 * `*a`), and a custom group such as `(\w+\w+\w+)` is a user regex run without limits.
 *
 * So Bun's URLPattern only parses and canonicalizes the pattern (its errors are the standard's,
 * its component strings are canonical: `/café` becomes `/caf%C3%A9`, hosts become punycode);
 * each component string is then tokenized, parsed and turned into a regular expression by the
 * standard's own algorithms ("tokenize", "parse a pattern string", "generate a regular
 * expression"), and compiled with re2js. Regexp groups (`:id(\d+)`) are therefore RE2 syntax.
 */

type Options = { delimiter: string; prefix: string }
const DEFAULT: Options = { delimiter: '', prefix: '' }
const HOSTNAME: Options = { delimiter: '.', prefix: '' }
const PATHNAME: Options = { delimiter: '/', prefix: '/' }

const COMPONENTS = ['protocol', 'username', 'password', 'hostname', 'port', 'pathname', 'search', 'hash'] as const
type Component = (typeof COMPONENTS)[number]
const SPECIAL_SCHEMES = ['ftp', 'file', 'http', 'https', 'ws', 'wss']

/** A compiled pattern: whether a parsed URL matches it. */
export type UrlMatcher = (url: URL) => boolean

/**
 * Compiles a url_pattern entry: a string starting with `/` is a pathname pattern (any scheme,
 * host, port, query and fragment), anything else a full URL pattern string. Throws an Error whose
 * message says what is wrong.
 */
export function compileUrlPattern(source: string): UrlMatcher {
  const pattern = source.startsWith('/') ? new URLPattern({ pathname: source }) : new URLPattern(source)
  // The budget holds for the entry as a whole: every component program runs on each URL.
  const budget = { estimate: 0, size: 0 }
  const protocol = componentRegex(pattern.protocol, DEFAULT, budget)
  const special = protocol === null || SPECIAL_SCHEMES.some((s) => protocol.test(s))
  const tests: [Component, RE2JS][] = []
  if (protocol) tests.push(['protocol', protocol])
  for (const name of COMPONENTS.slice(1)) {
    const options = name === 'hostname' ? HOSTNAME : name === 'pathname' && special ? PATHNAME : DEFAULT
    const re = componentRegex(pattern[name], options, budget)
    if (re) tests.push([name, re])
  }
  if (budget.size > RE2_BUDGET) throw tooLarge(budget.size, RE2_BUDGET)
  return (url) => tests.every(([name, re]) => re.test(inputOf(url, name)))
}

/** The component of a URL as URLPattern compares it (no `:`, `?` or `#`). */
function inputOf(url: URL, name: Component): string {
  if (name === 'protocol') return url.protocol.slice(0, -1)
  if (name === 'search') return url.search.slice(1)
  if (name === 'hash') return url.hash.slice(1)
  return url[name]
}

/**
 * The RE2 program of one component pattern; null for `*`, which matches every value. Adds its size
 * to the entry's running count, and throws before compiling when the estimate is already far over.
 */
function componentRegex(pattern: string, options: Options, budget: { estimate: number; size: number }): RE2JS | null {
  if (pattern === '*') return null
  const source = generate(parse(pattern, options), options)
  budget.estimate += estimateProgramSize(source)
  if (budget.estimate > 4 * RE2_BUDGET) throw tooLarge(budget.estimate, RE2_BUDGET)
  let re: RE2JS
  try {
    re = RE2JS.compile(source)
  } catch (err) {
    throw new Error(`a regexp group is not valid RE2 syntax (${(err as Error).message})`, { cause: err })
  }
  budget.size += re.programSize()
  return re
}

type Modifier = '' | '?' | '*' | '+'
type Part = { type: 'fixed' | 'regexp' | 'segment' | 'full'; value: string; modifier: Modifier; prefix: string; suffix: string }
type Token = { type: 'open' | 'close' | 'regexp' | 'name' | 'char' | 'escaped' | 'modifier' | 'asterisk' | 'end'; value: string }

const escapeRegex = (s: string) => s.replace(/[.+*?^${}()[\]|/\\]/g, '\\$&')
// The standard's own spelling, which "add a part" compares user groups against.
const segmentSpelling = (o: Options) => `[^${escapeRegex(o.delimiter)}]+?`
// JavaScript's `[^]` (any character) is not RE2; URL components hold no line breaks, so `.` will do.
const segmentRegex = (o: Options) => (o.delimiter === '' ? '.+?' : segmentSpelling(o))
const FULL = '.*'

/** The standard's "generate a regular expression" (capturing groups made non-capturing). */
function generate(parts: Part[], options: Options): string {
  let out = '^'
  for (const p of parts) {
    if (p.type === 'fixed') {
      out += p.modifier === '' ? escapeRegex(p.value) : `(?:${escapeRegex(p.value)})${p.modifier}`
      continue
    }
    const value = p.type === 'segment' ? segmentRegex(options) : p.type === 'full' ? FULL : p.value
    const single = p.modifier === '' || p.modifier === '?'
    const [prefix, suffix] = [escapeRegex(p.prefix), escapeRegex(p.suffix)]
    if (prefix === '' && suffix === '') out += single ? `(?:${value})${p.modifier}` : `(?:(?:${value})${p.modifier})`
    else if (single) out += `(?:${prefix}(?:${value})${suffix})${p.modifier}`
    else out += `(?:${prefix}(?:(?:${value})(?:${suffix}${prefix}(?:${value}))*)${suffix})${p.modifier === '*' ? '?' : ''}`
  }
  return `${out}$`
}

/** The standard's "parse a pattern string" over an already canonical component pattern. */
function parse(input: string, options: Options): Part[] {
  const tokens = tokenize(input)
  const parts: Part[] = []
  let pending = ''
  let i = 0
  const take = (type: Token['type']) => (tokens[i]?.type === type ? tokens[i++]! : null)
  const takeRegexpOrWildcard = (name: Token | null) => take('regexp') ?? (name === null ? take('asterisk') : null)
  const takeModifier = () => take('modifier') ?? take('asterisk')
  const takeText = () => {
    let text = ''
    for (let t = take('char') ?? take('escaped'); t; t = take('char') ?? take('escaped')) text += t.value
    return text
  }
  const flush = () => {
    if (pending !== '') parts.push({ type: 'fixed', value: pending, modifier: '', prefix: '', suffix: '' })
    pending = ''
  }
  const addPart = (prefix: string, name: Token | null, rw: Token | null, suffix: string, modifierToken: Token | null) => {
    const modifier = (modifierToken?.value ?? '') as Modifier
    if (!name && !rw && modifier === '') return void (pending += prefix)
    flush()
    if (!name && !rw) {
      if (prefix !== '') parts.push({ type: 'fixed', value: prefix, modifier, prefix: '', suffix: '' })
      return
    }
    const value = !rw ? segmentSpelling(options) : rw.type === 'asterisk' ? FULL : rw.value
    const type = value === segmentSpelling(options) ? 'segment' : value === FULL ? 'full' : 'regexp'
    parts.push({ type, value: type === 'regexp' ? value : '', modifier, prefix, suffix })
  }

  while (i < tokens.length) {
    const char = take('char')
    const name = take('name')
    const rw = takeRegexpOrWildcard(name)
    if (name || rw) {
      let prefix = char?.value ?? ''
      if (prefix !== '' && prefix !== options.prefix) {
        pending += prefix
        prefix = ''
      }
      flush()
      addPart(prefix, name, rw, '', takeModifier())
      continue
    }
    const fixed = char ?? take('escaped')
    if (fixed) {
      pending += fixed.value
      continue
    }
    if (take('open')) {
      const prefix = takeText()
      const innerName = take('name')
      const innerRw = takeRegexpOrWildcard(innerName)
      const suffix = takeText()
      if (!take('close')) throw new Error('a { group is not closed')
      addPart(prefix, innerName, innerRw, suffix, takeModifier())
      continue
    }
    flush()
    if (!take('end')) throw new Error(`unexpected ${tokens[i]?.value ?? 'end'} in ${input}`)
  }
  return parts
}

const ID_START = /[\p{ID_Start}$_]/u
const ID_CONTINUE = /[\p{ID_Continue}$_\u200C\u200D]/u

/** The standard's tokenizer, strict: Bun has already rejected anything it would not accept. */
function tokenize(input: string): Token[] {
  const cps = [...input]
  const tokens: Token[] = []
  const fail = (why: string): never => {
    throw new Error(`${why} in ${input}`)
  }
  let i = 0
  while (i < cps.length) {
    const c = cps[i]!
    if (c === '*') tokens.push({ type: 'asterisk', value: c })
    else if (c === '+' || c === '?') tokens.push({ type: 'modifier', value: c })
    else if (c === '{') tokens.push({ type: 'open', value: c })
    else if (c === '}') tokens.push({ type: 'close', value: c })
    else if (c === '\\') {
      if (i === cps.length - 1) fail('a trailing backslash')
      tokens.push({ type: 'escaped', value: cps[++i]! })
    } else if (c === ':') {
      let j = i + 1
      while (j < cps.length && (j === i + 1 ? ID_START : ID_CONTINUE).test(cps[j]!)) j++
      if (j === i + 1) fail('a : without a name')
      tokens.push({ type: 'name', value: cps.slice(i + 1, j).join('') })
      i = j
      continue
    } else if (c === '(') {
      const start = i + 1
      let j = start
      let depth = 1
      for (; j < cps.length && depth > 0; j++) {
        const d = cps[j]!
        if (d.charCodeAt(0) > 0x7f || (j === start && d === '?')) fail('an invalid regexp group')
        if (d === '\\') j++
        else if (d === ')') depth--
        else if (d === '(' && cps[j + 1] !== '?') fail('a capturing group inside a regexp group')
        else if (d === '(') depth++
      }
      if (depth !== 0 || j - 1 === start) fail('an unclosed or empty regexp group')
      tokens.push({ type: 'regexp', value: cps.slice(start, j - 1).join('') })
      i = j
      continue
    } else tokens.push({ type: 'char', value: c })
    i++
  }
  tokens.push({ type: 'end', value: '' })
  return tokens
}
