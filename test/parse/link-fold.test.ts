import { describe, expect, test } from 'bun:test'
import { Resolver } from '../../src/parse/html-values'
import { LinkFold } from '../../src/parse/link-fold'
import { LINK_ATTRIBUTES } from '../../src/parse/links'
import { scanHtml } from '../../src/parse/scan'
import { tagNames, walkTags } from '../../src/parse/tags'

const DOC = 'https://shop.example/catalog/list.html'
const LINKS = tagNames(
  new Map([
    ['a', LINK_ATTRIBUTES],
    ['area', LINK_ATTRIBUTES],
  ]),
)

/** What a fold keeps of `html`, as records in document order. */
function folded(html: string) {
  const fold = new LinkFold(html)
  walkTags(html, { names: LINKS, start: (tag) => void (tag.has(0) && fold.add(tag)) })
  return fold.records(new Resolver(new URL(DOC)))
}

// A small PRNG, seeded, so a failure names a document that can be made again.
function random(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0
    return s / 2 ** 32
  }
}

// Raw hrefs of which several resolve to one URL against DOC (and against the <base> some
// documents carry), and some that are not http(s).
const HREFS = ['/p/1', 'p/1', '../catalog/p/1', 'https://shop.example/p/1', '/p/1#x', '/p/2', 'p/2?', '/p/2', 'https://other.example/', '//other.example/', 'javascript:void(0)', '#top', '']
const RELS = [null, 'nofollow', 'NoFollow ugc', 'next', 'ugc', 'nofollow']
const CONTENTS = ['', 'Text', '<img src=x alt="A picture">', '<img src=x>', '&nbsp;', ' <b>bold</b> tail ', '<!-- c -->', '&amp;']

function document(next: () => number): string {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!
  const parts: string[] = []
  const count = 1 + Math.floor(next() * 40)
  for (let k = 0; k < count; k++) {
    const roll = next()
    const rel = pick(RELS)
    const relAttr = rel === null ? '' : ` rel="${rel}"`
    if (roll < 0.1) parts.push(`<map><area href="${pick(HREFS)}"${relAttr} alt="${pick(['', 'Area', 'Area two'])}"></map>`)
    else if (roll < 0.13) parts.push(`<base href="${pick(['/docs/', 'https://shop.example/x/y/', 'mailto:a@b'])}">`)
    else if (roll < 0.15) parts.push('<meta name="robots" content="nofollow">')
    else if (roll < 0.2) parts.push(`<a name="no-href">${pick(CONTENTS)}</a>`)
    else parts.push(`<a href="${pick(HREFS)}"${relAttr}>${pick(CONTENTS)}${next() < 0.8 ? '</a>' : ''}`)
    if (next() < 0.3) parts.push(pick(['<p>para</p>', ' text ', '<div>', '</div>']))
  }
  return `<html><body>${parts.join('')}</body></html>`
}

describe('LinkFold', () => {
  test('a scan folding its links finds what a scan keeping every link finds, on 600 random documents', async () => {
    const next = random(21)
    for (let k = 0; k < 600; k++) {
      const html = document(next)
      // A navigator HTMLRewriter runs (`p`) makes the scan keep every link (it reads them by index).
      const kept = await scanHtml(html, DOC, { navigators: ['a', 'p'] })
      const fold = await scanHtml(html, DOC, { navigators: ['a'] })
      expect({ k, links: fold.links, anchors: fold.selected[0] }).toEqual({ k, links: kept.links, anchors: kept.selected[0] })
    }
  })

  test('a page repeating its links keeps at most three records of each raw href', () => {
    const once = '<a href="/p/1"><img src=x></a><a href="/p/2" rel="nofollow">Two</a><a href="/p/3">Three</a><area href="/p/1" alt="">'
    const html = once.repeat(5_000) + '<a href="/p/1">One</a><a href="/p/2">Two, followable</a>'
    const records = folded(html)
    // /p/1: the first (no text) and the first with text, which is the last anchor of all;
    // /p/2: the first (nofollow) and the first followable, whose text is not read (the first
    // has text, which a LinkOut takes); /p/3 once; the area once.
    expect(records.map((r) => [r.url, r.text, r.rel, r.area])).toEqual([
      ['https://shop.example/p/1', '', null, false],
      ['https://shop.example/p/2', 'Two', 'nofollow', false],
      ['https://shop.example/p/3', 'Three', null, false],
      ['https://shop.example/p/1', '', null, true],
      ['https://shop.example/p/1', 'One', null, false],
      ['https://shop.example/p/2', '', null, false],
    ])
  })

  test('an anchor that is both the first with text and the first followable is kept once', () => {
    const html = '<a href="/q" rel="nofollow"></a><a href="/q">Q</a><a href="/q">Again</a>'
    expect(folded(html).map((r) => [r.text, r.rel])).toEqual([
      ['', 'nofollow'],
      ['Q', null],
    ])
  })

  test('hrefs made to share a hash are found in linear time', async () => {
    // 'Aa' and 'BB' hash alike under the fold's hash, and so does every string of as many of them.
    const hrefs = Array.from({ length: 1 << 14 }, (_, k) => '/' + Array.from({ length: 14 }, (_, bit) => ((k >> bit) & 1 ? 'Aa' : 'BB')).join(''))
    const html = hrefs.map((h, k) => `<a href="${h}">${k % 2 ? 'text' : ''}</a>`).join('') + hrefs.map((h) => `<a href="${h}">again</a>`).join('')
    const links = (await scanHtml(html, DOC)).links
    expect(links.length).toBe(1 << 14)
    expect(links[0]).toEqual({ url: `https://shop.example${hrefs[0]}`, text: 'again', rel: [], nofollow: false })
    expect(links[1]).toEqual({ url: `https://shop.example${hrefs[1]}`, text: 'text', rel: [], nofollow: false })
  }, 3000)

  test('a link repeated before the <base> and after it is one link, resolved against the base', async () => {
    const html = '<a href="item">One</a><base href="/docs/"><a href="item" rel="nofollow">Again</a>'
    expect((await scanHtml(html, DOC)).links).toEqual([{ url: 'https://shop.example/docs/item', text: 'One', rel: [], nofollow: false }])
  })
})
