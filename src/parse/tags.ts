/**
 * A walk over the start tags of an HTML document, by the tokenizer rules of the HTML standard
 * that decide where tags are: comments, bogus comments (`<!…>`, `<?…>`, `</…>` not followed by
 * a letter), quoted attribute values, raw-text and RCDATA elements (script, style, title,
 * textarea, noscript as with scripting on, …), plaintext, and foreign content (svg, math), where those elements hold markup
 * and `<![CDATA[…]]>` is a section. Text between tags is skipped with indexOf, never read.
 *
 * It is the scan's hot path (every crawled page): a streaming HTMLRewriter pass with the
 * scan's handlers cost about 85 µs for a 9.5 KB page here, this walk about 15 µs.
 */
import { endsName, isAlpha, readAttributes, sameName, tagEnd, type StartTag } from './start-tag'

/** Elements whose content is text up to their end tag (HTML, outside foreign content); noscript as with scripting on. */
const RAW_TEXT = ['script', 'style', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'title', 'textarea']
/** Names the walk itself acts on: those and the foreign roots, and plaintext (the rest is text). */
const STRUCTURAL = [...RAW_TEXT, 'svg', 'math', 'plaintext']

/** A tag name the walk knows: what it does with it, and what the visitor wants of it. */
type Known = { name: string; raw: boolean; foreignRoot: boolean; plaintext: boolean; attributes: readonly string[] | undefined }

/**
 * The names of `wanted` and STRUCTURAL by length and lowercase first letter, so that a tag's
 * name is matched in place: slicing and lowercasing every tag name made a page's garbage.
 */
function knownNames(wanted: ReadonlyMap<string, readonly string[]>): Map<number, Known[]> {
  const byKey = new Map<number, Known[]>()
  for (const name of new Set([...STRUCTURAL, ...wanted.keys()])) {
    const key = name.length * 128 + name.charCodeAt(0)
    const known: Known = { name, raw: RAW_TEXT.includes(name), foreignRoot: name === 'svg' || name === 'math', plaintext: name === 'plaintext', attributes: wanted.get(name) }
    byKey.set(key, [...(byKey.get(key) ?? []), known])
  }
  return byKey
}

// The table of the last visitor's names: a scan walks every page with the same ones.
let lastNames: ReadonlyMap<string, readonly string[]> | null = null
let lastKnown = new Map<number, Known[]>()

/** The known name of `s[from, to)` (ASCII case-insensitive), or undefined. */
function knownAt(known: Map<number, Known[]>, s: string, from: number, to: number): Known | undefined {
  const candidates = known.get((to - from) * 128 + (s.charCodeAt(from) | 32))
  if (candidates) for (const k of candidates) if (sameName(s, from, to, k.name)) return k
  return undefined
}

/** What the walk reports. */
export type TagVisitor = {
  /** Start tags whose lowercase name is a key here are read (those attributes) and given to `start`. */
  readonly names: ReadonlyMap<string, readonly string[]>
  /** A start tag of `names`, with the raw values of its wanted attributes (in their order). */
  start(tag: StartTag): void
  /** The text of a raw-text or RCDATA element given to `start`: `s[from, to)`, raw. */
  text?(name: string, from: number, to: number): void
}

/** Walks the tags of `s`, giving `visitor` the start tags it names, in document order. */
export function walkTags(s: string, visitor: TagVisitor): void {
  const n = s.length
  if (visitor.names !== lastNames) {
    lastKnown = knownNames(visitor.names)
    lastNames = visitor.names
  }
  const known = lastKnown
  // Nesting of svg and math: inside them, raw-text names hold markup and CDATA sections exist.
  let foreign = 0
  let i = 0
  while (i < n) {
    const lt = s.indexOf('<', i)
    if (lt < 0) return
    const c = s.charCodeAt(lt + 1)
    if (isAlpha(c)) {
      let j = lt + 2
      while (!endsName(s.charCodeAt(j))) j++
      const tag = knownAt(known, s, lt + 1, j)
      // In svg and math, title, script and style are elements of theirs, not the document's.
      const attributes = tag && (foreign === 0 || !tag.raw) ? tag.attributes : undefined
      const values: (string | undefined)[] | null = attributes ? new Array(attributes.length) : null
      const end = values ? readAttributes(s, j, attributes!, values) : tagEnd(s, j)
      // A tag the text ends inside is no tag (the standard's eof-in-tag).
      if (end > n) return
      if (values) visitor.start({ name: tag!.name, values, at: lt, end })
      i = end
      if (!tag) continue
      if (tag.foreignRoot) {
        if (s.charCodeAt(end - 2) !== 47) foreign++ // `<svg/>` opens nothing
      } else if (foreign === 0 && tag.raw) {
        const close = endOfRawText(s, tag.name, end)
        if (values) visitor.text?.(tag.name, end, close)
        i = close
      } else if (foreign === 0 && tag.plaintext) return // the rest is text
    } else if (c === 33) {
      // <!-- comment -->, with the standard's abrupt ends `<!-->` and `<!--->`; a CDATA section
      // in foreign content; any other `<!` is a bogus comment up to the next `>`.
      if (s.startsWith('<!--', lt)) i = commentEnd(s, lt + 4)
      else if (foreign > 0 && s.startsWith('<![CDATA[', lt)) i = after(s, ']]>', lt + 9)
      else i = after(s, '>', lt + 2)
    } else if (c === 47) {
      const d = s.charCodeAt(lt + 2)
      if (isAlpha(d)) {
        let j = lt + 3
        while (!endsName(s.charCodeAt(j))) j++
        if (foreign > 0 && knownAt(known, s, lt + 2, j)?.foreignRoot) foreign--
        i = tagEnd(s, j) // an end tag's attributes are tokenized (and dropped) like a start tag's
      } else if (d === 62) i = lt + 3 // `</>` is dropped
      else if (Number.isNaN(d)) return
      else i = after(s, '>', lt + 2) // bogus comment
    } else if (c === 63) i = after(s, '>', lt + 2)
    else i = lt + 1 // a `<` that starts no tag is text
  }
}

/** Index after the first `needle` at or after `from`, or the end of `s`. */
function after(s: string, needle: string, from: number): number {
  const at = s.indexOf(needle, from)
  return at < 0 ? s.length : at + needle.length
}

/** Index after the comment whose text starts at `from` (after `<!--`). */
function commentEnd(s: string, from: number): number {
  if (s.charCodeAt(from) === 62) return from + 1 // <!-->
  if (s.charCodeAt(from) === 45 && s.charCodeAt(from + 1) === 62) return from + 2 // <!--->
  for (let at = s.indexOf('--', from); at >= 0; at = s.indexOf('--', at + 1)) {
    const c = s.charCodeAt(at + 2)
    if (c === 62) return at + 3 // -->
    if (c === 33 && s.charCodeAt(at + 3) === 62) return at + 4 // --!>
  }
  return s.length
}

/** Index of the end tag `</name` (any case, then space, / or >) closing raw text from `from`, or the end of `s`. */
export function endOfRawText(s: string, name: string, from: number): number {
  for (let lt = s.indexOf('</', from); lt >= 0; lt = s.indexOf('</', lt + 2)) {
    if (sameName(s, lt + 2, lt + 2 + name.length, name) && endsName(s.charCodeAt(lt + 2 + name.length))) return lt
  }
  return s.length
}
