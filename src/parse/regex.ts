import { re2 } from '../util/re2'

/** Whether any pattern is found somewhere in `text` (unanchored, like a search). */
export const anyFound = (patterns: readonly string[], text: string) => patterns.some((p) => re2(p).matcher(text).find())

/**
 * The include/exclude rule every URL filter of trawl uses: kept when it matches an include
 * pattern (or there are none) and no exclude pattern.
 */
export const passes = (url: string, include: readonly string[] | undefined, exclude: readonly string[] | undefined) =>
  (!include?.length || anyFound(include, url)) && !(exclude?.length && anyFound(exclude, url))
