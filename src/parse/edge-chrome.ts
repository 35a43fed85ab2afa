// Chrome found by structure at the edges of the content: whatever its markup, a block the
// content starts or ends with that only leads elsewhere, asks something of the reader, or closes
// the page. mainContent (main-content.ts) adds these to the chrome it finds by tag,
// role and name.
import { ELEMENT, isLink, TEXT, textOf, trimmedLength, type DomNode } from './dom'

// Elements that are content wherever they stand; a level holding one of these (or text) directly is
// inside the content, not a wrapper around it.
const CONTENT_BLOCKS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'pre', 'blockquote'])
const NEVER_EDGE_CHROME = new Set([...CONTENT_BLOCKS, 'article', 'main', 'figure', 'img', 'picture'])
// Elements that may wrap the whole content: the walk goes down through them (not into an
// article, whose byline and tags at its edges are its own).
const WRAPPERS = new Set(['div', 'section', 'center'])
// The longest plain (not mostly link) stretch a navigation block holds: the title of the page a
// Prev/Next cell leads to, not a card's summary.
const MAX_NAV_LABEL = 100
// A notice with a button (cookie consent, newsletter) or a copyright line is short.
const MAX_NOTICE = 1000
const MAX_COPYRIGHT = 500
const COPYRIGHT = /©|\bcopyright\b/i

/**
 * Blocks the content starts or ends with that only lead elsewhere (a bar of links, a table of
 * Prev/Up/Next cells, a column of link lists), ask something of the reader (a notice with a
 * button) or close the page (a copyright line): chrome, however it is marked up. The walk goes
 * down from the root through wrappers (a level holding no text, paragraph or heading of its own,
 * with one block left between its chrome), trimming both ends of each level. Inside the content
 * (a level holding text or paragraphs itself), links at the end may be the content's own (a
 * chapter's table of contents): there only notices and copyright lines are trimmed at the end.
 * A block holding more than half of its level's text is never trimmed, nor one of a series.
 */
export function edgeChrome(root: DomNode, skipped: (el: DomNode) => boolean, kept: (el: DomNode) => boolean, text: (el: DomNode) => number): Set<DomNode> {
  const found = new Set<DomNode>()
  // A block's shape is read by its verdict and again by samePlaces: one walk of its subtree.
  const shaped = new Map<DomNode, Shape>()
  const shape = (el: DomNode): Shape => {
    let s = shaped.get(el)
    if (!s) shaped.set(el, (s = shapeOf(el)))
    return s
  }
  for (let level: DomNode | null = root; level;) {
    const blocks: DomNode[] = []
    let inContent = false
    for (let n = level.firstChild; n; n = n.nextSibling) {
      if (n.nodeType === TEXT && trimmedLength(n.data) > 0) inContent = true
      if (n.nodeType !== ELEMENT || skipped(n)) continue
      if (CONTENT_BLOCKS.has(n.localName)) inContent = true
      blocks.push(n)
    }
    const total = text(level)
    // Blocks sharing a tag and class are a series (cards of a listing, sections): content.
    const shapes = new Map<string, number>()
    for (const b of blocks) if (b.getAttribute('class')) shapes.set(seriesKey(b), (shapes.get(seriesKey(b)) ?? 0) + 1)
    const series = (el: DomNode) => el.getAttribute('class') && shapes.get(seriesKey(el))! > 1
    const verdict = (el: DomNode, end: boolean) => (kept(el) || NEVER_EDGE_CHROME.has(el.localName) || series(el) ? 'content' : edgeVerdict(el, total, text(el), end, end && inContent, shape))
    let first = 0
    let last = blocks.length - 1
    for (;;) {
      for (let v; first <= last && (v = verdict(blocks[first]!, false)) !== 'content'; first++) if (v === 'chrome') found.add(blocks[first]!)
      for (let v; last >= first && (v = verdict(blocks[last]!, true)) !== 'content'; last--) if (v === 'chrome') found.add(blocks[last]!)
      if (inContent || last - first < 2 || !samePlaces(blocks[first]!, blocks[last]!, total, text, shape)) break
      found.add(blocks[first++]!).add(blocks[last--]!)
    }
    level = !inContent && first === last && WRAPPERS.has(blocks[first]!.localName) ? blocks[first]! : null
  }
  return found
}

