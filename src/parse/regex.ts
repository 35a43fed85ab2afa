import { RE2JS } from 're2js'

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

/** Whether any pattern is found somewhere in `text` (unanchored, like a search). */
export const anyFound = (patterns: readonly string[], text: string) => patterns.some((p) => re2(p).matcher(text).find())

/**
 * The include/exclude rule every URL filter of trawl uses: kept when it matches an include
 * pattern (or there are none) and no exclude pattern.
 */
export const passes = (url: string, include: readonly string[] | undefined, exclude: readonly string[] | undefined) =>
  (!include?.length || anyFound(include, url)) && !(exclude?.length && anyFound(exclude, url))
