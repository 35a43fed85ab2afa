import type { FieldErrors } from '../core/errors'
import { looseArray, looseObject } from '../util/loose'
import { compileRe2, PatternTooLarge } from '../util/re2'
import { compileUrlPattern, type UrlMatcher } from './url-pattern'

/**
 * Pattern sets classify URLs: `regex` entries are RE2 searched anywhere in the absolute URL,
 * `url_pattern` entries are URLPatterns (pathname patterns when they start with `/`). Both run in
 * linear time, whatever a user writes (see url-pattern.ts for why Bun's URLPattern is not used to
 * match). Each entry must also fit RE2_BUDGET instructions (see util/re2.ts): linear time is
 * still time, proportional to the URL's length times the program's size.
 */

export const PATTERN_FORMATS = ['regex', 'url_pattern'] as const
export type PatternFormat = (typeof PATTERN_FORMATS)[number]
/** A pattern definition as stored and sent: tagged by `format`. */
export type PatternDef = { format: PatternFormat; patterns: string[] }
/** What classification needs of a pattern set. */
export type PatternSetDef = { category: string; patterns: PatternDef }
/** Bounds of one set: enough for any site's URL scheme, small enough to classify every page. */
export const MAX_PATTERNS = 100
export const MAX_PATTERN_LENGTH = 2048

type Compiled = { source: string; test: (url: string, parsed: URL | null) => boolean }

function compileOne(format: PatternFormat, source: string): Compiled['test'] {
  if (format === 'regex') {
    const re = compileRe2(source)
    return (url) => re.test(url)
  }
  const matches: UrlMatcher = compileUrlPattern(source)
  return (_url, parsed) => parsed !== null && matches(parsed)
}

/** Why a pattern of this format is rejected, or null when it compiles. */
export function patternProblem(format: PatternFormat, source: string): string | null {
  try {
    compileOne(format, source)
    return null
  } catch (err) {
    const why = (err as Error).message
    if (err instanceof PatternTooLarge) return why
    if (format === 'regex') return `is not a valid RE2 regular expression: ${why}`
    const hint = source.startsWith('/') ? '' : ' (start with / for a path pattern, or write a full URL pattern such as https://example.com/products/:id)'
    return `is not a valid URL pattern: ${why}${hint}`
  }
}

/**
 * Adds an error at `at.patterns[i]` for every pattern the definition's format rejects. Trusts no
 * shape: it runs beside schema validation, which reports wrong types, lengths and formats.
 */
export function checkPatternDef(def: unknown, at: string, errors: FieldErrors) {
  const { format, patterns } = looseObject(def)
  if (format !== 'regex' && format !== 'url_pattern') return
  looseArray(patterns).forEach((source, i) => {
    if (typeof source !== 'string' || source.length === 0 || source.length > MAX_PATTERN_LENGTH) return
    const problem = patternProblem(format, source)
    if (problem) errors.add(`${at}.patterns[${i}]`, problem)
  })
}

// Compiled sets by definition: a crawl classifies every URL of a host against the same few
// sets, and compiling costs far more than matching. Bounded so hostile input cannot grow it.
// The object cache spares the text key (up to 200 KB of patterns) when a caller passes the same
// definition again, as a parse context does for every URL of a host.
const cache = new Map<string, (url: string) => string[]>()
const byObject = new WeakMap<PatternDef, (url: string) => string[]>()
const MAX_CACHED = 1024

/**
 * The matcher of a definition: given an absolute URL, the patterns that match it, in definition
 * order. A stored pattern that no longer compiles (say, after an upgrade, or one stored before the
 * size budget and over it) matches nothing rather than failing every page of a crawl. Definitions
 * are treated as immutable once compiled.
 */
export function compilePatterns(def: PatternDef): (url: string) => string[] {
  let matcher = byObject.get(def)
  if (matcher) return matcher
  const key = `${def.format}\n${JSON.stringify(def.patterns)}`
  matcher = cache.get(key)
  if (matcher) {
    byObject.set(def, matcher)
    return matcher
  }
  const compiled: Compiled[] = []
  for (const source of def.patterns) {
    try {
      compiled.push({ source, test: compileOne(def.format, source) })
    } catch {
      // skipped: see above
    }
  }
  const needsUrl = def.format === 'url_pattern'
  matcher = (url) => {
    const parsed = needsUrl ? URL.parse(url) : null
    const hits: string[] = []
    for (const c of compiled) if (c.test(url, parsed)) hits.push(c.source)
    return hits
  }
  if (cache.size >= MAX_CACHED) cache.clear()
  cache.set(key, matcher)
  byObject.set(def, matcher)
  return matcher
}

/** The category of the first set (in the order given) with a pattern matching `url`, or null. */
export function categorize(url: string, sets: readonly PatternSetDef[]): string | null {
  for (const set of sets) if (compilePatterns(set.patterns)(url).length > 0) return set.category
  return null
}

export type PathMatch = { path: string; url: string; matched: boolean; patterns: string[]; category: string | null }

/**
 * What the match route answers for each path: resolved against the set's host, the patterns
 * that match and the set's category when any does. Paths must already resolve (see resolvePath).
 */
export function matchPaths(set: PatternSetDef & { host: { domain: string } }, paths: readonly string[]): PathMatch[] {
  const match = compilePatterns(set.patterns)
  return paths.map((path) => {
    const url = resolvePath(path, set.host.domain)
    if (url === null) throw new Error(`path ${path} does not resolve to an http(s) URL`) // the route's refine rejects these
    const patterns = match(url)
    return { path, url, matched: patterns.length > 0, patterns, category: patterns.length > 0 ? set.category : null }
  })
}

/**
 * The absolute URL a match path stands for: resolved against the host, without its fragment (the
 * form parse's category guard judges, see baseUrlOf in parse/pipeline.ts); null unless http(s).
 */
export function resolvePath(path: string, domain: string): string | null {
  const url = URL.parse(path, `https://${domain}/`)
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return null
  url.hash = ''
  return url.href
}
