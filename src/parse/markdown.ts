import TurndownService from 'turndown'
import { textOf, type DomNode } from './dom'
import { mainContent } from './main-content'
import { INDENT, TRAILING_SPACE, turndownRules } from './markdown-rules'
import { boundNesting, MAX_NESTING } from './nesting'

/** Options of the markdown step; `main_content` is on unless it is false (one default for parse, crawl and scrape). */
export type MarkdownOptions = { skip_tags?: string[]; main_content?: boolean }

// turndown's own DOM; its published types name a module 'domino', not this package.
const domino = require('@mixmark-io/domino') as { createDocument(html: string): DomDocument }
type DomDocument = DomNode & { body: DomNode | null; documentElement: DomNode; querySelector(selector: string): DomNode | null }

// Never content, whatever the options: code, styling, embedded documents, media fallbacks.
const ALWAYS_DROPPED = new Set(['script', 'style', 'noscript', 'template', 'iframe', 'frame', 'object', 'embed', 'svg', 'canvas', 'video', 'audio', 'map', 'title', 'meta', 'link', 'base'])

/**
 * Per-call state the rules read; set for the duration of one synchronous toMarkdown call.
 * `flat` holds the list items and blockquotes nested too deep to indent further.
 */
export type RenderState = { base: string | null; codes: string[]; flat: Set<DomNode> }
const state: RenderState = { base: null, codes: [], flat: new Set() }

// One service for every call: building one (and its rule list) costs more than a small page.
const service = new TurndownService({
  headingStyle: 'atx',
  hr: '---',
  bulletListMarker: '-',
  codeBlockStyle: 'fenced',
  emDelimiter: '*',
  strongDelimiter: '**',
})
turndownRules(service, state)

/**
 * Converts an HTML document to markdown (design.md §6): ATX headings, fenced code with its language,
 * `-` bullets, GFM tables, absolute links and images. The HTML is parsed once; scripts and
 * styles, `skip_tags` (with their content) and, unless `main_content` is false, page chrome are removed
 * from that DOM before turndown walks it.
 */
export function toMarkdown(html: string, baseUrl: string, opts: MarkdownOptions = {}): string {
  // domino's tree builder is quadratic in nesting depth: deeper start tags go before it parses.
  const doc = domino.createDocument(boundNesting(html))
  // Before pruning, which drops <base> elements; only a <base tag makes one, so most pages skip the search.
  const base = documentBase(doc, baseUrl, /<base[\s/>]/i.test(html))
  const body = doc.body ?? doc.documentElement
  const skip = new Set((opts.skip_tags ?? []).map((t) => t.trim().toLowerCase()))
  const removed = (el: DomNode) => ALWAYS_DROPPED.has(el.localName) || skip.has(el.localName)
  // The root is never tested by prune: a removed element (or one inside it) cannot be the root.
  const main = opts.main_content !== false ? mainContent(body, removed) : null
  const root = main?.root ?? body
  for (let p: DomNode | null = root; p; p = p.parentNode) if (p.nodeType === 1 && removed(p)) return ''
  const drop = (el: DomNode) => removed(el) || (el.localName === 'input' && !isTask(el)) || (main?.isChrome(el) ?? false)
  const flat = new Set<DomNode>()
  prune(root, drop, flat)
  // turndown deep-clones a node it is given so it can mutate it; this DOM is ours to mutate.
  Object.defineProperty(root, 'cloneNode', { value: () => root })

  state.base = base
  state.codes = []
  state.flat = flat
  try {
    // The cast hands turndown domino's node: @types/turndown names lib.dom types we do not load.
    return finish(service.turndown(root as unknown as TurndownService.Node), state.codes)
  } finally {
    state.base = null
    state.codes = []
    state.flat = new Set()
  }
}

// Inputs render as nothing, but would leave the space after them at the start of a line; a
// checkbox in a list item is a task-list marker.
function isTask(input: DomNode): boolean {
  if (input.getAttribute('type')?.toLowerCase() !== 'checkbox') return false
  for (let p = input.parentNode; p; p = p.parentNode) if (p.nodeName === 'LI') return true
  return false
}

// Chromium's parser stops nesting at 512 levels too; turndown and domino recurse per level, and
// a page of thousands of unclosed tags would overflow the stack. boundNesting keeps the parser
// near this depth; content deeper still (the parser re-opens formatting elements) becomes text.
const MAX_DEPTH = MAX_NESTING
// Each list item and blockquote indents all of its content again: past this many of them
// around a node, items and quotes are written at the indentation they have reached.
const MAX_INDENT = 32
const INDENTS = new Set(['LI', 'BLOCKQUOTE'])

