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
const parentOf = (el: HTMLElement): HTMLElement | null => (isElement(el.parentNode) ? el.parentNode : null)

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

/**
 * Positions of nodes among their siblings, filled a parent at a time during one selection and
 * emptied after it, so `+` and `~` find the previous element without scanning the siblings.
 */
const positions = new Map<Node, number>()

function previousElement(el: HTMLElement): HTMLElement | null {
  const siblings = el.parentNode?.childNodes
  if (!siblings) return null
  let i = positions.get(el)
  if (i === undefined) {
    for (let k = 0; k < siblings.length; k++) positions.set(siblings[k]!, k)
    i = positions.get(el) ?? siblings.indexOf(el)
  }
  while (--i >= 0) {
    const node = siblings[i]
    if (isElement(node)) return node
  }
  return null
}

const adapter = {
  isTag: isElement,
  getParent: (el: HTMLElement): Node | null => el.parentNode ?? null,
  getChildren: (node: Node): Node[] => node.childNodes,
  getSiblings: (node: Node): Node[] => node.parentNode?.childNodes ?? [node],
  prevElementSibling: (node: Node) => previousElement(node as HTMLElement),
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

/**
 * A descendant or general-sibling step, matched with a memo. css-select checks `a b c`
 * by trying, for each `b` ancestor, every ancestor for `a` again: without its result cache
 * that is exponential in the number of such combinators (150 nested divs and
 * `nav div div div a` took 15 s), and its cache cannot be emptied when the scope moves. So we
 * cut selectors at ` ` and `~`: each piece left of a cut is compiled on its own (`test`), and
 * the piece right of it carries a pseudo-class asking "does an ancestor (a previous sibling)
 * match that piece?", answered once per element per selection and remembered in `memo`.
 */
type Link = { kind: 'ancestor' | 'previous' | 'self-or-ancestor'; test: Query; memo: Map<HTMLElement, boolean> }
type Entry = { query: Query; nextSiblings: boolean; links: Link[] }

/**
 * The element selection is relative to. Selection is synchronous and never re-entered (nested
 * fields select after their parent's selection returned), so one module variable serves.
 */
let scope: HTMLElement | null = null
// Names css-what never produces from a selector (a space cannot be in one), so no user can write them.
const SCOPE_PSEUDO = 'trawl scope'
const LINK_PSEUDO = 'trawl link'
const MAX_CACHED = 2000
const cache = new Map<string, Entry>()

const pseudo = (name: string, data: string | null = null) => ({ type: SelectorType.Pseudo, name, data }) as Selector
const DESCENDANT = { type: SelectorType.Descendant } as Selector
/** Sub-selector lists cut like the selector itself (`:has` is rewritten on its own). */
const SUBSELECTS = new Set(['is', 'where', 'matches', 'not'])

/** `:scope` as the user wrote it becomes our pseudo, except inside `:has()`, where css-select gives it its own meaning. */
function ownScope(list: Selector[][]): Selector[][] {
  return list.map((sequence) =>
    sequence.map((t) => {
      if (t.type !== SelectorType.Pseudo) return t
      if (t.name === 'scope') return { ...t, name: SCOPE_PSEUDO }
      return Array.isArray(t.data) && t.name !== 'has' ? { ...t, data: ownScope(t.data) } : t
    }),
  )
}

/** Whether a token names the scope, itself or in a sub-selector (not in `:has`). */
function namesScope(t: Selector): boolean {
  if (t.type !== SelectorType.Pseudo) return false
  if (t.name === SCOPE_PSEUDO) return true
  return Array.isArray(t.data) && t.name !== 'has' && t.data.some((sequence) => sequence.some(namesScope))
}

/**
 * Anchors each selector of a list at the scope, as jQuery's `find` does, so that every
 * element a match involves lies in the scope: `p` becomes `:scope p` (ancestors outside the
 * scope do not count), `> p` and `+ p` become `:scope > p` and `:scope + p`. A first compound
 * that names `:scope` (`:scope > a`, `dt:scope + dd`, `:is(:scope, .x) > a`) must be the scope
 * or inside it; `:scope` anywhere else (`div p:not(:scope)`) anchors nothing by itself.
 * css-select's own anchoring would let the scope match itself (`li` inside an `li` item would
 * find the item), so we anchor with our own pseudo-class and compile with relativeSelector off.
 * `nextSiblings`: some selector can match the scope's following siblings (`+ dd`, `:scope ~ dd`).
 */
function anchor(selectors: Selector[][], within: () => Selector): { tokens: Selector[][]; nextSiblings: boolean } {
  let nextSiblings = false
  const tokens = ownScope(selectors).map((sequence) => {
    const first = sequence[0]
    if (first && isTraversal(first)) {
      if (first.type === SelectorType.Adjacent || first.type === SelectorType.Sibling) nextSiblings = true
      return [pseudo(SCOPE_PSEUDO), ...sequence]
    }
    const end = sequence.findIndex(isTraversal)
    const compound = end < 0 ? sequence : sequence.slice(0, end)
    if (!compound.some(namesScope)) return [pseudo(SCOPE_PSEUDO), DESCENDANT, ...sequence]
    const after = sequence[end]
    if (after && (after.type === SelectorType.Adjacent || after.type === SelectorType.Sibling)) nextSiblings = true
    // `:scope` itself pins the compound to the scope; a `:scope` in `:is()`/`:not()` does not.
    return compound.some((t) => t.type === SelectorType.Pseudo && t.name === SCOPE_PSEUDO) ? sequence : [within(), ...sequence]
  })
  return { tokens, nextSiblings }
}

/** Compiles a selector: anchored, cut at descendant and sibling combinators, each piece by css-select. */
function build(selectors: Selector[][]): Entry {
  const links: Link[] = []
  const hasTests: Query[] = []
  const options: Options<Node, HTMLElement> = {
    adapter,
    xmlMode: false,
    cacheResults: false,
    relativeSelector: false,
    pseudos: {
      root: isTopLevel,
      [SCOPE_PSEUDO]: (el: HTMLElement) => el === scope,
      // Our `:has`, called with its index as a string argument (a selector cannot give `:has`
      // one): the name keeps css-select's "most expensive, test last" place in a compound.
      has: (el: HTMLElement, data?: string | null) => hasTests[Number(data)]!(el),
    } as Record<string, Query>,
  }
  // A pseudo-class of its own per link: css-select then calls the link with no argument to parse.
  const link = (kind: Link['kind'], test: Query): Selector => {
    const l: Link = { kind, test, memo: new Map() }
    const name = `${LINK_PSEUDO} ${links.push(l)}`
    options.pseudos![name] = (el: HTMLElement) => follow(l, el)
    return pseudo(name)
  }

  const compileSequence = (sequence: Selector[]): Query => (sequence.length === 0 ? () => true : _compileToken([sequence], options))
  const cutList = (list: Selector[][], relativeTo: string): Selector[][] => list.map((sequence) => cut(sequence, relativeTo))
  /**
   * The sequence with every top-level ` ` and `~` replaced by a link to the piece before it,
   * sub-selectors cut too. `relativeTo` is what css-select anchors a relative `:is(> p)` at.
   */
  function cut(sequence: Selector[], relativeTo: string): Selector[] {
    let piece: Selector[] = []
    for (const t of sequence) {
      if (t.type === SelectorType.Descendant || t.type === SelectorType.Sibling) {
        piece = [link(t.type === SelectorType.Descendant ? 'ancestor' : 'previous', compileSequence(piece))]
      } else if (t.type === SelectorType.Pseudo && Array.isArray(t.data) && t.name === 'has') {
        piece.push(has(t.data))
      } else if (t.type === SelectorType.Pseudo && Array.isArray(t.data) && SUBSELECTS.has(t.name)) {
        const data = t.data.map((s) => (s[0] && isTraversal(s[0]) && s[0].type !== SelectorType.Descendant ? [pseudo(relativeTo), ...s] : s))
        piece.push({ ...t, data: cutList(data, relativeTo) })
      } else piece.push(t)
    }
    return piece
  }

  /**
   * `:has(list)` as css-select reads it (a relative selector list, `:scope` in it the element
   * tested, `+`/`~` reaching its following siblings), matched with links whose memos hold for
   * one tested element and are emptied after it: css-select's own is exponential too.
   */
  function has(list: Selector[][]): Selector {
    const index = hasTests.length
    const subject = `trawl subject ${index}`
    let current: HTMLElement | null = null
    options.pseudos![subject] = (el: HTMLElement) => el === current
    const mapScope = (l: Selector[][]): Selector[][] =>
      l.map((sequence) =>
        sequence.map((t) => {
          if (t.type !== SelectorType.Pseudo) return t
          if (t.name === 'scope') return { ...t, name: subject }
          return Array.isArray(t.data) && t.name !== 'has' ? { ...t, data: mapScope(t.data) } : t
        }),
      )
    const namesSubject = (t: Selector): boolean => t.type === SelectorType.Pseudo && (t.name === subject || (Array.isArray(t.data) && t.data.some((sequence) => sequence.some(namesSubject))))
    let nextSiblings = false
    const from = links.length // the links made from here on hold for one tested element
    const absolute = mapScope(list).map((sequence) => {
      const first = sequence[0]
      if (first && isTraversal(first)) {
        if (first.type === SelectorType.Adjacent || first.type === SelectorType.Sibling) nextSiblings = true
        return [pseudo(subject), ...sequence]
      }
      if (sequence.some(namesSubject)) return sequence
      // css-select lets the first compound be the tested element itself (`ul:has(* > li)`
      // matches `<ul><li>`, where CSS wants an element in between); kept as it was.
      return [link('self-or-ancestor', (el) => el === current), ...sequence]
    })
    hasTests.push(() => false) // holds the index while the list compiles (a nested :has takes the next)
    const query = _compileToken(cutList(absolute, subject), options)
    const own = links.slice(from)
    hasTests[index] = (el: HTMLElement) => {
      const outer = current
      current = el
      try {
        const nodes = nextSiblings ? [...el.childNodes, ...followingSiblings(el)] : el.childNodes
        return findOne(query, nodes) !== null
      } finally {
        current = outer
        for (const l of own) l.memo.clear()
      }
    }
    return pseudo('has', String(index))
  }

  const { tokens, nextSiblings } = anchor(selectors, () => link('self-or-ancestor', (el) => el === scope))
  const query = _compileToken(cutList(tokens, 'scope'), options)
  return { query, nextSiblings, links }
}

function followingSiblings(el: HTMLElement): Node[] {
  const siblings = adapter.getSiblings(el)
  return siblings.slice(siblings.indexOf(el) + 1)
}

/** Answers a link for `el`, walking up (or back) until an element matches its piece or a known answer. */
function follow(link: Link, el: HTMLElement): boolean {
  const step = link.kind === 'previous' ? previousElement : parentOf
  let current = link.kind === 'self-or-ancestor' ? el : step(el)
  const path: HTMLElement[] = []
  let found = false
  while (current) {
    const known = link.memo.get(current)
    if (known !== undefined) {
      found = known
      break
    }
    path.push(current)
    if (link.test(current)) {
      found = true
      break
    }
    current = step(current)
  }
  // Each element on the path answers "it, or one before it, matches" the same way.
  for (const visited of path) link.memo.set(visited, found)
  return found
}

function compile(selector: string): Entry {
  let entry = cache.get(selector)
  if (!entry) {
    if (cache.size >= MAX_CACHED) cache.clear()
    entry = build(parseCss(selector))
    cache.set(selector, entry)
  }
  return entry
}

function run<T>(within: HTMLElement, selector: string, search: (test: Query, nodes: Node[]) => T): T {
  const { query, nextSiblings, links } = compile(selector)
  // The scope itself is a candidate: only a selector that names `:scope` can match it.
  let nodes: Node[] = [within]
  if (nextSiblings) nodes = [within, ...followingSiblings(within)]
  scope = within
  try {
    return search(query, nodes)
  } finally {
    // Memos hold for one scope only; and a finished document must not stay reachable from here.
    scope = null
    for (const link of links) link.memo.clear()
    positions.clear()
  }
}

/** Every element that `selector` matches under `within` (or `:scope`, `within` itself), in document order; the selector must have passed selectorProblem. */
export const selectAll = (within: HTMLElement, selector: string): HTMLElement[] => run(within, selector, findAll)

/** The first element that `selector` matches under `within` (or `:scope` itself), or null. */
export const selectFirst = (within: HTMLElement, selector: string): HTMLElement | null => run(within, selector, findOne)

/** Compiles a parsed selector the way selection does; throws what css-select rejects. */
export function compileCheck(tokens: Selector[][]): void {
  build(tokens)
}
