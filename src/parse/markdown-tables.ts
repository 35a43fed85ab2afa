import { textOf, type DomNode } from './dom'

// GFM tables for turndown. The GFM plugin's table rules re-walk `table.rows` for every cell
// of the heading row (quadratic: most of turndown's time on a table-heavy page) and keep a
// table holding lists or headings as raw HTML; these rules measure each table once and render
// such a table as blocks instead.

type Replace = (content: string, node: DomNode) => string
/** A turndown rule over domino nodes: the node names it handles, then a finer filter. */
export type DomRule = { names: string[]; filter: (node: DomNode) => boolean; replacement: Replace }

type Table = { layout: boolean; columns: number; header: DomNode | null; align: string[]; caption: string }

// A table holding these is page layout, not data: its cells are rendered as blocks in order.
const LAYOUT_INSIDE = new Set(['TABLE', 'UL', 'OL', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HR', 'BLOCKQUOTE', 'PRE'])
const SECTIONS = new Set(['THEAD', 'TBODY', 'TFOOT'])
const always = () => true
// GFM pads short rows and spanned cells to the full width, so a few cells with a large colspan
// over many short rows would write rows × columns cells: wider tables, and tables whose grid
// would be mostly padding past a small floor, are written as layout tables instead.
const MAX_COLUMNS = 64
const MIN_GRID_BUDGET = 10_000 // cells
const GRID_PER_CELL = 4 // grid cells allowed per cell element
const BORDER: Record<string, string> = { left: ':---', right: '---:', center: ':---:' }

/** Turndown rules for TABLE, its rows, cells, sections and caption; isLayout tells a table rendered as blocks. */
export function tableRules(escape: (text: string) => string): { rules: Record<string, DomRule>; isLayout: (table: DomNode | null) => boolean } {
  const tables = new WeakMap<DomNode, Table>()
  const info = (table: DomNode): Table => {
    let known = tables.get(table)
    if (!known) tables.set(table, (known = measure(table, escape)))
    return known
  }
  const tableOf = (node: DomNode): Table | null => {
    for (let p = node.parentNode; p; p = p.parentNode) if (p.nodeName === 'TABLE') return info(p)
    return null
  }
  const rules: Record<string, DomRule> = {
    table: {
      names: ['TABLE'],
      filter: always,
      replacement: (content, n) => {
        const t = info(n)
        if (t.layout || t.columns === 0) return `\n\n${content}\n\n`
        const rows = content.replace(/\n+/g, '\n').trim()
        // GFM needs a header row: a table without one gets an empty header.
        const header = t.header ? '' : `|${'  |'.repeat(t.columns)}\n${separator(t)}\n`
        return `\n\n${t.caption ? `${t.caption}\n\n` : ''}${header}${rows}\n\n`
      },
    },
    row: {
      names: ['TR'],
      filter: always,
      replacement: (content, n) => {
        const t = tableOf(n)
        if (!t || t.layout) return `\n\n${content}\n\n`
        const missing = t.columns - rowWidth(n)
        return `\n|${content}${'  |'.repeat(Math.max(0, missing))}${t.header === n ? `\n${separator(t)}` : ''}\n`
      },
    },
    cell: {
      names: ['TD', 'TH'],
      filter: always,
      replacement: (content, n) => {
        const t = tableOf(n)
        if (!t || t.layout) return `\n\n${content}\n\n`
        const text = content.trim().replace(/\n/g, '<br>').replace(/\|/g, '\\|')
        return ` ${text} |${'  |'.repeat(span(n) - 1)}`
      },
    },
    section: { names: [...SECTIONS], filter: always, replacement: (content) => content },
    caption: { names: ['CAPTION', 'COLGROUP', 'COL'], filter: always, replacement: () => '' },
  }
  return { rules, isLayout: (table) => table !== null && info(table).layout }
}

function measure(table: DomNode, escape: (text: string) => string): Table {
  const rows: DomNode[] = []
  let caption = ''
  for (let c = table.firstChild; c; c = c.nextSibling) {
    if (c.nodeName === 'TR') rows.push(c)
    else if (c.nodeName === 'CAPTION') caption = escape(textOf(c).replace(/\s+/g, ' ').trim())
    else if (SECTIONS.has(c.nodeName)) {
      for (let r = c.firstChild; r; r = r.nextSibling) if (r.nodeName === 'TR') rows.push(r)
    }
  }
  const first = rows[0] ?? null
  let columns = 0
  let written = 0 // cell elements
  for (const r of rows) {
    const cells = rowCells(r)
    written += cells.length
    columns = Math.max(
      columns,
      cells.reduce((sum, c) => sum + span(c), 0),
    )
  }
  const oversized = columns > MAX_COLUMNS || rows.length * columns > Math.max(MIN_GRID_BUDGET, written * GRID_PER_CELL)
  const cells = first ? rowCells(first) : []
  const heading = first !== null && (first.parentNode?.nodeName === 'THEAD' || (cells.length > 0 && cells.every((c) => c.nodeName === 'TH')))
  // Without a header row, one column or one row is boxes stacked or side by side, not data.
  const single = rows.length <= 1 && columns <= 1
  const layout = single || oversized || ((columns <= 1 || rows.length <= 1) && !heading) || contains(table, LAYOUT_INSIDE)
  const align = layout ? [] : Array.from({ length: columns }, (_, i) => (heading ? alignment(cells[i]) : ''))
  return { layout, columns, header: heading ? first : null, align, caption }
}

function separator(t: Table): string {
  return `|${t.align.map((a) => ` ${BORDER[a] ?? '---'} |`).join('')}`
}

function alignment(cell: DomNode | undefined): string {
  if (!cell) return ''
  const align = cell.getAttribute('align') ?? /text-align\s*:\s*(\w+)/i.exec(cell.getAttribute('style') ?? '')?.[1] ?? ''
  return align.toLowerCase()
}

function rowCells(row: DomNode): DomNode[] {
  const cells: DomNode[] = []
  for (let c = row.firstChild; c; c = c.nextSibling) if (c.nodeName === 'TD' || c.nodeName === 'TH') cells.push(c)
  return cells
}

function rowWidth(row: DomNode): number {
  return rowCells(row).reduce((sum, c) => sum + span(c), 0)
}

// Bounded: a colspan of 1000 must not make a 1000-column markdown row.
function span(cell: DomNode): number {
  const n = Number.parseInt(cell.getAttribute('colspan') ?? '1', 10)
  return Number.isNaN(n) || n < 1 ? 1 : Math.min(n, 50)
}

// Whether any node under root has one of the names.
function contains(root: DomNode, names: Set<string>): boolean {
  for (let n = root.firstChild; n && n !== root;) {
    if (names.has(n.nodeName)) return true
    if (n.firstChild) n = n.firstChild
    else {
      while (n && n !== root && !n.nextSibling) n = n.parentNode
      n = n && n !== root ? n.nextSibling : null
    }
  }
  return false
}
