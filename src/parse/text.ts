/**
 * Readable plain text of an HTML document (the `text` step): block elements start and end
 * lines, table cells are spaced, whitespace is collapsed (kept inside <pre>), and nothing
 * comes from scripts, styles, templates or the title.
 *
 * HTMLRewriter removes the hidden elements and the comments; the text is then read from its
 * output in one linear pass. Asking HTMLRewriter for every text chunk costs a handler call per
 * chunk, several times slower on pages made of many small elements.
 */
import { collapse, decodeText } from './html-values'
import { readStartTag } from './start-tag'

// Paragraph-like blocks stand apart by a blank line; other blocks start a new line.
const PARAGRAPHS = new Set(
  'p h1 h2 h3 h4 h5 h6 blockquote pre ul ol dl table figure address fieldset details hr'.split(' '),
)
const LINES = new Set(
  ('div li tr dt dd section article header footer nav aside main caption figcaption summary legend option ' +
    'hgroup menu dialog form center br body').split(' '),
)
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

/** Collapses whitespace across text nodes and keeps at most one blank line between blocks. */
class TextBuilder {
  private readonly parts: string[] = []
  private started = false
  private breaks = 0
  private space = false

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

  /** A boundary that separates words (table cells). */
  gap(): void {
    this.space ||= this.started
  }

  /** The text, trimmed, without trailing spaces on lines or runs of blank lines. */
  result(): string {
    return this.parts.join('').replace(SPACES_BEFORE_BREAK, '\n').replace(/\n{3,}/g, '\n\n').trim()
  }

  private put(text: string, leadingSpace: boolean, trailingSpace: boolean): void {
    if (!text) return
    if (this.started) {
      if (this.breaks) this.parts.push(this.breaks === 2 ? '\n\n' : '\n')
      else if (this.space || leadingSpace) this.parts.push(' ')
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
    if (PARAGRAPHS.has(name)) out.block(2)
    else if (LINES.has(name)) out.block(1)
    else if (start && CELLS.has(name)) out.gap()
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
