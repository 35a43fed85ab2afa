/**
 * Reading start tags from HTML source, by the attribute rules of the HTML tokenizer. The scan
 * finds the elements with walkTags (tags.ts) and reads the few attributes it needs here.
 */

/** A start tag: lowercased name, raw values of the wanted attributes (in order), index of `<` and after `>`. */
export type StartTag = { name: string; values: (string | undefined)[]; at: number; end: number }

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 12 || c === 13
export const isAlpha = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90)
/** Stops of a tag or attribute name: space, '/', '>' and the end of the text. */
export const endsName = (c: number) => isSpace(c) || c === 47 || c === 62 || Number.isNaN(c)
// What tagEnd reads of a tag: nothing (shared: no span is ever written to it).
const NONE: readonly string[] = []
const NO_SPANS = new Int32Array(0)

/**
 * The start tag beginning at `s[at] === '<'`, or null when there is none there. Only the
 * attributes named in `wanted` (lowercase letters) are read: pages carry long class
 * attributes that nobody here needs, and a slice or a map per attribute would cost more
 * than the rest of the reading.
 */
export function readStartTag(s: string, at: number, wanted: readonly string[]): StartTag | null {
  if (s.charCodeAt(at) !== 60 || !isAlpha(s.charCodeAt(at + 1))) return null
  let i = at + 1
  while (!endsName(s.charCodeAt(i))) i++
  const name = s.slice(at + 1, i).toLowerCase()
  // The text step reads every tag of a page with no attributes wanted: nothing to allocate then.
  if (!wanted.length) return { name, values: [], at, end: Math.min(tagEnd(s, i), s.length) }
  const spans = new Int32Array(wanted.length * 2)
  const end = Math.min(readAttributes(s, i, wanted, spans), s.length)
  const values = wanted.map((_, w) => (spans[2 * w]! < 0 ? undefined : s.slice(spans[2 * w], spans[2 * w + 1])))
  return { name, values, at, end }
}

/**
 * Index after the `>` of a tag whose name ends at `i`, skipping its attributes as the tokenizer
 * reads them; past the end of `s` (its length + 1) when the text ends inside the tag.
 */
export const tagEnd = (s: string, i: number): number => readAttributes(s, i, NONE, NO_SPANS)

/**
 * Reads the attributes of a tag from `i` (after its name) to its `>`: the raw value of the
 * attribute named `wanted[w]` is `s.slice(spans[2w], spans[2w + 1])`, and `spans[2w]` is -1
 * when the tag has no such attribute. Answers the index after `>`, or the length of `s` + 1
 * when the text ends inside the tag (a tokenizer then drops the tag). Spans, not strings: a
 * walk meets thousands of tags whose values are only compared, or not read at all.
 */
export function readAttributes(s: string, i: number, wanted: readonly string[], spans: Int32Array): number {
  const n = s.length
  for (let w = 0; w < wanted.length; w++) spans[2 * w] = -1
  for (;;) {
    let c = s.charCodeAt(i)
    while (isSpace(c) || c === 47) c = s.charCodeAt(++i)
    if (i >= n) return n + 1
    if (c === 62) return i + 1
    // An attribute name may start with '=' (the tokenizer keeps it); it ends at space, / > or =.
    const nameStart = i++
    while (!endsName((c = s.charCodeAt(i))) && c !== 61) i++
    const nameEnd = i
    while (isSpace(s.charCodeAt(i))) i++
    let from = i
    let to = i
    if (s.charCodeAt(i) === 61) {
      i++
      while (isSpace(s.charCodeAt(i))) i++
      c = s.charCodeAt(i)
      if (c === 34 || c === 39) {
        const close = s.indexOf(c === 34 ? '"' : "'", i + 1)
        from = i + 1
        to = close < 0 ? n : close
        i = to + 1
      } else {
        from = i
        while (i < n && !isSpace((c = s.charCodeAt(i))) && c !== 62) i++
        to = i
      }
    }
    for (let w = 0; w < wanted.length; w++) {
      // The first of duplicate attributes counts, as in the HTML tokenizer.
      if (spans[2 * w] === -1 && sameName(s, nameStart, nameEnd, wanted[w]!)) {
        spans[2 * w] = from
        spans[2 * w + 1] = to
      }
    }
  }
}

/** ASCII case-insensitive comparison of s[start, end) with a lowercase name made of letters. */
export function sameName(s: string, start: number, end: number, name: string): boolean {
  if (end - start !== name.length) return false
  for (let k = 0; k < name.length; k++) if ((s.charCodeAt(start + k) | 32) !== name.charCodeAt(k)) return false
  return true
}

/** The `lang` of the `<html>` start tag when it opens the document (after doctype and comments). */
export function htmlLang(s: string): string | null {
  let i = s.charCodeAt(0) === 0xfeff ? 1 : 0
  for (;;) {
    while (i < s.length && isSpace(s.charCodeAt(i))) i++
    if (s.startsWith('<!--', i)) {
      i = commentEnd(s, i + 4)
      if (i >= s.length) return null
    } else if (s.startsWith('<!', i) || s.startsWith('<?', i)) {
      const close = s.indexOf('>', i)
      if (close < 0) return null
      i = close + 1
    } else break
  }
  const tag = readStartTag(s, i, ['lang'])
  return tag?.name === 'html' ? (tag.values[0] ?? null) : null
}

/**
 * Index after the comment whose text starts at `from` (after `<!--`): at `-->` or `--!>`, with
 * the standard's abrupt ends `<!-->` and `<!--->`; the end of `s` when it never ends.
 */
export function commentEnd(s: string, from: number): number {
  if (s.charCodeAt(from) === 62) return from + 1 // <!-->
  if (s.charCodeAt(from) === 45 && s.charCodeAt(from + 1) === 62) return from + 2 // <!--->
  for (let at = s.indexOf('--', from); at >= 0; at = s.indexOf('--', at + 1)) {
    const c = s.charCodeAt(at + 2)
    if (c === 62) return at + 3 // -->
    if (c === 33 && s.charCodeAt(at + 3) === 62) return at + 4 // --!>
  }
  return s.length
}