const seriesKey = (el: DomNode) => `${el.localName} ${el.getAttribute('class')}`

// A bar of links repeated at both ends of the page (Prev/Up/Next above and below) is navigation
// even when its labels are longer than its links: two small blocks leading to the same places.
function samePlaces(a: DomNode, b: DomNode, levelText: number, text: (el: DomNode) => number, shape: (el: DomNode) => Shape): boolean {
  if ((text(a) + text(b)) * 2 > levelText || NEVER_EDGE_CHROME.has(a.localName) || NEVER_EDGE_CHROME.has(b.localName)) return false
  const [x, y] = [shape(a), shape(b)]
  if (x.title || x.code || y.title || y.code || x.targets.size === 0 || x.targets.size !== y.targets.size) return false
  for (const t of x.targets) if (!y.targets.has(t)) return false
  return true
}

function edgeVerdict(el: DomNode, levelText: number, length: number, end: boolean, notLinks: boolean, shapeOfBlock: (el: DomNode) => Shape): 'chrome' | 'content' | 'empty' {
  if (length * 2 > levelText) return 'content'
  const shape = shapeOfBlock(el)
  if (length === 0) return shape.media ? 'content' : shape.links > 0 ? 'chrome' : 'empty'
  if (shape.title || shape.code) return 'content'
  if (shape.button && length <= MAX_NOTICE) return 'chrome'
  if (end && length <= MAX_COPYRIGHT && COPYRIGHT.test(textOf(el))) return 'chrome'
  if (notLinks) return 'content'
  return shape.links > 0 && shape.linky * 2 > shape.segments && shape.longestPlain <= MAX_NAV_LABEL ? 'chrome' : 'content'
}

// Where a block's text breaks into separate pieces: cells, items, paragraphs, lines.
const SEGMENT_BREAKS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'br',
  'caption',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'ul',
])
const BUTTON_INPUTS = new Set(['button', 'submit', 'reset'])

/**
 * What a block is made of: its text pieces (segments), how many are mostly link text, the
 * longest that is not, its links and their hrefs, and whether it holds an <h1>, a code block, a button or an
 * image outside a link.
 */
type Shape = { segments: number; linky: number; longestPlain: number; links: number; targets: Set<string>; title: boolean; code: boolean; button: boolean; media: boolean }

function shapeOf(el: DomNode): Shape {
  const shape: Shape = { segments: 0, linky: 0, longestPlain: 0, links: 0, targets: new Set(), title: false, code: false, button: false, media: false }
  let all = 0
  let linked = 0
  const flush = () => {
    if (all > 0) {
      shape.segments++
      if (linked * 2 >= all) shape.linky++
      else shape.longestPlain = Math.max(shape.longestPlain, all)
    }
    all = linked = 0
  }
  const walk = (node: DomNode, inLink: boolean) => {
    for (let n = node.firstChild; n; n = n.nextSibling) {
      if (n.nodeType === TEXT) {
        const length = trimmedLength(n.data)
        all += length
        if (inLink) linked += length
        continue
      }
      if (n.nodeType !== ELEMENT) continue
      const tag = n.localName
      if (tag === 'script' || tag === 'style' || tag === 'template' || tag === 'noscript') continue
      const link = isLink(n)
      if (link) {
        shape.links++
        shape.targets.add(n.getAttribute('href')!.trim())
      }
      if (tag === 'h1') shape.title = true
      else if (tag === 'pre') shape.code = true
      else if (tag === 'button' || n.getAttribute('role') === 'button' || (tag === 'input' && BUTTON_INPUTS.has(n.getAttribute('type')?.toLowerCase() ?? ''))) shape.button = true
      else if ((tag === 'img' || tag === 'picture') && !inLink) shape.media = true
      const breaks = SEGMENT_BREAKS.has(tag)
      if (breaks) flush()
      walk(n, inLink || link)
      if (breaks) flush()
    }
  }
  walk(el, false)
  flush()
  return shape
}
