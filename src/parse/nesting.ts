// A linear pre-pass that bounds how deep an HTML parser nests elements.
//
// domino's tree builder walks its stack of open elements for many start tags (scope checks), so
// its time grows with depth × tags: 40 000 unclosed <div>s take 16 s. This pass follows the HTML
// tree builder approximately (void and raw-text elements, comments, implied end tags of p, li,
// dd/dt, table parts, option, headings and a, element scopes, foreign content) and removes the
// start tags that would open an element deeper than the cap, with the end tags that close them.
// Their content stays, at the deepest level kept. A page that never goes past the cap comes back
// as the very same string. Where the model is unsure it keeps elements open: it may overestimate
// the depth, never let a document nest without bound. (Formatting elements the parser reopens,
// <b> and the like, can add a few levels the model does not see.)

import {
  BREAKOUT,
  CLOSES_P,
  HEADING,
  HEADING_KINDS,
  IGNORED,
  INTEGRATION,
  ITEM,
  K,
  KNOWN,
  last,
  LIST_STOP,
  RAW_TEXT,
  REOPENS,
  SCOPE,
  SCOPED_END,
  SECTION,
  SIBLINGS,
  SPECIAL,
  TABLE_PART,
  TOP_SIBLING,
  VOID,
  type Kind,
} from './nesting-elements'
import { isAlpha, TagReader } from './nesting-tokens'

/** Depth at which boundNesting stops nesting; Chromium's parser stops at 512 levels too. */
export const MAX_NESTING = 512

/**
 * Returns html with the start tags that would nest elements deeper than `max` levels below
 * <body> removed, with their end tags; the same string when nothing nests that deep. Linear in
 * the length of html.
 */
export function boundNesting(html: string, max = MAX_NESTING): string {
  // Each start tag opens at most three levels (a cell implies a row and a table body): a page
  // with few start tags cannot nest that deep.
  let tags = 0
  for (let i = html.indexOf('<'); i >= 0 && tags * 3 <= max; i = html.indexOf('<', i + 1)) {
    if (isAlpha(html.charCodeAt(i + 1))) tags++
  }
  if (tags * 3 <= max) return html
  return new Bounder(html, max).run()
}

// Stack entry bits, besides the name's own flags.
const FOREIGN = 1 << 20

class Bounder {
  private readonly unknown = new Map<string, Kind>()
  // The stack of open elements: kind and entry bits (the kind's flags as they apply, FOREIGN).
  private readonly kinds: Kind[] = []
  private readonly bits: number[] = []
  // Stack indices of the open elements in a category, innermost last.
  private readonly special: number[] = []
  private readonly listStop: number[] = []
  private readonly scope: number[] = []
  private readonly htmlIndex: number[] = []
  // Elements opened past the cap: their tags are removed, their end tags too.
  private readonly overflow: Kind[] = []
  private readonly cut: number[] = [] // [start, end) pairs to remove
  private readonly tags: TagReader
  private formOpen = false

  constructor(
    private readonly html: string,
    private readonly max: number,
  ) {
    this.tags = new TagReader(html)
  }

  run(): string {
    try {
      this.scan()
    } finally {
      this.popTo(0)
      while (this.overflow.length > 0) this.overflowPop()
    }
    const html = this.html
    if (this.cut.length === 0) return html
    let out = ''
    let from = 0
    for (let k = 0; k < this.cut.length; k += 2) {
      out += html.slice(from, this.cut[k])
      from = this.cut[k + 1]!
    }
    return out + html.slice(from)
  }

  private scan(): void {
    const html = this.html
    const length = html.length
    let i = 0
    while (i < length) {
      const lt = html.indexOf('<', i)
      if (lt < 0 || lt + 1 >= length) break
      const c = html.charCodeAt(lt + 1)
      if (isAlpha(c)) {
        const nameEnd = this.tags.nameEnd(lt + 1)
        const end = this.tags.tagEnd(nameEnd)
        if (end < 0) break
        i = this.start(this.kind(html.slice(lt + 1, nameEnd)), lt, end, this.tags.selfClosing)
      } else if (c === 0x2f /* / */) {
        if (isAlpha(html.charCodeAt(lt + 2))) {
          const nameEnd = this.tags.nameEnd(lt + 2)
          const end = this.tags.tagEnd(nameEnd)
          if (end < 0) break
          this.end(this.kind(html.slice(lt + 2, nameEnd)), lt, end)
          i = end
        } else i = html.charCodeAt(lt + 2) === 0x3e ? lt + 3 : this.tags.afterGt(lt + 2)
      } else if (c === 0x21 /* ! */) {
        i = this.tags.markupDeclaration(lt, this.inForeign())
      } else if (c === 0x3f /* ? */) {
        i = this.tags.afterGt(lt + 2)
      } else i = lt + 1
    }
  }

