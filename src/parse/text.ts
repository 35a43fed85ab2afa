/**
 * Readable plain text of an HTML document (the `text` step): block elements start and end
 * lines, table cells are spaced, whitespace is collapsed (kept inside <pre>), superscripts and
 * subscripts are marked, quotations quoted, and nothing comes from scripts, styles, templates
 * or the title.
 *
 * HTMLRewriter removes the hidden elements and the comments; the text is then read from its
 * output in one linear pass. Asking HTMLRewriter for every text chunk costs a handler call per
 * chunk, several times slower on pages made of many small elements.
 */
import { collapse, decodeText } from './html-values'
import { readStartTag } from './start-tag'

// Paragraph-like blocks stand apart by a blank line; other blocks start a new line.
const PARAGRAPHS = new Set('p h1 h2 h3 h4 h5 h6 blockquote pre ul ol dl table figure address fieldset details hr'.split(' '))
const LINES = new Set(('div li tr dt dd section article header footer nav aside main caption figcaption summary legend option ' + 'hgroup menu dialog form center br body').split(' '))
const CELLS = new Set(['td', 'th'])
const PREFORMATTED = new Set(['pre', 'listing', 'textarea'])
// Not shown as text by a browser (the title is shown in the tab, not in the page).
const HIDDEN = 'script, style, noscript, template, title, iframe, noembed, noframes'
const NONE: readonly string[] = []
const VISIBLE = /\S/
const SPACE = /\s/
// Spaces before a line break. The lookbehind starts a match only at the first space of a run:
// without it, a run of n spaces not followed by a line break costs n² steps.
const SPACES_BEFORE_BREAK = /(?<![ \t])[ \t]+\n/g
// The end of a <textarea>: searched from a position (lastIndex), never on a copy of the rest.
const TEXTAREA_END = /<\/textarea[\s/>]/gi
// Inline elements whose meaning is in how they are shown: written with their marks here.
const SCRIPTS = new Map<string, '^' | '_'>([
  ['sup', '^'],
  ['sub', '_'],
])
const MARKED = new Set(['sup', 'sub', 'q'])
// Deeper ones are read as plain text: each level re-reads its content once when it closes.
const MAX_MARKED_DEPTH = 8
// A script this short needs no parentheses: one character, or one word or number.
const BARE_SCRIPT = /^(?:\S|[\p{L}\p{N}]+|\[[^\s\]]*\])$/u

/**
 * A superscript or subscript as plain text: `2^31`, `H_2O`, `x^(n+1)`. Glued to its base, as the
 * markup alone would leave it, `2<sup>31</sup>` reads as the number 231.
 */
export function scriptText(mark: '^' | '_', content: string): string {
  const text = content.trim()
  if (!text) return ''
  return BARE_SCRIPT.test(text) ? `${mark}${text}` : `${mark}(${text})`
}

/** Collapses whitespace across text nodes and keeps at most one blank line between blocks. */
class TextBuilder {
  private readonly parts: string[] = []
  private started = false
  private breaks = 0
  private space = false
  /** Open MARKED elements, outermost first, and where their text starts in `parts` (-1 until it does). */
  private readonly marked: { name: string; at: number }[] = []
  /** MARKED elements open past MAX_MARKED_DEPTH. */
  private overflow = 0

  /** Text of one node, entities decoded; whitespace collapsed unless `preformatted`. */
  add(text: string, preformatted: boolean): void {
    if (preformatted) return this.put(text.replace(/\r\n?/g, '\n'), false, false)
    if (!VISIBLE.test(text)) {
      if (text) this.space ||= this.started
      return
    }
    const leading = SPACE.test(text[0]!)
    const trailing = SPACE.test(text[text.length - 1]!)
    this.put(collapse(text), leading, trailing)
  }

  /** A block boundary: `lines` 1 ends the line, 2 leaves a blank line. */
  block(lines: 1 | 2): void {
    if (this.started) this.breaks = Math.max(this.breaks, lines)
    this.space = false
  }

  /** A <sup>, <sub> or <q> starts: a quotation mark is written once text follows, a script mark when it ends. */
  openMarked(name: string): void {
    if (this.marked.length === MAX_MARKED_DEPTH) this.overflow++
    else this.marked.push({ name, at: -1 })
  }

