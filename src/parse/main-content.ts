// Main-content selection for the markdown step: which element holds the page's content, and
// which elements inside it are page chrome (navigation, banners, sidebars, ads, cookie notices).

/** The slice of a domino node the markdown step reads (the project has no DOM lib types). */
export interface DomNode {
  nodeType: number
  nodeName: string
  localName: string
  parentNode: DomNode | null
  firstChild: DomNode | null
  lastChild: DomNode | null
  nextSibling: DomNode | null
  previousSibling: DomNode | null
  textContent: string | null
  data: string
  getAttribute(name: string): string | null
  hasAttribute(name: string): boolean
  removeChild(child: DomNode): DomNode
  insertBefore(node: DomNode, ref: DomNode | null): DomNode
  appendChild(node: DomNode): DomNode
  ownerDocument: { createTextNode(text: string): DomNode }
}

/** The chosen content root and a test for chrome to drop inside it. */
export type MainContent = { root: DomNode; isChrome: (el: DomNode) => boolean }

const ELEMENT = 1
const TEXT = 3

// Always chrome: these never carry the page's own content.
const CHROME_TAGS = new Set(['nav', 'aside', 'dialog', 'select', 'textarea'])
const CHROME_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'dialog', 'alertdialog', 'menu', 'menubar'])
// Class or id words that mark chrome when they appear as a dash/underscore-separated part of a
// token ("cookie-banner", "share_bar", "top-ads"); "language-*" and "lang-*" are code classes,
// so language pickers are matched by whole token only.
const CHROME_PARTS = [
  'cookie',
  'cookies',
  'consent',
  'gdpr',
  'onetrust',
  'newsletter',
  'subscribe',
  'sidebar',
  'breadcrumb',
  'breadcrumbs',
  'advert',
  'adverts',
  'advertisement',
  'advertising',
  'adsense',
  'adslot',
  'ad',
  'ads',
  'dfp',
  'sponsor',
  'sponsored',
  'popup',
  'modal',
  'share',
  'sharing',
  'sharethis',
  'addthis',
  'social',
  'socials',
  'related',
  'recommended',
  'disqus',
  'comments',
  'announcement',
  'pagination',
  'pager',
  'skiplink',
  'navbar',
  'megamenu',
]
// Whole-token matches only: as parts these name content too ("entry-header" holds the title).
const CHROME_TOKENS = [
  'header',
  'site-header',
  'global-header',
  'masthead',
  'footer',
  'site-footer',
  'global-footer',
  'page-footer',
  'topbar',
  'top-bar',
  'nav',
  'navigation',
  'site-nav',
  'main-nav',
  'menu',
  'main-menu',
  'skip-link',
  'skip-to-content',
  'sr-only',
  'visually-hidden',
  'screen-reader-text',
  'language',
  'lang-selector',
  'language-selector',
  'language-switcher',
  'widget',
  'widgets',
  'overlay',
  'toolbar',
]
const CHROME_WORDS = new RegExp(`(?:^|[\\s_-])(?:${CHROME_PARTS.join('|')})(?=$|[\\s_-])|(?:^|\\s)(?:${CHROME_TOKENS.join('|')})(?=$|\\s)`)
const HIDDEN_STYLE = /display\s*:\s*none|visibility\s*:\s*hidden/i
// Ids that name the content container: their ancestors are never dropped (Firecrawl's #main).
const CONTENT_IDS = new Set(['main', 'main-content', 'maincontent', 'content', 'primary'])

/** Visible prose length: text outside links, so link-heavy chrome weighs little. */
export function proseLength(root: DomNode): number {
  let total = 0
  let node = root.firstChild
  while (node && node !== root) {
    if (node.nodeType === TEXT) total += node.data.trim().length
    const skip = node.nodeType !== ELEMENT || isLink(node) || !node.firstChild
    node = skip ? after(node, root) : node.firstChild
  }
  return total
}

