import { expect, test } from 'bun:test'
import { contentTypeMatches, documentKind, textAsHtml, urlsInText } from '../../src/parse/document'

test('documentKind: HTML, text and JSON; anything else is not parsed', () => {
  expect(['Text/HTML; charset=x', 'application/xhtml+xml', 'text/plain', 'application/ld+json', 'text/json', 'image/png', ''].map(documentKind)).toEqual([
    'html',
    'html',
    'text',
    'text',
    'text',
    null,
    null,
  ])
  expect(contentTypeMatches('text/plain; charset=utf-8', ['text/*'])).toBe(true)
  expect(textAsHtml('a < b & "c"')).toBe('<pre>a &lt; b &amp; &quot;c&quot;</pre>')
})

test('bare URLs of a text document: in order, once, without fragment or trailing punctuation', () => {
  const text = 'See https://a.example/docs?x=1#top. Or (http://b.example/p), then https://a.example/docs?x=1!?\n"https://c.example"'
  expect(urlsInText(text)).toEqual(['https://a.example/docs?x=1', 'http://b.example/p', 'https://c.example/'])
})

// Took 12 s with the regex /[.,;:!?]+$/ on the URL; the time limit only makes a relapse fail fast.
test('a URL with a long inner run of punctuation is read in linear time', () => {
  const dots = '.'.repeat(80_000)
  expect(urlsInText(`http://a.example/${dots}x${dots} and more`)).toEqual([`http://a.example/${dots}x`])
}, 3000)