  /** Its end tag closes it and what opened inside it, as the HTML parser does; a stray one does nothing. */
  closeMarked(name: string): void {
    if (this.overflow) return void this.overflow--
    const i = this.marked.findLastIndex((m) => m.name === name)
    if (i >= 0) while (this.marked.length > i) this.closeLast()
  }

  /** A block or cell boundary ends the inline elements open in it, as the HTML parser closes them. */
  endInline(): void {
    this.overflow = 0
    while (this.marked.length) this.closeLast()
  }

  private closeLast(): void {
    const { name, at } = this.marked.pop()!
    // Nothing was written inside: an empty quotation or script shows nothing worth marking.
    if (at < 0) return
    if (name === 'q') return this.put(this.marked.some((m) => m.name === 'q') ? "'" : '"', false, false)
    const text = scriptText(SCRIPTS.get(name)!, this.parts.splice(at).join(''))
    if (text) this.parts.push(text)
  }

  /** A boundary that separates words (table cells). */
  gap(): void {
    this.space ||= this.started
  }

  /** The text, trimmed, without trailing spaces on lines or runs of blank lines. */
  result(): string {
    this.endInline()
    return this.parts
      .join('')
      .replace(SPACES_BEFORE_BREAK, '\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim()
  }

  private put(text: string, leadingSpace: boolean, trailingSpace: boolean): void {
    if (!text) return
    if (this.started) {
      if (this.breaks) this.parts.push(this.breaks === 2 ? '\n\n' : '\n')
      else if (this.space || leadingSpace) this.parts.push(' ')
    }
    // The first text inside opens the elements around it, in order: quotations get their mark
    // (single inside double, as a browser shows them), scripts the start of what they mark.
    let quoted = false
    for (const m of this.marked) {
      if (m.at < 0) {
        m.at = this.parts.length
        if (m.name === 'q') this.parts.push(quoted ? "'" : '"')
      }
      quoted ||= m.name === 'q'
    }
    this.parts.push(text)
    this.started = true
    this.breaks = 0
    this.space = trailingSpace
  }
}

/** Visible text of `html`: blocks on their own lines, whitespace collapsed, entities decoded. */
export async function htmlToText(html: string): Promise<string> {
  const visible = new HTMLRewriter()
    .on(HIDDEN, { element: (el) => void el.remove() })
    .onDocument({ comments: (comment) => void comment.remove() })
    .transform(html)
  return textOf(visible)
}

const isAlpha = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90)
const isAlnum = (c: number) => isAlpha(c) || (c >= 48 && c <= 57)

// Text of markup without comments or raw-text elements: tags give boundaries by their name.
function textOf(s: string): string {
  const out = new TextBuilder()
  let pre = 0
  const boundary = (name: string, start: boolean) => {
    if (name !== 'br' && (PARAGRAPHS.has(name) || LINES.has(name) || CELLS.has(name))) out.endInline()
    if (PARAGRAPHS.has(name)) out.block(2)
    else if (LINES.has(name)) out.block(1)
    else if (start && CELLS.has(name)) out.gap()
    else if (MARKED.has(name)) start ? out.openMarked(name) : out.closeMarked(name)
    if (PREFORMATTED.has(name)) pre = Math.max(0, pre + (start ? 1 : -1))
  }
  let i = 0
  while (i < s.length) {
    const lt = s.indexOf('<', i)
    const stop = lt < 0 ? s.length : lt
    if (stop > i) out.add(decodeText(s.slice(i, stop)), pre > 0)
    if (lt < 0) break
    const next = s.charCodeAt(lt + 1)
    if (isAlpha(next)) {
      const tag = readStartTag(s, lt, NONE)!
      boundary(tag.name, true)
      i = tag.end
      // A textarea holds text, not markup, up to its end tag.
      if (tag.name === 'textarea') {
        TEXTAREA_END.lastIndex = i
        const end = TEXTAREA_END.exec(s)?.index ?? s.length
        out.add(decodeText(s.slice(i, end)), true)
        i = end
      }
    } else if (next === 47 /* / */ || next === 33 /* ! */ || next === 63 /* ? */) {
      const close = s.indexOf('>', lt)
      if (next === 47) {
        let end = lt + 2
        while (isAlnum(s.charCodeAt(end))) end++
        boundary(s.slice(lt + 2, end).toLowerCase(), false)
      }
      i = close < 0 ? s.length : close + 1
    } else {
      out.add('<', pre > 0)
      i = lt + 1
    }
  }
  return out.result()
}