// The prose and the whole text (links included) of root and of every element under it, in one
// walk; elements for which `removed` holds (scripts, styles, skipped tags) count for nothing.
function textLengths(root: DomNode, removed: (el: DomNode) => boolean): { prose: Map<DomNode, number>; text: Map<DomNode, number> } {
  const prose = new Map<DomNode, number>()
  const text = new Map<DomNode, number>()
  const outer: number[] = [] // the prose and text sums of the elements being walked, innermost last
  let sum = 0
  let all = 0
  let node = root.firstChild
  while (node) {
    if (node.nodeType === ELEMENT && node.firstChild && !removed(node)) {
      outer.push(sum, all)
      sum = 0
      all = 0
      node = node.firstChild
      continue
    }
    if (node.nodeType === TEXT) {
      const length = trimmedLength(node.data)
      sum += length
      all += length
    } else if (node.nodeType === ELEMENT) {
      prose.set(node, 0)
      text.set(node, 0)
    }
    while (!node.nextSibling) {
      const parent: DomNode | null = node.parentNode
      if (!parent || parent === root) {
        prose.set(root, sum)
        text.set(root, all)
        return { prose, text }
      }
      prose.set(parent, sum)
      text.set(parent, all)
      all += outer.pop()!
      // A link's text is not prose of the elements around it.
      sum = outer.pop()! + (isLink(parent) ? 0 : sum)
      node = parent
    }
    node = node.nextSibling
  }
  prose.set(root, sum)
  text.set(root, all)
  return { prose, text }
}

// String.prototype.trim's length without the copy: the whitespace trim removes is \s.
function trimmedLength(text: string): number {
  let start = 0
  let end = text.length
  while (start < end && isSpace(text.charCodeAt(start))) start++
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--
  return end - start
}

function isSpace(c: number): boolean {
  if (c > 32 && c < 127) return false
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
}

/** The text under root, read from the text nodes (the markdown step stands in for textContent). */
export function textOf(root: DomNode): string {
  let text = ''
  for (let n = root.firstChild; n && n !== root; n = n.nodeType === ELEMENT && n.firstChild ? n.firstChild : after(n, root)) {
    if (n.nodeType === TEXT) text += n.data
  }
  return text
}

// The next node in document order after node's subtree, staying inside root.
function after(node: DomNode, root: DomNode): DomNode | null {
  for (let n: DomNode | null = node; n && n !== root; n = n.parentNode) {
    if (n.nextSibling) return n.nextSibling
  }
  return null
}

const isLink = (el: DomNode) => el.localName === 'a' && el.hasAttribute('href')
const isMain = (el: DomNode) => el.localName === 'main' || el.getAttribute('role') === 'main'

/**
 * Picks the content root (the largest <main>/[role=main], else a dominant <article>, else body)
 * and returns the chrome test for elements inside it. An element that contains the content
 * (the root's own ancestors, the main article, itemprop=articleBody, #main/#content) is never chrome.
 * Elements for which `removed` holds are left out with their content: they are never the root,
 * and no <h1> is taken from them.
 */
export function mainContent(body: DomNode, removed: (el: DomNode) => boolean = () => false): MainContent {
  const mains: DomNode[] = []
  const articles: DomNode[] = []
  const anchors: DomNode[] = []
  let h1: DomNode | null = null
  let node = body.firstChild
  while (node && node !== body) {
    if (node.nodeType === ELEMENT && removed(node)) {
      node = after(node, body)
      continue
    }
    if (node.nodeType === ELEMENT) {
      const tag = node.localName
      if (isMain(node)) mains.push(node)
      else if (tag === 'article') articles.push(node)
      else if (tag === 'h1' && !h1) h1 = node
      if (node.getAttribute('itemprop') === 'articleBody' || CONTENT_IDS.has(node.getAttribute('id') ?? '')) {
        anchors.push(node)
      }
    }
    node = node.nodeType === ELEMENT && node.firstChild ? node.firstChild : after(node, body)
  }

  // Computed once for every element: nested candidates would each walk the same subtree again.
  const lengths = textLengths(body, removed)
  const prose = (el: DomNode) => lengths.prose.get(el) ?? proseLength(el)
  const text = (el: DomNode) => lengths.text.get(el) ?? 0
  const root =
    largest(mains, prose) ??
    dominant(
      articles.filter((a) => !within(a, 'article', body)),
      prose,
    ) ??
    body
  const inRoot = (el: DomNode) => el !== root && contains(root, el)
  const lead = root.localName === 'article' ? null : largest(articles.filter(inRoot), prose)
  const keep = new Set<DomNode>()
  for (const anchor of lead ? [...anchors, lead] : anchors) {
    for (let p: DomNode | null = anchor; p && p !== root; p = p.parentNode) keep.add(p)
  }
  // A title set above <main> (a hero header) would otherwise be lost with everything outside.
  const title = root !== body && h1 && !contains(root, h1) && !hasTag(root, 'h1') && prose(h1) > 0 ? h1 : null

  const rootProse = prose(root) + (title ? prose(title) : 0)
  const marked = (el: DomNode): boolean => {
    if (keep.has(el)) return false
    const tag = el.localName
    if (CHROME_TAGS.has(tag)) return true
    if ((tag === 'header' || tag === 'footer') && !within(el, 'content', body)) return true
    const role = el.getAttribute('role')
    if (role && CHROME_ROLES.has(role)) return true
    if (el.hasAttribute('hidden') || el.getAttribute('aria-modal') === 'true') return true
    const style = el.getAttribute('style')
    if (style && HIDDEN_STYLE.test(style)) return true
    // Class names are guesses: one holding most of the page's prose is the content, whatever it is called.
    return (tag === 'form' || namedChrome(el)) && prose(el) * 2 <= rootProse
  }
  // Before the title moves in: a title block at the top of the root ends the leading chrome.
  const edges =
    root.localName === 'article'
      ? new Set<DomNode>()
      : edgeChrome(
          root,
          (el) => removed(el) || marked(el),
          (el) => keep.has(el),
          text,
        )
  if (title) root.insertBefore(title, root.firstChild)
  const isChrome = (el: DomNode) => edges.has(el) || marked(el)
  return { root, isChrome }
}

