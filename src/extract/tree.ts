import { decodeHTMLAttribute } from 'entities/decode'
import { parse, type HTMLElement, type Node } from 'node-html-parser'
import { boundNesting } from '../parse/nesting'

/**
 * Elements whose content is raw text. `pre` is left out on purpose (node-html-parser's default
 * keeps it raw too), so `pre code` selects and a <pre>'s text carries no tag markup.
 */
const RAW_TEXT = { script: true, style: true, noscript: true, textarea: true, title: true }
const OPTIONS = { lowerCaseTagName: false, comment: false, blockTextElements: RAW_TEXT }

/** Content that is never visible text: left out of an ancestor's `text` value. */
const NOT_TEXT = new Set(['script', 'style', 'noscript', 'template'])

const ELEMENT = 1
const TEXT = 3

/** The element tree of an HTML document (node-html-parser), built once and shared by every extraction over it. */
/** Elements nested deeper than this lose their tags before the tree is built. */
export const TREE_MAX_NESTING = 2048

export function parseTree(html: string): HTMLElement {
  // node-html-parser costs depth² on unclosed nested blocks (40,000 <div>s took 72 s): bound the
  // nesting first, with the linear pass the markdown step uses before domino. Deeper than the
  // bound, elements lose their tags (their text stays); 2048 levels parse in about 0.2 s.
  return parse(boundNesting(html, TREE_MAX_NESTING), OPTIONS)
}

/** The lowercase tag name ('' for the document root). */
export const tagOf = (el: HTMLElement): string => (el.rawTagName ? el.rawTagName.toLowerCase() : '')

/**
 * An attribute's value, undefined when absent. Read from our own parse of the element's
 * attribute source (attributesOf), never from node-html-parser's `attrs`.
 */
export const attrOf = (el: HTMLElement, name: string): string | undefined => attributesOf(el).get(name.toLowerCase())

const ATTRIBUTES = new WeakMap<HTMLElement, Map<string, string>>()
const NO_ATTRIBUTES: ReadonlyMap<string, string> = new Map()

/**
 * The element's attributes by lowercase name, values decoded, parsed once per element.
 * node-html-parser's `attrs` is unusable here: it fills a plain object with
 * `attrs[key] = attrs[key] || value`, so an attribute named `constructor` or `toString` picks
 * up Object.prototype's function (and decoding it throws), and an attribute repeated in
 * another case keeps the last value where HTML keeps the first (`<div ID="a" id="b">` has id
 * "a"). This follows the HTML tokenizer's attribute states over `rawAttrs`, the source between
 * the tag name and `>`.
 */
export function attributesOf(el: HTMLElement): ReadonlyMap<string, string> {
  const raw = el.rawAttrs
  if (!raw) return NO_ATTRIBUTES
  let attrs = ATTRIBUTES.get(el)
  if (!attrs) {
    attrs = parseAttributes(raw)
    ATTRIBUTES.set(el, attrs)
  }
  return attrs
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r'

function parseAttributes(raw: string): Map<string, string> {
  const attrs = new Map<string, string>()
  const n = raw.length
  let i = 0
  while (i < n) {
    if (isSpace(raw[i]) || raw[i] === '/') {
      i++
      continue
    }
    // A name runs to a space, `/`, `>` or `=`; an `=` as its first character belongs to it.
    const start = i++
    while (i < n && !isSpace(raw[i]) && raw[i] !== '/' && raw[i] !== '>' && raw[i] !== '=') i++
    const name = raw.slice(start, i).toLowerCase()
    while (i < n && isSpace(raw[i])) i++
    let value = ''
    if (raw[i] === '=') {
      i++
      while (i < n && isSpace(raw[i])) i++
      const quote = raw[i]
      if (quote === '"' || quote === "'") {
        const end = raw.indexOf(quote, i + 1)
        value = raw.slice(i + 1, end < 0 ? n : end)
        i = end < 0 ? n : end + 1
      } else {
        const from = i
        while (i < n && !isSpace(raw[i]) && raw[i] !== '>') i++
        value = raw.slice(from, i)
      }
    }
    // The first of repeated attributes wins, as in HTML.
    if (!attrs.has(name)) attrs.set(name, value.includes('&') ? decodeHTMLAttribute(value) : value)
  }
  return attrs
}

/**
 * The `text` value: textContent with whitespace collapsed and trimmed, where `<br>` counts as
 * a space and script, style, noscript and template content is left out. A matched script or
 * style element itself answers its raw content (for `script[type="application/ld+json"]`).
 */
export function textOf(el: HTMLElement): string {
  if (NOT_TEXT.has(tagOf(el))) return collapse(el.rawText)
  const parts: string[] = []
  // An explicit stack: a document nested thousands deep must not exhaust the call stack.
  const stack: Node[] = [el]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node.nodeType === TEXT) parts.push(node.text)
    else if (node.nodeType === ELEMENT) {
      const tag = tagOf(node as HTMLElement)
      if (tag === 'br') parts.push(' ')
      else if (!NOT_TEXT.has(tag)) for (let i = node.childNodes.length - 1; i >= 0; i--) stack.push(node.childNodes[i]!)
    }
  }
  return collapse(parts.join(''))
}

/** The `html` value: the element's inner HTML as written. */
export const htmlOf = (el: HTMLElement): string => el.innerHTML

/** Runs of whitespace (NBSP and the other Unicode spaces too) become one space; ends trimmed. */
export const collapse = (text: string): string => text.replace(/\s+/g, ' ').trim()

/**
 * The base URL of a document at `url`: its first `<base href>` resolved against `url`, when
 * that is http(s); else `url`. For a document at NO_DOCUMENT_URL only an absolute href counts.
 */
export function baseOf(root: HTMLElement, url: string): string {
  const href = firstBaseHref(root)
  if (href === undefined) return url
  try {
    const resolved = new URL(href.trim(), url)
    return resolved.protocol === 'http:' || resolved.protocol === 'https:' ? resolved.href : url
  } catch {
    return url
  }
}

/** The href of the first `<base>` with one, in document order (what `base[href]` selects). */
function firstBaseHref(root: HTMLElement): string | undefined {
  const stack: Node[] = [root]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node.nodeType !== ELEMENT) continue
    const el = node as HTMLElement
    if (tagOf(el) === 'base') {
      const href = attrOf(el, 'href')
      if (href !== undefined) return href
    }
    for (let i = el.childNodes.length - 1; i >= 0; i--) stack.push(el.childNodes[i]!)
  }
  return undefined
}
