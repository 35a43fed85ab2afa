// Main-content selection for the markdown step: which element holds the page's content, and
// which elements inside it are page chrome (navigation, banners, sidebars, ads, cookie notices).
import { after, ELEMENT, isLink, TEXT, trimmedLength, type DomNode } from './dom'
import { edgeChrome } from './edge-chrome'

/** The chosen content root and a test for chrome to drop inside it. */
export type MainContent = { root: DomNode; isChrome: (el: DomNode) => boolean }

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
