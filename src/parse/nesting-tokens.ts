// The tokenizing half of boundNesting (nesting.ts): where a tag's name and the tag end, where
// comments, declarations and raw text end.

// The end tag of each raw-text element, searched for from lastIndex.
const RAW_END = new Map<string, RegExp>()

export class TagReader {
  private readonly found = new Map<string, number>() // next index of a searched string, or -1
  /** Whether the tag tagEnd last read ended with "/>". */
  selfClosing = false

  constructor(private readonly html: string) {}

  /** After a markup declaration starting at lt (`<!`): a comment, CDATA in foreign content, or a bogus comment. */
  markupDeclaration(lt: number, foreign: boolean): number {
    const html = this.html
    if (html.startsWith('<!--', lt)) {
      // "<!-->" and "<!--->" are whole (empty) comments; otherwise up to "-->" or "--!>".
      if (html.startsWith('>', lt + 4)) return lt + 5
      if (html.startsWith('->', lt + 4)) return lt + 6
      const a = this.next('-->', lt + 4)
      const b = this.next('--!>', lt + 4)
      if (a < 0 && b < 0) return html.length
      return a >= 0 && (b < 0 || a < b) ? a + 3 : b + 4
    }
    if (foreign && html.startsWith('<![CDATA[', lt)) {
      const end = this.next(']]>', lt + 9)
      return end < 0 ? html.length : end + 3
    }
    return this.afterGt(lt + 2)
  }

  afterGt(from: number): number {
    const gt = this.html.indexOf('>', from)
    return gt < 0 ? this.html.length : gt + 1
  }

  // indexOf with memory: a string searched for again from further on is not searched twice.
  private next(needle: string, from: number): number {
    const known = this.found.get(needle)
    if (known !== undefined && (known < 0 || known >= from)) return known
    const at = this.html.indexOf(needle, from)
    this.found.set(needle, at)
    return at
  }

  nameEnd(from: number): number {
    const html = this.html
    let j = from
    while (j < html.length) {
      const c = html.charCodeAt(j)
      if (c <= 0x20 ? isSpace(c) : c === 0x2f || c === 0x3e) break
      j++
    }
    return j
  }

  // The end of a tag whose name ends at `from`, skipping attributes (quoted values may hold
  // ">"), or -1 when the input ends inside the tag; sets selfClosing.
  tagEnd(from: number): number {
    const html = this.html
    const length = html.length
    let j = from
    let selfClosing = false
    while (j < length) {
      const c = html.charCodeAt(j)
      if (c === 0x3e) {
        this.selfClosing = selfClosing
        return j + 1
      }
      if (c === 0x2f) {
        selfClosing = html.charCodeAt(j + 1) === 0x3e
        j++
        continue
      }
      selfClosing = false
      if (isSpace(c)) {
        j++
        continue
      }
      // An attribute name (its first character may be "="), then perhaps "=" and a value.
      j++
      while (j < length) {
        const d = html.charCodeAt(j)
        if (isSpace(d) || d === 0x2f || d === 0x3e || d === 0x3d) break
        j++
      }
      while (j < length && isSpace(html.charCodeAt(j))) j++
      if (html.charCodeAt(j) !== 0x3d) continue
      j++
      while (j < length && isSpace(html.charCodeAt(j))) j++
      const q = html.charCodeAt(j)
      if (q === 0x22 || q === 0x27) {
        const close = html.indexOf(q === 0x22 ? '"' : "'", j + 1)
        if (close < 0) return -1
        j = close + 1
      } else {
        while (j < length) {
          const d = html.charCodeAt(j)
          if (isSpace(d) || d === 0x3e) break
          j++
        }
      }
    }
    return -1
  }

  // Where the text of a raw-text element ends: at its end tag, or the end of the input.
  rawTextEnd(name: string, from: number): number {
    if (name === 'plaintext') return this.html.length
    let re = RAW_END.get(name)
    if (!re) RAW_END.set(name, (re = new RegExp(`</${name}[\\t\\n\\f\\r />]`, 'gi')))
    re.lastIndex = from
    return re.exec(this.html)?.index ?? this.html.length
  }
}

export function isAlpha(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d
}