function prune(root: DomNode, drop: (el: DomNode) => boolean, flat: Set<DomNode>): void {
  let node = root.firstChild
  let depth = 1
  let indent = 0 // list items and blockquotes around node
  let pre = 0 // <pre> elements around node
  const next = () => {
    for (let n: DomNode | null = node; n && n !== root;) {
      if (n.nextSibling) return n.nextSibling
      n = n.parentNode
      depth--
      // Leaving n's subtree: n no longer surrounds the node visited next.
      if (n && n !== root) {
        if (INDENTS.has(n.nodeName)) indent--
        else if (n.nodeName === 'PRE') pre--
      }
    }
    return null
  }
  while (node) {
    const element = node.nodeType === 1
    if (element && drop(node)) {
      const victim = node
      node = next()
      victim.parentNode?.removeChild(victim)
      continue
    }
    if (!element) {
      if (node.nodeType === 3 && pre === 0 && node.data.length > MAX_SPACE_RUN) node.data = shortenSpaceRuns(node.data)
      node = next()
      continue
    }
    const name = node.nodeName
    if (indent >= MAX_INDENT && INDENTS.has(name)) flat.add(node)
    if (node.firstChild && depth >= MAX_DEPTH) {
      const text = textOf(node)
      while (node.firstChild) node.removeChild(node.firstChild)
      node.appendChild(node.ownerDocument.createTextNode(pre > 0 || name === 'PRE' ? text : shortenSpaceRuns(text)))
    } else if (node.firstChild && (node.firstChild !== node.lastChild || node.firstChild.nodeType === 1)) {
      Object.defineProperty(node, 'textContent', EDGE_TEXT)
    }
    if (node.firstChild && depth < MAX_DEPTH) {
      if (INDENTS.has(name)) indent++
      else if (name === 'PRE') pre++
      node = node.firstChild
      depth++
    } else node = next()
  }
}

// turndown's last step trims the output with /[\t\r\n\s]+$/, which takes time quadratic in the
// length of each run of whitespace it does not collapse itself (no-break and other Unicode
// spaces). Outside <pre>, runs longer than this are collapsed as turndown would collapse them
// and then cut to this length; a markdown renderer shows them as one space anyway.
const MAX_SPACE_RUN = 256
const LONG_SPACE_RUN = new RegExp(`(?<!\\s)\\s{${MAX_SPACE_RUN + 1},}`, 'g')

function shortenSpaceRuns(text: string): string {
  return text.replace(LONG_SPACE_RUN, (run) => run.replace(/[ \t\r\n]+/g, ' ').slice(0, MAX_SPACE_RUN))
}

// turndown reads an element's textContent only to see whether it is blank and which whitespace
// it starts and ends with; on a container that string is the whole subtree's text, built again
// for every level of nesting. This stand-in keeps the edges and replaces the middle with "x".
const EDGE_TEXT = {
  get(this: DomNode): string {
    const lead = edge(this, 'firstChild', 'nextSibling')
    if (lead === null) return textOf(this)
    return `${lead}x${edge(this, 'lastChild', 'previousSibling') ?? ''}`
  },
}

// The whitespace before the first non-space character, walking from one end; null if none.
function edge(root: DomNode, first: 'firstChild' | 'lastChild', next: 'nextSibling' | 'previousSibling'): string | null {
  let space = ''
  let node = root[first]
  while (node && node !== root) {
    if (node.nodeType === 3) {
      const data = node.data
      const leading = first === 'firstChild'
      // Most text starts and ends with a visible character: no whitespace edge to measure.
      const c = data.charCodeAt(leading ? 0 : data.length - 1)
      if (c > 32 && c < 127) return space
      // (?<!\s): a run of spaces is tried once, not from each of its characters.
      const match = (leading ? /^\s*/ : /(?<!\s)\s*$/).exec(data)![0]
      if (match.length < data.length) return leading ? space + match : match + space
      space = leading ? space + data : data + space
    }
    if (node.nodeType === 1 && node[first]) node = node[first]
    else {
      while (node && node !== root && !node[next]) node = node.parentNode
      node = node && node !== root ? node[next] : null
    }
  }
  return null
}

// The first <base href> in the document (anywhere, as in a browser) re-bases relative links,
// itself resolved against the page URL; one that is not http(s) is ignored, as the scan does.
function documentBase(doc: DomDocument, pageUrl: string, mayHaveBase: boolean): string | null {
  const page = URL.parse(pageUrl)
  const href = mayHaveBase ? doc.querySelector('base[href]')?.getAttribute('href') : null
  const base = href === null || href === undefined ? null : URL.parse(href.trim(), page?.href)
  if (base && (base.protocol === 'http:' || base.protocol === 'https:')) return base.href
  return page?.href ?? null
}

const INDENTS_RUN = new RegExp(`${INDENT}+`, 'g')

// Code blocks come back as placeholders so that whitespace clean-up cannot touch code; each is
// re-indented with the prefix of its line (list indentation, blockquote markers).
function finish(markdown: string, codes: string[]): string {
  let out = markdown
    .replace(INDENTS_RUN, (run) => ' '.repeat(run.length))
    .replace(/\u00a0/g, ' ')
    .replace(TRAILING_SPACE, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
  if (codes.length === 0) return out
  out = out.replace(/^([ \t>]*)\uE000(\d+)\uE001$/gm, (_, prefix: string, i: string) =>
    (codes[Number(i)] ?? '')
      .split('\n')
      .map((line) => (line ? prefix + line : prefix.trimEnd()))
      .join('\n'),
  )
  return out.replace(/\uE000(\d+)\uE001/g, (_, i: string) => (codes[Number(i)] ?? '').replace(/\n/g, ' '))
}
