import { parse, type HTMLElement, type Node } from 'node-html-parser'

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
export function parseTree(html: string): HTMLElement {
  return parse(html, OPTIONS)
}

/** The lowercase tag name ('' for the document root). */
export const tagOf = (el: HTMLElement): string => (el.rawTagName ? el.rawTagName.toLowerCase() : '')

/**
 * An attribute's value, undefined when absent. node-html-parser keeps attributes in a plain
 * object, so `constructor` or `__proto__` would otherwise answer Object.prototype's members.
 */
export function attrOf(el: HTMLElement, name: string): string | undefined {
  const attrs = el.attrs
  const key = name.toLowerCase()
  return Object.hasOwn(attrs, key) ? attrs[key] : undefined
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
 * that is http(s); else `url`.
 */
export function baseOf(root: HTMLElement, url: string): string {
  const base = root.querySelector('base[href]')
  const href = base ? attrOf(base, 'href') : undefined
  if (href === undefined) return url
  try {
    const resolved = new URL(href.trim(), url)
    return resolved.protocol === 'http:' || resolved.protocol === 'https:' ? resolved.href : url
  } catch {
    return url
  }
}
