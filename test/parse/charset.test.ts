import { describe, expect, test } from 'bun:test'
import { charsetParam, declaredCharset, decodeDocument } from '../../src/parse/charset'

const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0))
const utf8 = (s: string) => new TextEncoder().encode(s)

describe('decodeDocument', () => {
  test('windows-1252 from the meta tag', () => {
    const bytes = latin1('<html><head><meta charset="windows-1252"></head><body>Caf\xe9 \x80 \x93quoted\x94</body></html>')
    expect(decodeDocument(bytes, 'text/html')).toEqual({
      text: '<html><head><meta charset="windows-1252"></head><body>Café € “quoted”</body></html>',
      charset: 'windows-1252',
    })
  })

  test('http-equiv content type declares the charset too', () => {
    const bytes = latin1('<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><p>na\xefve')
    // iso-8859-1 is windows-1252 to every browser (WHATWG encoding labels)
    expect(decodeDocument(bytes, undefined)).toEqual({ text: '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><p>naïve', charset: 'windows-1252' })
  })

  test('the Content-Type header wins over the meta tag', () => {
    const bytes = utf8('<meta charset="windows-1252"><p>Café')
    expect(decodeDocument(bytes, 'text/html; charset=UTF-8').text).toBe('<meta charset="windows-1252"><p>Café')
  })

  test('a BOM wins over everything and is stripped', () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('<p>é')])
    expect(decodeDocument(bytes, 'text/html; charset=windows-1252')).toEqual({ text: '<p>é', charset: 'utf-8' })
  })

  test('utf-16le with its BOM', () => {
    const body = '<p>ü</p>'
    const bytes = new Uint8Array(2 + body.length * 2)
    bytes.set([0xff, 0xfe])
    for (let i = 0; i < body.length; i++) bytes[2 + i * 2] = body.charCodeAt(i)
    expect(decodeDocument(bytes, 'text/html')).toEqual({ text: body, charset: 'utf-16le' })
  })

  test('shift_jis from the header', () => {
    const bytes = new Uint8Array([0x93, 0xfa, 0x96, 0x7b]) // 日本
    expect(decodeDocument(bytes, 'text/html; charset="Shift_JIS"')).toEqual({ text: '日本', charset: 'shift_jis' })
  })

  test('an unknown label falls through to the next source, then UTF-8', () => {
    expect(decodeDocument(utf8('<meta charset="klingon"><p>é'), 'text/html; charset=bogus')).toEqual({ text: '<meta charset="klingon"><p>é', charset: 'utf-8' })
  })

  test('labels answer the same every time, known or not, in any case and spacing (they are remembered)', () => {
    const page = (label: string) => latin1(`<meta charset="${label}"><p>\x80</p>`)
    for (let i = 0; i < 3; i++) {
      expect(decodeDocument(page(' LATIN1 '), 'text/html').charset).toBe('windows-1252')
      expect(decodeDocument(page('latin1'), 'text/html').charset).toBe('windows-1252')
      expect(decodeDocument(page('no-such-charset'), 'text/html').charset).toBe('utf-8')
      expect(decodeDocument(page('x'), 'text/html; charset=Shift_JIS').charset).toBe('shift_jis')
    }
  })

  test('a meta tag claiming UTF-16 is read as UTF-8', () => {
    expect(decodeDocument(utf8('<meta charset="utf-16"><p>é'), undefined).charset).toBe('utf-8')
  })

  test('XML declaration of an XHTML document', () => {
    expect(declaredCharset(latin1('<?xml version="1.0" encoding="ISO-8859-15"?><html/>'))).toBe('iso-8859-15')
  })

  test('a meta tag past the first KiB is not seen', () => {
    expect(declaredCharset(latin1(' '.repeat(1100) + '<meta charset="windows-1252">'))).toBeNull()
  })

  test('charset parameter parsing', () => {
    expect(charsetParam('text/html;charset=utf-8')).toBe('utf-8')
    expect(charsetParam('text/html; Charset="latin1"; x=y')).toBe('latin1')
    expect(charsetParam("text/html; charset='windows-1252'")).toBe('windows-1252')
    expect(charsetParam('text/html')).toBeNull()
    expect(charsetParam(undefined)).toBeNull()
  })

  test('plain text and JSON are not prescanned: markup written in them declares nothing', () => {
    const json = '{"snippet":"<meta charset=windows-1252>","name":"café"}'
    expect(decodeDocument(utf8(json), 'application/json')).toEqual({ text: json, charset: 'utf-8' })
    expect(decodeDocument(utf8(`<meta charset="windows-1252"> café`), 'text/plain').text).toBe('<meta charset="windows-1252"> café')
    expect(decodeDocument(latin1('<meta charset="windows-1252">caf\xe9'), 'text/html; x=y').text).toBe('<meta charset="windows-1252">café')
  })
})

describe('the prescan of the first KiB (WHATWG)', () => {
  const declared = (html: string) => declaredCharset(utf8(html))

  test("a <meta> in a comment or in another tag's attribute is no meta", () => {
    expect(declared('<!-- old: <meta charset="iso-8859-1"> --><meta charset="utf-8"><p>café')).toBe('utf-8')
    expect(decodeDocument(utf8('<!-- old: <meta charset="iso-8859-1"> --><meta charset="utf-8"><p>café'), 'text/html').text).toEndWith('café')
    expect(declared('<!--> <meta charset="windows-1252">')).toBe('windows-1252') // <!--> is a whole comment
    expect(declared('<div title="<meta charset=windows-1252>"><meta charset=shift_jis>')).toBe('shift_jis')
    expect(declared('<!-- <meta charset="windows-1252">')).toBeNull()
  })

  test('content counts only with http-equiv="content-type"; charset= elsewhere in content is prose', () => {
    expect(declared('<meta name="description" content="charset=windows-1252 explained"><p>café')).toBeNull()
    expect(decodeDocument(utf8('<meta name="description" content="charset=windows-1252 explained"><p>café'), 'text/html').text).toEndWith('café')
    expect(declared(`<meta content='text/html; charset="koi8-r"' http-equiv=Content-Type>`)).toBe('koi8-r')
    expect(declared('<META HTTP-EQUIV="content-type" CONTENT="text/html;charset = shift_jis;x">')).toBe('shift_jis')
    expect(declared('<meta http-equiv="content-type" content="text/html; charsetx=koi8-r; charset=gbk">')).toBe('gbk')
  })

  test('an unknown label goes on to the next meta; the first attribute of a name counts', () => {
    expect(declared('<meta charset="klingon"><meta charset="koi8-r">')).toBe('koi8-r')
    expect(declared('<meta charset="gbk" charset="koi8-r">')).toBe('gbk')
    expect(declared('<meta/charset=gbk>')).toBe('gbk')
  })

  test('UTF-16 means UTF-8 and x-user-defined means windows-1252', () => {
    expect(declared('<meta charset="utf-16be">')).toBe('utf-8')
    expect(declared('<meta charset="x-user-defined">')).toBe('windows-1252')
  })

  test('a tag cut off by the end of the first KiB declares nothing', () => {
    expect(declared(' '.repeat(1000) + '<meta charset="windows-1252">')).toBeNull()
  })
})
