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
const CHROME_ROLES = new Set([
  'navigation', 'banner', 'contentinfo', 'complementary', 'search', 'dialog', 'alertdialog',
  'menu', 'menubar',
])
// Class or id words that mark chrome when they appear as a dash/underscore-separated part of a
// token ("cookie-banner", "share_bar", "top-ads"); "language-*" and "lang-*" are code classes,
// so language pickers are matched by whole token only.
const CHROME_PARTS = [
  'cookie', 'cookies', 'consent', 'gdpr', 'onetrust', 'newsletter', 'subscribe', 'sidebar',
  'breadcrumb', 'breadcrumbs', 'advert', 'adverts', 'advertisement', 'advertising', 'adsense',
  'adslot', 'ad', 'ads', 'dfp', 'sponsor', 'sponsored', 'popup', 'modal', 'share', 'sharing',
  'sharethis', 'addthis', 'social', 'socials', 'related', 'recommended', 'disqus', 'comments',
  'announcement', 'pagination', 'pager', 'skiplink', 'navbar', 'megamenu',
]
// Whole-token matches only: as parts these name content too ("entry-header" holds the title).
const CHROME_TOKENS = [
  'header', 'site-header', 'global-header', 'masthead', 'footer', 'site-footer', 'global-footer',
  'page-footer', 'topbar', 'top-bar', 'nav', 'navigation', 'site-nav', 'main-nav', 'menu',
  'main-menu', 'skip-link', 'skip-to-content', 'sr-only', 'visually-hidden', 'screen-reader-text',
  'language', 'lang-selector', 'language-selector', 'language-switcher', 'widget', 'widgets',
  'overlay', 'toolbar',
]
const CHROME_WORDS = new RegExp(
  `(?:^|[\\s_-])(?:${CHROME_PARTS.join('|')})(?=$|[\\s_-])|(?:^|\\s)(?:${CHROME_TOKENS.join('|')})(?=$|\\s)`,
)
const HIDDEN_STYLE = /display\s*:\s*none|visibility\s*:\s*hidden/i
// Ids that name the content container: their ancestors are never dropped (Firecrawl's #main).
const CONTENT_IDS = new Set(['main', 'main-content', 'maincontent', 'content', 'primary'])

/** Visible prose length: text outside links, so link-heavy chrome weighs little. */
export function proseLength(root: DomNode): number {
  let total = 0
  let node = root.firstChild
  while (node && node !== root) {
    if (node.nodeType === TEXT) total += node.data.trim().length
    const skip = node.nodeType !== ELEMENT || node.localName === 'a' || !node.firstChild
    node = skip ? after(node, root) : node.firstChild
  }
  return total
}

// proseLength of root and of every element under it, in one walk.
function proseLengths(root: DomNode): Map<DomNode, number> {
  const lengths = new Map<DomNode, number>()
  const outer: number[] = [] // the sums of the elements being walked, innermost last
  let sum = 0
  let node = root.firstChild
  while (node) {
    if (node.nodeType === ELEMENT && node.firstChild) {
      outer.push(sum)
      sum = 0
      node = node.firstChild
      continue
    }
    if (node.nodeType === TEXT) sum += trimmedLength(node.data)
    else if (node.nodeType === ELEMENT) lengths.set(node, 0)
    while (!node.nextSibling) {
      const parent: DomNode | null = node.parentNode
      if (!parent || parent === root) {
        lengths.set(root, sum)
        return lengths
      }
      lengths.set(parent, sum)
      // A link's text is not prose of the elements around it.
      sum = outer.pop()! + (parent.localName === 'a' ? 0 : sum)
      node = parent
    }
    node = node.nextSibling
  }
  lengths.set(root, sum)
  return lengths
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
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
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
  const lengths = proseLengths(body)
  const prose = (el: DomNode) => lengths.get(el) ?? proseLength(el)
  const root = largest(mains, prose) ?? dominant(articles.filter((a) => !within(a, 'article', body)), prose) ?? body
  const inRoot = (el: DomNode) => el !== root && contains(root, el)
  const lead = root.localName === 'article' ? null : largest(articles.filter(inRoot), prose)
  const keep = new Set<DomNode>()
  for (const anchor of lead ? [...anchors, lead] : anchors) {
    for (let p: DomNode | null = anchor; p && p !== root; p = p.parentNode) keep.add(p)
  }
  // A title set above <main> (a hero header) would otherwise be lost with everything outside.
  if (root !== body && h1 && !contains(root, h1) && !hasTag(root, 'h1') && prose(h1) > 0) {
    root.insertBefore(h1, root.firstChild)
  }

  // Walked again: the moved <h1> is in the root now (the lengths of elements inside it hold).
  const rootProse = proseLength(root)
  const isChrome = (el: DomNode): boolean => {
    if (keep.has(el)) return false
    const tag = el.localName
    if (CHROME_TAGS.has(tag)) return true
    if ((tag === 'header' || tag === 'footer') && !within(el, 'content', body)) return true
    const role = el.getAttribute('role')
    if (role && CHROME_ROLES.has(role)) return true
    if (el.hasAttribute('hidden')) return true
    const style = el.getAttribute('style')
    if (style && HIDDEN_STYLE.test(style)) return true
    const cls = el.getAttribute('class')
    const id = el.getAttribute('id')
    const named = (cls !== null && CHROME_WORDS.test(cls.toLowerCase())) || (id !== null && CHROME_WORDS.test(id.toLowerCase()))
    // Class names are guesses: one holding most of the page's prose is the content, whatever it is called.
    return (named || tag === 'form') && prose(el) * 2 <= rootProse
  }
  return { root, isChrome }
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
