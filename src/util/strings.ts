/**
 * `s` in a string of its own. A slice of a page's text keeps the whole page alive in
 * JavaScriptCore (a substring points into its parent), so a string kept past the page, such as a
 * cache key, must not be one. padEnd writes a new string (concatenations and slices of them
 * were measured to still point into the page); the slice then points into that copy only.
 */
export function ownCopy(s: string): string {
  return s.padEnd(s.length + 1).slice(0, -1)
}
