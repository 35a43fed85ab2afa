import { _compileToken, type Options } from 'css-select'
import { isTraversal, parse as parseCss, SelectorType, type Selector } from 'css-what'
import type { HTMLElement, Node } from 'node-html-parser'
import { attrOf, tagOf, textOf } from './tree'

/**
 * CSS selection over node-html-parser trees with each selector compiled once.
 * node-html-parser's own querySelectorAll recompiles the selector on every call (about 3x
 * slower over a 2000-item listing measured here) and runs css-select in XML mode, where `DIV`
 * matches nothing; we drive css-select ourselves, in HTML mode, through this adapter.
 */

/**
 * Every element node, the document root included: the scope must be an element for
 * css-select to reach it when it walks up from a candidate. The root has no tag name, so no
 * type selector matches it, and `:root` is redefined below to mean the top-level elements.
 */
const isElement = (n: Node | null | undefined): n is HTMLElement => !!n && n.nodeType === 1
const isTopLevel = (el: HTMLElement) => !!el.parentNode && el.parentNode.parentNode === null && el.parentNode.rawTagName == null

/** Depth-first, document order, without recursion (documents can nest thousands deep). */
function walk(nodes: readonly Node[], visit: (el: HTMLElement) => boolean): void {
  const stack: Node[] = []
  for (let i = nodes.length - 1; i >= 0; i--) stack.push(nodes[i]!)
  while (stack.length > 0) {
    const node = stack.pop()!
    if (!isElement(node)) continue
    if (visit(node)) return
    for (let i = node.childNodes.length - 1; i >= 0; i--) stack.push(node.childNodes[i]!)
  }
}

function findAll(test: (el: HTMLElement) => boolean, nodes: Node[]): HTMLElement[] {
  const out: HTMLElement[] = []
  walk(nodes, (el) => {
    if (test(el)) out.push(el)
    return false
  })
  return out
}

function findOne(test: (el: HTMLElement) => boolean, nodes: Node[]): HTMLElement | null {
  let found: HTMLElement | null = null
  walk(nodes, (el) => test(el) && (found = el) !== null)
  return found
}

const adapter = {
  isTag: isElement,
  getParent: (el: HTMLElement): Node | null => el.parentNode ?? null,
  getChildren: (node: Node): Node[] => node.childNodes,
  getSiblings: (node: Node): Node[] => node.parentNode?.childNodes ?? [node],
  getName: tagOf,
  getAttributeValue: attrOf,
  hasAttrib: (el: HTMLElement, name: string) => attrOf(el, name) !== undefined,
  getText: (node: Node) => (isElement(node) ? textOf(node) : node.text),
  // Only used for array contexts, which this module never passes.
  removeSubsets: (nodes: Node[]) => nodes,
  existsOne: (test: (el: HTMLElement) => boolean, nodes: Node[]) => findOne(test, nodes) !== null,
  findAll,
  findOne,
}

type Query = (el: HTMLElement) => boolean
type Entry = { query: Query; nextSiblings: boolean }

/**
 * The element selection is relative to. Selection is synchronous and never re-entered (nested
 * fields select after their parent's selection returned), so one module variable serves.
 */
let scope: HTMLElement | null = null
const SCOPE_PSEUDO = 'trawl-scope'
// cacheResults would remember "no matching ancestor" between calls, wrong once the scope moves.
const OPTIONS: Options<Node, HTMLElement> = {
  adapter,
  xmlMode: false,
  cacheResults: false,
  relativeSelector: false,
  pseudos: { root: isTopLevel, [SCOPE_PSEUDO]: (el: HTMLElement) => el === scope },
}
const MAX_CACHED = 2000
const cache = new Map<string, Entry>()

/**
 * Anchors each selector of a list at the scope, as jQuery's `find` does: `p` becomes
 * `:scope p` (a descendant of the scope, ancestors outside it do not count), `> p` and `+ p`
 * become `:scope > p` and `:scope + p`, and a `:scope` written by the user is the scope itself.
 * css-select's own anchoring would let the scope match itself (`li` inside an `li` item would
 * find the item), so we anchor with our own pseudo-class and compile with relativeSelector off.
 */
function anchor(selectors: Selector[][]): { tokens: Selector[][]; nextSiblings: boolean } {
  let nextSiblings = false
  const own = (list: Selector[][]): Selector[][] =>
    list.map((sequence) =>
      sequence.map((t) => {
        if (t.type !== SelectorType.Pseudo) return t
        if (t.name === 'scope') return { ...t, name: SCOPE_PSEUDO }
        // Inside :has(), css-select gives :scope its own meaning (the element :has tests).
        return Array.isArray(t.data) && t.name !== 'has' ? { ...t, data: own(t.data) } : t
      }),
    )
  const tokens = own(selectors).map((sequence) => {
    const first = sequence[0]
    const mentionsScope = JSON.stringify(sequence).includes(`"${SCOPE_PSEUDO}"`)
    if (first && isTraversal(first)) {
      if (first.type === SelectorType.Adjacent || first.type === SelectorType.Sibling) nextSiblings = true
      return [{ type: SelectorType.Pseudo, name: SCOPE_PSEUDO, data: null } as Selector, ...sequence]
    }
    if (mentionsScope) return sequence
    return [{ type: SelectorType.Pseudo, name: SCOPE_PSEUDO, data: null } as Selector, { type: SelectorType.Descendant } as Selector, ...sequence]
  })
  return { tokens, nextSiblings }
}

function compile(selector: string): Entry {
  let entry = cache.get(selector)
  if (!entry) {
    if (cache.size >= MAX_CACHED) cache.clear()
    const { tokens, nextSiblings } = anchor(parseCss(selector))
    entry = { query: _compileToken(tokens, OPTIONS), nextSiblings }
    cache.set(selector, entry)
  }
  return entry
}

function run<T>(within: HTMLElement, selector: string, search: (test: Query, nodes: Node[]) => T): T {
  const { query, nextSiblings } = compile(selector)
  // The scope itself is a candidate: only a selector that names `:scope` can match it.
  let nodes: Node[] = [within]
  if (nextSiblings) {
    const siblings = adapter.getSiblings(within)
    nodes = [within, ...siblings.slice(siblings.indexOf(within) + 1)]
  }
  scope = within
  try {
    return search(query, nodes)
  } finally {
    scope = null // a finished document must not stay reachable from here
  }
}

/** Every element that `selector` matches under `within` (or `:scope`, `within` itself), in document order; the selector must have passed selectorProblem. */
export const selectAll = (within: HTMLElement, selector: string): HTMLElement[] => run(within, selector, findAll)

/** The first element that `selector` matches under `within` (or `:scope` itself), or null. */
export const selectFirst = (within: HTMLElement, selector: string): HTMLElement | null => run(within, selector, findOne)

/** Compiles a parsed selector the way selection does; throws what css-select rejects. */
export function compileCheck(tokens: Selector[][]): void {
  _compileToken(anchor(tokens).tokens, OPTIONS)
}