  private kind(raw: string): Kind {
    let kind = KNOWN.get(raw)
    if (!kind) {
      const name = raw.toLowerCase()
      kind = KNOWN.get(name) ?? this.unknown.get(name)
      if (!kind) this.unknown.set(name, (kind = { name, flags: 0, open: [], over: 0 }))
    }
    return kind
  }

  // ---- tree building ----

  private start(kind: Kind, lt: number, end: number, selfClosing: boolean): number {
    const flags = kind.flags
    if (flags & BREAKOUT && this.overflow.length === 0) {
      while (this.inForeign()) this.pop()
    }
    const foreign = kind.name === 'svg' || kind.name === 'math' || this.inForeign()
    if (foreign ? selfClosing : flags & (VOID | IGNORED)) return end
    if (!foreign && flags & RAW_TEXT) {
      if (this.overflow.length === 0 && flags & CLOSES_P) this.closeP()
      return this.tags.rawTextEnd(kind.name, end)
    }
    // A second <form> while one is open is ignored (the parser's form element pointer).
    if (kind === K.form && this.formOpen && last(K.template) < 0) return end
    if (this.overflow.length > 0) {
      // Past the cap: only siblings of the element on top are told apart.
      const top = this.overflow[this.overflow.length - 1]!
      if (SIBLINGS.get(kind)?.includes(top)) this.overflowPop()
      this.overflowPush(kind, lt, end)
      return end
    }
    if (foreign) {
      this.push(kind, FOREIGN | (flags & INTEGRATION ? SPECIAL | LIST_STOP | SCOPE : 0), lt, end)
      return end
    }
    if (flags & (ITEM | CLOSES_P | HEADING | TABLE_PART | TOP_SIBLING | REOPENS) || kind === K.button || kind === K.table || kind === K.form) {
      if (this.implied(kind, flags, lt, end)) return end
    }
    this.push(kind, flags & (SPECIAL | LIST_STOP | SCOPE), lt, end)
    return end
  }

  // The end tags a start tag implies; true when the start tag has been dealt with.
  private implied(kind: Kind, flags: number, lt: number, end: number): boolean {
    if (kind === K.form) this.formOpen = true
    if (flags & ITEM) {
      const li = last(K.li)
      const dd = Math.max(last(K.dd), last(K.dt))
      const item = kind === K.li ? li : dd
      const other = kind === K.li ? dd : li
      if (item >= 0 && item > Math.max(lastOf(this.listStop), other)) this.popTo(item)
    }
    if (flags & CLOSES_P) this.closeP()
    if (flags & HEADING && this.kinds.length > 0 && this.kinds[this.kinds.length - 1]!.flags & HEADING) this.pop()
    if (flags & REOPENS) {
      const open = last(kind)
      if (open >= 0 && open >= lastOf(this.special)) this.popTo(open)
    } else if (kind === K.button) {
      if (this.inScope(K.button)) this.popTo(last(K.button))
    } else if (flags & TOP_SIBLING) {
      const siblings = SIBLINGS.get(kind)!
      while (this.kinds.length > 0 && siblings.includes(this.kinds[this.kinds.length - 1]!)) this.pop()
    } else if (kind === K.table) {
      const table = last(K.table)
      // A table started directly in a table (not in a cell or caption) ends that table.
      if (table >= 0 && table > Math.max(last(K.td), last(K.th), last(K.caption))) this.popTo(table)
    } else if (flags & TABLE_PART) {
      this.tablePart(kind, lt, end)
      return true
    }
    return false
  }

