import type TurndownService from 'turndown'
import type { DomNode } from './dom'
import type { RenderState } from './markdown'
import { tableRules, type DomRule } from './markdown-tables'
import { scriptText } from './text'

const BLOCKS = new Set([
  'ADDRESS',
  'ARTICLE',
  'ASIDE',
  'BLOCKQUOTE',
  'BODY',
  'CENTER',
  'DD',
  'DIR',
  'DIV',
  'DL',
  'DT',
  'FIELDSET',
  'FIGCAPTION',
  'FIGURE',
  'FOOTER',
  'FORM',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'HEADER',
  'HGROUP',
  'HR',
  'HTML',
  'LI',
  'MAIN',
  'MENU',
  'NAV',
  'OL',
  'P',
  'PRE',
  'SECTION',
  'TABLE',
  'TBODY',
  'TD',
  'TFOOT',
  'TH',
  'THEAD',
  'TR',
  'UL',
])
const always = () => true
const HEADINGS = new Set(['H1', 'H2', 'H3', 'H4', 'H5', 'H6'])
const STRUCK = new Set(['DEL', 'S', 'STRIKE'])
const SCRIPT_MARKS = new Map<string, '^' | '_'>([
  ['SUP', '^'],
  ['SUB', '_'],
])
const QUOTATIONS = new Set(['Q'])
const LANGUAGE = /(?:^|\s)(?:lang(?:uage)?-|highlight-(?:text|source)-|brush:\s*)([\w#+.-]+)/i
const LINE_NUMBERS = /(?:^|\s)(?:gutter|line-?numbers?|lineno|linenos)(?:\s|$)/i
const NO_LINK = new Set(['javascript:', 'data:', 'vbscript:'])
const LAZY_SOURCES = ['src', 'data-src', 'data-lazy-src', 'data-original']
// turndown's stock rules kept as they are, by the node names they handle.
const STOCK: Record<string, string[]> = {
  paragraph: ['P'],
  blockquote: ['BLOCKQUOTE'],
  list: ['UL', 'OL'],
  horizontalRule: ['HR'],
  emphasis: ['EM', 'I'],
  strong: ['STRONG', 'B'],
  code: ['CODE'],
}
const INLINE_STOCK = new Map([
  ['emphasis', new Set(['EM', 'I'])],
  ['strong', new Set(['STRONG', 'B'])],
])
/**
 * Stands for one space of list indentation until the output is finished. turndown trims its
 * output with /[\t\r\n\s]+$/, which costs the square of each whitespace run's length: every
 * indented line of a deeply nested list would be such a run.
 */
export const INDENT = '\uE002'
// Content holding a blank line holds blocks (paragraphs, headings, lists).
const BLOCKY = /\n[ \t\uE002]*\n/
// Any character turndown's escape would touch; most text has none and skips its 13 passes.
const ESCAPED = /[\\*`[\]_<]|^(?:[-=>]|\+ |#{1,6} |~~~|\d+\. )/
// turndown leaves "<"; text that reads as a tag or autolink would turn into HTML in markdown.
const TAG_OPEN = /<(?=[A-Za-z/!?])/g
// Patterns ending in a run and "$" (or anything else that can fail) are tried from every start
// position, which is quadratic in the run's length; a lookbehind lets only a run's first
// character start a match.
/** Spaces and tabs at line ends. */
export const TRAILING_SPACE = /(?<![ \t])[ \t]+$/gm

/** Adds trawl's markdown conventions (design.md §6) to a turndown service; rules read `state`. */
export function turndownRules(service: TurndownService, state: RenderState): void {
  const resolve = (raw: string | null): string | null => {
    const href = raw?.trim()
    if (!href || href === '#' || !URL.canParse(href, state.base ?? undefined)) return null
    const url = new URL(href, state.base ?? undefined)
    return NO_LINK.has(url.protocol) ? null : url.href
  }
  const { rules: tables, isLayout } = tableRules((text) => service.escape(text))
  // Item numbers, counted once per list: counting siblings per item is quadratic in long lists.
  const numbers = new WeakMap<DomNode, number>()
  const itemIndex = (list: DomNode, item: DomNode): number => {
    if (!numbers.has(item)) {
      let i = 0
      for (let c = list.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) numbers.set(c, i++)
    }
    return numbers.get(item) ?? 0
  }
  // What a <br> inside an element becomes when a heading, inline code or GFM cell around it
  // decides (null: the <br> itself decides). Remembered per element: walking to the root for
  // every <br> is quadratic in deep documents.
  const breakContexts = new WeakMap<DomNode, string | null>()
  const breakContext = (el: DomNode | null): string | null => {
    const path: DomNode[] = []
    let found: string | null = null
    for (let p = el; p; p = p.parentNode) {
      const known = breakContexts.get(p)
      if (known !== undefined) {
        found = known
        break
      }
      path.push(p)
      const name = p.nodeName
      if (HEADINGS.has(name) || name === 'CODE') found = ' '
      // A newline in a GFM cell becomes <br>; cells of a layout table are blocks.
      else if ((name === 'TD' || name === 'TH') && !isLayout(closest(p, 'TABLE'))) found = '\n'
      else if (name !== 'TABLE') continue
      break
    }
    for (const p of path) breakContexts.set(p, found)
    return found
  }
  const rules: Record<string, DomRule> = {
    ...tables,
    strikethrough: { names: [...STRUCK], filter: always, replacement: (c, n) => (!c.trim() ? '' : BLOCKY.test(c) || insideInline(n, STRUCK) ? c : `~~${c}~~`) },
    // GFM has no superscript or subscript; `^x^` and `~x~` are pandoc's (GFM reads `~x~` as
    // strikethrough). GitHub and other CommonMark renderers show the inline tags, and a reader
    // of the source reads them too, so they stay as tags: `2<sup>31</sup>`, not `231`.
    script: {
      names: [...SCRIPT_MARKS.keys()],
      filter: always,
      replacement: (c, n) => {
        if (!c.trim()) return ''
        // In code a tag would show as written: there, the text step's notation (`O(n^2)`).
        if ((n as DomNode & { isCode?: boolean }).isCode) return scriptText(SCRIPT_MARKS.get(n.nodeName)!, c)
        if (BLOCKY.test(c)) return c
        const tag = n.nodeName.toLowerCase()
        return `<${tag}>${c}</${tag}>`
      },
    },
    // A browser shows a <q> in quotation marks; without them the words read as the author's own.
    quotation: {
      names: [...QUOTATIONS],
      filter: always,
      replacement: (c, n) => {
        if (!c.trim() || BLOCKY.test(c)) return c
        const mark = insideInline(n, QUOTATIONS) ? "'" : '"'
        return `${mark}${c}${mark}`
      },
    },
    taskListItem: {
      names: ['INPUT'],
      filter: (n) => n.getAttribute('type')?.toLowerCase() === 'checkbox' && closest(n, 'LI') !== null,
      replacement: (_c, n) => {
        const spaced = n.nextSibling?.nodeType === 3 && /^\s/.test(n.nextSibling.data)
        return (n.hasAttribute('checked') ? '[x]' : '[ ]') + (spaced ? '' : ' ')
      },
    },
    heading: {
      names: [...HEADINGS],
      filter: always,
      replacement: (c, n) => {
        // An unclosed heading swallows the blocks after it: its first block is the heading.
        const [, first = '', rest = ''] = /^\s*([\s\S]*?)(?:\n\n([\s\S]*))?$/.exec(c) ?? []
        const text = first
          .replaceAll(INDENT, '')
          .replace(/(?<!\s)\s*\n\s*/g, ' ')
          .trim()
        return `\n\n${text ? `${'#'.repeat(Number(n.nodeName[1]))} ${text}` : ''}\n\n${rest}\n\n`
      },
    },
    listItem: {
      names: ['LI'],
      filter: always,
      replacement: (c, n) => {
        const parent = n.parentNode
        let prefix = '- '
        if (parent?.nodeName === 'OL') {
          const start = Number.parseInt(parent.getAttribute('start') ?? '', 10)
          prefix = `${(Number.isNaN(start) ? 1 : start) + itemIndex(parent, n)}. `
        }
        const loose = c.endsWith('\n')
        const body = trimNewlines(c) + (loose ? '\n' : '')
        // Nested too deep (see MAX_INDENT), an item is no further indented than its list.
        const indented = state.flat.has(n) ? body : body.replace(/\n/g, `\n${INDENT.repeat(prefix.length)}`)
        return prefix + indented + (n.nextSibling ? '\n' : '')
      },
    },
    lineBreak: { names: ['BR'], filter: always, replacement: (_c, n) => lineBreak(n, breakContext) },
    // Nested too deep (see MAX_INDENT), a quote adds no further "> ".
    flatQuote: { names: ['BLOCKQUOTE'], filter: (n) => state.flat.has(n), replacement: (c) => `\n\n${c}\n\n` },
    code: {
      names: ['PRE'],
      filter: always,
      replacement: (_c, n) => {
        const code = preText(n)
          .replace(/\u00a0/g, ' ')
          .replace(TRAILING_SPACE, '')
          .replace(/^\n+/, '')
          .trimEnd()
        if (!code) return ''
        let fence = '```'
        for (const run of code.match(/^`{3,}/gm) ?? []) if (run.length >= fence.length) fence = '`'.repeat(run.length + 1)
        state.codes.push(code)
        return `\n\n${fence}${codeLanguage(n)}\n\uE000${state.codes.length - 1}\uE001\n${fence}\n\n`
      },
    },
    link: {
      names: ['A'],
      filter: always,
      replacement: (c, n) => {
        const href = resolve(n.getAttribute('href'))
        if (!href) return c
        if (!BLOCKY.test(c)) return c.trim() ? `[${c}](${destination(href)})` : ''
        // Block content in a link (a card: heading, summary): link the heading, keep the rest.
        const lines = c
          .split('\n')
          .map((l) => l.replaceAll(INDENT, '').trim().replace(/\\$/, ''))
          .filter(Boolean)
        const heading = /^(#{1,6}) (.*)$/.exec(lines[0] ?? '')
        if (heading) return `\n\n${heading[1]} [${heading[2]}](${destination(href)})\n\n${c.trim().replace(/^.*\n*/, '')}\n\n`
        return lines.length ? `\n\n[${lines.join(' ')}](${destination(href)})\n\n` : ''
      },
    },
    image: {
      names: ['IMG'],
      filter: always,
      replacement: (_c, n) => {
        const size = (a: string) => n.getAttribute(a)?.trim()
        if (['0', '1'].includes(size('width') ?? '') || ['0', '1'].includes(size('height') ?? '')) return ''
        let src: string | null = null
        for (const attr of LAZY_SOURCES) if ((src = resolve(n.getAttribute(attr)))) break
        src ??= resolve(firstSrcset(n.getAttribute('srcset') ?? n.getAttribute('data-srcset')))
        if (!src) return ''
        const alt = service.escape((n.getAttribute('alt') ?? '').replace(/\s+/g, ' ').trim())
        return `![${alt}](${destination(src)})`
      },
    },
  }
  // One rule that dispatches on the node name: turndown otherwise tries every rule's filter on
  // every element (a tenth of its time). The casts are the DOM-type gap: turndown's rule types
  // name lib.dom's HTMLElement.
  type Replacement = (content: string, node: DomNode, options: TurndownService.Options) => string
  const byName = new Map<string, Array<{ filter: (node: DomNode) => boolean; replacement: Replacement }>>()
  const stock = service.options as { rules?: Record<string, { replacement: Replacement }> }
  for (const [key, names] of Object.entries(STOCK)) {
    const replacement = stock.rules?.[key]?.replacement
    if (!replacement) continue
    // Emphasis around whole paragraphs cannot be written in markdown: the paragraphs stay, plain.
    // Bold inside bold adds nothing but another pair of delimiters.
    const same = INLINE_STOCK.get(key)
    const inline: Replacement = same ? (c, n, o) => (BLOCKY.test(c) || insideInline(n, same) ? c : replacement(c, n, o)) : replacement
    for (const name of names) byName.set(name, [{ filter: always, replacement: inline }])
  }
  for (const rule of Object.values(rules)) {
    for (const name of rule.names) byName.set(name, [{ filter: rule.filter, replacement: rule.replacement }, ...(byName.get(name) ?? [])])
  }
  const fallback = service.options.defaultReplacement as unknown as Replacement
  const dispatch = (text: string, node: DomNode, options: TurndownService.Options) => {
    // Space kept after an inline void element (an <input>) would otherwise start a block's line.
    const block = (node as DomNode & { isBlock?: boolean }).isBlock && node.nodeName !== 'TR'
    const content = block ? text.replace(/^(\n*)[ \t]+/, '$1') : text
    for (const rule of byName.get(node.nodeName) ?? []) if (rule.filter(node)) return rule.replacement(content, node, options)
    return fallback(content, node, options)
  }
  service.rules.array = [{ filter: () => true, replacement: dispatch as unknown as TurndownService.ReplacementFunction }]
  const escapeAll = service.escape.bind(service)
  service.escape = (text) => (ESCAPED.test(text) ? escapeAll(text).replace(TAG_OPEN, '\\<') : text)
}

// Hard breaks are a trailing backslash; a <br> that ends its block adds nothing, a run of them
// is a paragraph break, and headings, inline code and table cells cannot hold one at all.
function lineBreak(br: DomNode, context: (el: DomNode | null) => string | null): string {
  const fixed = context(br.parentNode)
  if (fixed !== null) return fixed
  if (!inlineNeighbour(br, 'previousSibling')) return ''
  if (br.previousSibling?.nodeName === 'BR') return ''
  if (br.nextSibling?.nodeName === 'BR') return '\n\n'
  return inlineNeighbour(br, 'nextSibling') ? '\\\n' : ''
}

// The content without newlines at either end; a loop, as a regex anchored at the end is tried
// from every position of what may be a long string, once per level of nesting.
function trimNewlines(text: string): string {
  let start = 0
  let end = text.length
  while (start < end && text.charCodeAt(start) === 10) start++
  while (end > start && text.charCodeAt(end - 1) === 10) end--
  return start === 0 && end === text.length ? text : text.slice(start, end)
}

function insideInline(node: DomNode, names: Set<string>): boolean {
  for (let p = node.parentNode; p && !BLOCKS.has(p.nodeName); p = p.parentNode) if (names.has(p.nodeName)) return true
  return false
}

function inlineNeighbour(node: DomNode, side: 'previousSibling' | 'nextSibling'): boolean {
  for (let n: DomNode | null = node; n; n = n.parentNode) {
    const sibling = n[side]
    if (sibling) return !BLOCKS.has(sibling.nodeName)
    if (!n.parentNode || BLOCKS.has(n.parentNode.nodeName)) return false
  }
  return false
}

// textContent, except that <br> and line-wrapping elements inside <pre> still end lines, and
// superscripts and subscripts are marked as the text step marks them (`O(n^2)`).
function preText(pre: DomNode): string {
  let out = ''
  let node = pre.firstChild
  while (node && node !== pre) {
    let descend = false
    const script = SCRIPT_MARKS.get(node.nodeName)
    if (node.nodeType === 3 || node.nodeType === 4) out += node.data
    else if (node.nodeName === 'BR') out += '\n'
    // Each node is still read once: the walk does not descend where this read.
    else if (script) out += scriptText(script, preText(node))
    else if (node.nodeType === 1 && !LINE_NUMBERS.test(node.getAttribute('class') ?? '')) {
      if ((node.nodeName === 'DIV' || node.nodeName === 'P') && out && !out.endsWith('\n')) out += '\n'
      descend = node.firstChild !== null
    }
    if (descend) node = node.firstChild
    else {
      while (node && node !== pre && !node.nextSibling) node = node.parentNode
      node = node && node !== pre ? node.nextSibling : null
    }
  }
  return out
}

// The language of a code block: language-*/lang-* (also highlight-source-*, brush:) on the
// <code>, the <pre> or the two wrappers above it (Jekyll/Rouge put it on the outer div).
function codeLanguage(pre: DomNode): string {
  let code = pre.firstChild
  while (code && code.nodeType !== 1) code = code.nextSibling
  const candidates = [code?.nodeName === 'CODE' ? code : null, pre, pre.parentNode, pre.parentNode?.parentNode ?? null]
  for (const el of candidates) {
    if (!el || el.nodeType !== 1) continue
    const named = LANGUAGE.exec(el.getAttribute('class') ?? '')?.[1] ?? el.getAttribute('data-lang') ?? el.getAttribute('data-language')
    const language = named?.trim().toLowerCase()
    if (language && language !== 'none' && /^[\w#+.-]+$/.test(language)) return language
  }
  return ''
}

// URLs come out of the URL parser encoded except for parentheses; escape those only when
// unbalanced, which is when CommonMark needs it.
function destination(url: string): string {
  let depth = 0
  for (const ch of url) {
    if (ch === '(') depth++
    else if (ch === ')' && --depth < 0) break
  }
  const encoded = url.replace(/[\s<>]/g, encodeURIComponent)
  return depth === 0 ? encoded : encoded.replace(/[()]/g, '\\$&')
}

function firstSrcset(srcset: string | null): string | null {
  return srcset?.split(',')[0]?.trim().split(/\s+/)[0] ?? null
}

function closest(node: DomNode, name: string): DomNode | null {
  for (let p = node.parentNode; p; p = p.parentNode) if (p.nodeName === name) return p
  return null
}