// A class names chrome as a styling hook does. An id may instead be an anchor made from a
// section's heading ("sql-syntax-comments"): an id match does not count on an element that
// shares its tag and class with a sibling not named like chrome, one of a series of sections.
function namedChrome(el: DomNode): boolean {
  const cls = el.getAttribute('class')
  if (cls !== null && CHROME_WORDS.test(cls.toLowerCase())) return true
  const id = el.getAttribute('id')
  if (id === null || !CHROME_WORDS.test(id.toLowerCase())) return false
  if (!cls) return true
  for (const dir of ['previousSibling', 'nextSibling'] as const) {
    for (let s = el[dir]; s; s = s[dir]) {
      if (s.nodeType === ELEMENT && s.localName === el.localName && s.getAttribute('class') === cls && !CHROME_WORDS.test((s.getAttribute('id') ?? '').toLowerCase())) return false
    }
  }
  return true
}

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
function edgeChrome(root: DomNode, skipped: (el: DomNode) => boolean, kept: (el: DomNode) => boolean, text: (el: DomNode) => number): Set<DomNode> {
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

function largest(els: DomNode[], prose: (el: DomNode) => number): DomNode | null {
  let best: DomNode | null = null
  let bestLength = 0
  for (const el of els) {
    const length = prose(el)
    if (length > bestLength) [best, bestLength] = [el, length]
  }
  return best
}

// Several articles of similar weight are a listing: the whole page is the content then.
function dominant(articles: DomNode[], prose: (el: DomNode) => number): DomNode | null {
  if (articles.length <= 1) return articles[0] ?? null
  const lengths = articles.map(prose)
  const total = lengths.reduce((a, b) => a + b, 0)
  const top = Math.max(...lengths)
  return top > 0 && top >= total * 0.6 ? articles[lengths.indexOf(top)]! : null
}

// 'content' means inside an <article> or <main>: headers and footers there belong to the content.
function within(el: DomNode, what: 'article' | 'content', stop: DomNode): boolean {
  for (let p = el.parentNode; p && p !== stop.parentNode; p = p.parentNode) {
    if (p.nodeType !== ELEMENT) continue
    if (p.localName === 'article' || (what === 'content' && isMain(p))) return true
  }
  return false
}

function contains(root: DomNode, el: DomNode): boolean {
  for (let p: DomNode | null = el; p; p = p.parentNode) if (p === root) return true
  return false
}

function hasTag(root: DomNode, tag: string): boolean {
  for (let n = root.firstChild; n && n !== root; n = n.nodeType === ELEMENT && n.firstChild ? n.firstChild : after(n, root)) {
    if (n.nodeType === ELEMENT && n.localName === tag) return true
  }
  return false
}