  private tablePart(kind: Kind, lt: number, end: number): void {
    const table = last(K.table)
    if (table < 0) return // ignored outside a table
    const kinds = this.kinds
    const row = kind === K.tr || kind === K.td || kind === K.th
    const cell = kind === K.td || kind === K.th
    let keep = table
    if (row && (kinds[keep + 1]?.flags ?? 0) & SECTION) keep++
    if (cell && kinds[keep + 1] === K.tr) keep++
    this.popTo(keep + 1)
    const section = row && !((kinds[table + 1]?.flags ?? 0) & SECTION)
    const tr = cell && kinds[kinds.length - 1] !== K.tr
    if (kinds.length + 1 + Number(section) + Number(tr) > this.max) {
      this.overflowPush(kind, lt, end)
      return
    }
    if (section) this.push(K.tbody, SPECIAL | LIST_STOP, -1, -1)
    if (tr) this.push(K.tr, SPECIAL | LIST_STOP, -1, -1)
    this.push(kind, kind.flags & (SPECIAL | LIST_STOP | SCOPE), lt, end)
  }

  private end(kind: Kind, lt: number, end: number): void {
    if (kind === K.form) this.formOpen = false
    if (this.overflow.length > 0) {
      if (kind.over > 0) {
        while (this.overflowPop() !== kind);
        this.cut.push(lt, end)
        return
      }
      const target = this.endTarget(kind)
      if (target < 0) return
      // The end tag closes an element below the cap, and so everything opened above it.
      while (this.overflow.length > 0) this.overflowPop()
      this.popTo(target)
      return
    }
    const target = this.endTarget(kind)
    if (target >= 0) this.popTo(target)
  }

  // The index of the open element an end tag closes (with everything above it), or -1.
  private endTarget(kind: Kind): number {
    const open = last(kind)
    if (open < 0) return kind.flags & HEADING ? this.heading() : -1
    if (this.inForeign() && open > lastOf(this.htmlIndex)) return open
    const flags = kind.flags
    if (kind === K.p) return this.inScope(K.p, K.button) ? open : -1
    if (kind === K.li) return this.inScope(K.li, K.ol, K.ul) ? open : -1
    if (flags & HEADING) return this.heading()
    if (flags & SCOPED_END) return this.inScope(kind) ? open : -1
    if (flags & TABLE_PART) return open > last(K.table) ? open : -1
    if (kind === K.table || kind === K.select || kind === K.template) return open
    // Any other end tag closes its element unless a special element is open above it.
    return open >= lastOf(this.special) ? open : -1
  }

  // Any heading end tag closes the innermost heading in scope.
  private heading(): number {
    let open = -1
    for (const h of HEADING_KINDS) open = Math.max(open, last(h))
    return open >= 0 && open >= lastOf(this.scope) ? open : -1
  }

  private closeP(): void {
    if (this.inScope(K.p, K.button)) this.popTo(last(K.p))
  }

  // Whether an element of this kind is open with no scope boundary (nor an `also`) above it.
  private inScope(kind: Kind, ...also: Kind[]): boolean {
    const open = last(kind)
    if (open < 0 || open < lastOf(this.scope)) return false
    for (const a of also) if (last(a) > open) return false
    return true
  }

  private inForeign(): boolean {
    const top = this.bits.length - 1
    return top >= 0 && (this.bits[top]! & FOREIGN) !== 0 && !(this.kinds[top]!.flags & INTEGRATION)
  }

  private push(kind: Kind, bits: number, lt: number, end: number): void {
    if (this.kinds.length >= this.max) {
      this.overflowPush(kind, lt, end)
      return
    }
    const i = this.kinds.length
    this.kinds.push(kind)
    this.bits.push(bits)
    kind.open.push(i)
    if (bits & SPECIAL) this.special.push(i)
    if (bits & LIST_STOP) this.listStop.push(i)
    if (bits & SCOPE) this.scope.push(i)
    if (!(bits & FOREIGN)) this.htmlIndex.push(i)
  }

  private pop(): void {
    const kind = this.kinds.pop()!
    const bits = this.bits.pop()!
    kind.open.pop()
    if (bits & SPECIAL) this.special.pop()
    if (bits & LIST_STOP) this.listStop.pop()
    if (bits & SCOPE) this.scope.pop()
    if (!(bits & FOREIGN)) this.htmlIndex.pop()
  }

  // Pops the element at index i and everything above it.
  private popTo(i: number): void {
    while (this.kinds.length > i) this.pop()
  }

  private overflowPush(kind: Kind, lt: number, end: number): void {
    this.overflow.push(kind)
    kind.over++
    if (lt >= 0) this.cut.push(lt, end)
  }

  private overflowPop(): Kind {
    const kind = this.overflow.pop()!
    kind.over--
    return kind
  }
}

function lastOf(list: number[]): number {
  return list.length > 0 ? list[list.length - 1]! : -1
}
