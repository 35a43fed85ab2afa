// The slice of domino's DOM the markdown step reads, and the walks over it that main-content
// selection, edge chrome and the markdown rules share.

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

export const ELEMENT = 1
export const TEXT = 3

// String.prototype.trim's length without the copy: the whitespace trim removes is \s.
export function trimmedLength(text: string): number {
  let start = 0
  let end = text.length
  while (start < end && isSpace(text.charCodeAt(start))) start++
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--
  return end - start
}

function isSpace(c: number): boolean {
  if (c > 32 && c < 127) return false
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
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
export function after(node: DomNode, root: DomNode): DomNode | null {
  for (let n: DomNode | null = node; n && n !== root; n = n.parentNode) {
    if (n.nextSibling) return n.nextSibling
  }
  return null
}

export const isLink = (el: DomNode) => el.localName === 'a' && el.hasAttribute('href')
