import { describe, expect, test } from 'bun:test'
import { absoluteHttp, decodeAttr, Resolver } from '../../src/parse/html-values'
import { linkOutsFrom, rewriterSupports, scanHtml } from '../../src/parse/scan'

const DOC = 'https://shop.example/catalog/list.html?page=2#top'

const link = (url: string, text: string, rel: string[] = [], nofollow = false) => ({ url, text, rel, nofollow })

describe('links', () => {
  test('are absolute, http(s) only, without fragment, deduplicated, with decoded text and rel', async () => {
    const html = `<!doctype html><html><body>
      <a href="item?id=1&amp;color=red#reviews">Red   <b>shirt</b>
        &amp; more</a>
      <a href="../about/">About &eacute;quipe</a>
      <a href="//cdn.shop.example/guide.pdf" rel="NoFollow  UGC">Guide</a>
      <a href="https://other.example">Other</a>
      <a href="/catalog/list.html?page=3">Next</a>
      <a href="#main">Skip</a>
      <a href="javascript:void(0)">Menu</a><a href="mailto:shop@shop.example">Mail</a><a href="tel:+100">Call</a>
      <a href="data:text/plain,x">Data</a><a href="http://[bad">Broken</a><a name="anchor">No href</a>
      <a href="/item?id=9"><img src="/t/9.jpg" alt="Blue &amp; green shirt"></a>
      <a href="/item?id=9">Blue shirt</a>
      <a href="item?id=1&amp;color=red">Red shirt again</a>
      <map name="m"><area href="/area/1" alt="Area one" shape="rect"></map>
      <!-- <a href="/in-comment">x</a> --><script>document.write('<a href="/in-script">x</a>')</script>
      <textarea><a href="/in-textarea">x</a></textarea>
    </body></html>`
    const scan = await scanHtml(html, DOC)
    expect(scan.base_url).toBe('https://shop.example/catalog/list.html?page=2')
    expect(scan.links).toEqual([
      link('https://shop.example/catalog/item?id=1&color=red', 'Red shirt & more'),
      link('https://shop.example/about/', 'About équipe'),
      link('https://cdn.shop.example/guide.pdf', 'Guide', ['nofollow', 'ugc'], true),
      link('https://other.example/', 'Other'),
      link('https://shop.example/catalog/list.html?page=3', 'Next'),
      link('https://shop.example/catalog/list.html?page=2', 'Skip'),
      link('https://shop.example/item?id=9', 'Blue & green shirt'),
      link('https://shop.example/area/1', 'Area one'),
    ])
  })

  test('a duplicate fills in missing text and makes a nofollow link followable', async () => {
    const html = `<a href="/p/1"><img src="/p/1.jpg"></a><a href="/p/1">Product one</a><a href="/p/1">Later text</a>
      <a href="/p/2" rel="nofollow sponsored">Sponsored</a><a href="/p/2" rel="bookmark">Plain</a><a href="/p/2" rel="nofollow">Again</a>`
    expect((await scanHtml(html, DOC)).links).toEqual([link('https://shop.example/p/1', 'Product one'), link('https://shop.example/p/2', 'Sponsored', ['bookmark'], false)])
  })

  test('the first <base href> resolves against the document and is the base of every link, as in a browser', async () => {
    const html = `<html><head><a href="early">Early</a><base href="/docs/v2/"><base href="https://ignored.example/"></head>
      <body><a href="intro">Intro</a><a href="/root">Root</a><link rel="canonical" href="intro#x"></body></html>`
    const scan = await scanHtml(html, DOC)
    expect(scan.base_url).toBe('https://shop.example/docs/v2/')
    expect(scan.links.map((l) => l.url)).toEqual(['https://shop.example/docs/v2/early', 'https://shop.example/docs/v2/intro', 'https://shop.example/root'])
    expect(scan.metadata.canonical).toBe('https://shop.example/docs/v2/intro')
  })

  test('a robots meta nofollow makes every link nofollow, rel unchanged', async () => {
    const html = `<head><meta name="ROBOTS" content="noindex, NOFOLLOW"></head><a href="/a" rel="next">A</a>`
    expect((await scanHtml(html, DOC)).links).toEqual([link('https://shop.example/a', 'A', ['next'], true)])
    const none = `<meta name="robots" content="none"><a href="/a">A</a>`
    expect((await scanHtml(none, DOC)).links[0]!.nofollow).toBe(true)
    const index = `<meta name="robots" content="index, follow"><a href="/a">A</a>`
    expect((await scanHtml(index, DOC)).links[0]!.nofollow).toBe(false)
  })

  test('anchor text: nested markup, comments, quoted >, unclosed anchors, upper case tags', async () => {
    const html = `<A HREF="/one" title="a > b">One <span class="x">&lt;1&gt;</span><!-- hidden --></A>
      <a href="/two">Two<a href="/three">Three</a>
      <a href='/four' data-x=">">Four<script>var s = "</a>"</script></a><a href=/five>Five &#x2F; &#47;</a>
      <a href="/six"><img alt="first"> <img alt="second"></a><a href="/seven">\u0001Seven\uFDD0</a>
      <a href="/eight" HREF="/not-this" rel="first" rel="second">Eight</a>`
    expect((await scanHtml(html, DOC)).links.map((l) => [l.url, l.text])).toEqual([
      ['https://shop.example/one', 'One <1>'],
      ['https://shop.example/two', 'Two'],
      ['https://shop.example/three', 'Three'],
      ['https://shop.example/four', 'Four'],
      ['https://shop.example/five', 'Five / /'],
      ['https://shop.example/six', 'first second'],
      // Text as the page has it, control characters included: the scan puts no marks in it.
      ['https://shop.example/seven', '\u0001Seven\uFDD0'],
      ['https://shop.example/eight', 'Eight'],
    ])
  })
})

describe('metadata', () => {
  test('title, description, canonical, language, Open Graph and JSON-LD', async () => {
    const html = `<!DOCTYPE html><!-- build 7 --><html lang=" fr-CA "><head>
      <title>  Chemises &amp; pulls
        | Shop </title><title>Second title</title>
      <meta name="Description" property="og:description" content="Des chemises &quot;en lin&quot;">
      <meta name="description" content="second description">
      <link rel="Canonical" href="/catalog/shirts#top">
      <meta property="og:title" content="Chemises"><meta property="OG:Title" content="ignored">
      <meta property="og:image" content="https://cdn.example/og.png"><meta property="og:type" content="  ">
      <meta name="og:site_name" content="Shop &amp; Co"><meta property="twitter:card" content="summary">
      <script type="application/ld+json">{"@type":"Organization","name":"Shop"}</script>
      <script type="application/ld+json">{"@type": broken</script>
      <script type="Application/LD+JSON; charset=utf-8">[{"@type":"BreadcrumbList"}]</script>
      <script type="application/json">{"not":"ld"}</script>
      </head><body><svg><title>icon</title></svg></body></html>`
    expect((await scanHtml(html, DOC)).metadata).toEqual({
      title: 'Chemises & pulls | Shop',
      description: 'Des chemises "en lin"',
      canonical: 'https://shop.example/catalog/shirts',
      language: 'fr-CA',
      open_graph: {
        'og:description': 'Des chemises "en lin"',
        'og:title': 'Chemises',
        'og:image': 'https://cdn.example/og.png',
        'og:site_name': 'Shop & Co',
      },
      json_ld: [{ '@type': 'Organization', name: 'Shop' }, [{ '@type': 'BreadcrumbList' }]],
    })
  })

  test('language falls back to content-language; a page without head gives nulls', async () => {
    const html = `<html><head><meta http-equiv="Content-Language" content="de"></head><p>Hallo</p>`
    expect((await scanHtml(html, DOC)).metadata.language).toBe('de')
    expect((await scanHtml('<p>Just text</p>', DOC)).metadata).toEqual({
      title: null,
      description: null,
      canonical: null,
      language: null,
      open_graph: {},
      json_ld: [],
    })
  })
})

test('assets: images, stylesheets and scripts, absolute and once each', async () => {
  const html = `<head><link rel="stylesheet" href="/css/site.css?v=1&amp;x=2"><link rel="preload stylesheet" href="/css/site.css?v=1&amp;x=2">
    <link rel="icon" href="/favicon.ico"><script src="js/app.js" defer></script><script>inline()</script></head>
    <body><img src="img/a.png"><img src="img/a.png"><img src="data:image/gif;base64,R0lGOD"><img alt="no src">
    <picture><source srcset="img/b.webp"><img src="//cdn.example/b.png"></picture></body>`
  expect((await scanHtml(html, DOC)).assets).toEqual([
    'https://shop.example/css/site.css?v=1&x=2',
    'https://shop.example/catalog/js/app.js',
    'https://shop.example/catalog/img/a.png',
    'https://cdn.example/b.png',
  ])
})

describe('navigators', () => {
  const html = `<html><head><link rel="next" href="?page=3"></head><body>
    <nav class="pager"><a href="?page=1">First</a><a href="?page=3" rel="next">Next</a><a>Disabled</a></nav>
    <ul class="products"><li><a href="/p/1">One</a></li><li><a href="/p/2">Two</a></li><li><a href="/p/1">One again</a></li></ul>
    <div class="card" href="/p/3">Card <em>three</em></div><map><area href="/area" alt="Area"></map></body></html>`

  test('each selector gives the links of the elements it matches; unsupported selectors give undefined', async () => {
    const scan = await scanHtml(html, DOC, {
      navigators: ['.products a', 'nav.pager a', 'link[rel=next], .card', 'a[href]', 'li:has(a)', 'section a'],
    })
    expect(scan.selected).toEqual([
      [link('https://shop.example/p/1', 'One'), link('https://shop.example/p/2', 'Two')],
      [link('https://shop.example/catalog/list.html?page=1', 'First'), link('https://shop.example/catalog/list.html?page=3', 'Next', ['next'])],
      [link('https://shop.example/catalog/list.html?page=3', '', ['next']), link('https://shop.example/p/3', 'Card three')],
      [
        link('https://shop.example/catalog/list.html?page=1', 'First'),
        link('https://shop.example/catalog/list.html?page=3', 'Next', ['next']),
        link('https://shop.example/p/1', 'One'),
        link('https://shop.example/p/2', 'Two'),
      ],
      undefined,
      [],
    ])
    expect(scan.links.map((l) => l.url)).toContain('https://shop.example/area')
  })

  test('rewriterSupports says which selectors HTMLRewriter runs', () => {
    expect(['a[href]', 'ul > li a.x', 'a:not(.ad)', 'a[href$=".pdf" i]', 'li:nth-child(2) a'].map(rewriterSupports)).toEqual([true, true, true, true, true])
    const unsupported = ['li:has(a)', 'a::before', 'a:hover', '', 'a[', '>>']
    expect(unsupported.map(rewriterSupports)).toEqual([false, false, false, false, false, false])
  })
})

test('the URL shortcuts answer what the URL parser answers', () => {
  const hrefs = [
    '/a',
    '/a/b?c=d',
    '/a?',
    '/',
    '//cdn.example',
    '//cdn.example/x',
    'https://a.b/c',
    'http://a.b',
    'https://A.b/',
    'https://a.b:443/',
    'https://a.b:8443/',
    'https://1.2.3.4/',
    'https://0x7f.1/',
    'https://a.1/',
    'https://a.b./',
    'https://xn--nxasmq6b.com/',
    'https://xn--a.com/',
    'https://-a.b/',
    'https://a.b/./c',
    'https://a.b/%2e%2E/c',
    '/a/../b',
    '/%zz',
    "/a'b",
    "/a?b'c",
    '/a:b@c',
    'https://u@a.b/',
    '/a\\b',
    '/a b',
    '/é',
    'https://exa_mple.com/',
    '//a.b',
    'https:a',
    'HTTP://a.b/',
    'https://a.b?x',
    '///a',
    '/a?b&amp;c',
    '/a#frag',
    'https://com/',
    'https://a.0x/',
    'https://a..b/',
    'https://.a.b/',
    '//a.b.',
    'https://a.1b/',
    'https://1a.b/x',
    'https://a-.b-/',
    'https://-/',
    '//a.b.c.d/e',
    'https://./',
    'https://../',
    '//' + 'a.'.repeat(50) + 'b/',
    // IPv4 hosts and ports
    '//127.0.0.1:42671/p/1',
    'http://127.0.0.1:42671/p/1#x',
    'http://127.0.0.1/x',
    'http://127.0.0.1:80/x',
    'https://127.0.0.1:443/',
    '//a.b:443/x',
    '//a.b:80/x',
    'http://a.b:1',
    'http://a.b:0/',
    'http://a.b:080/',
    'http://a.b:65535/',
    'http://a.b:65536/',
    'http://a.b:/x',
    'http://127.000.0.1/',
    'http://127.1/',
    'http://256.1.1.1/',
    'http://1.2.3/',
    'http://0.0.0.0/',
    'http://255.255.255.255:8080/',
    'http://1.2.3.4.5/',
    'http://[::1]:8080/',
    // path-relative, fragments, and what looks relative but is not
    '7',
    'x.html',
    'a/b:c',
    'a?b',
    'a?b#c?d',
    './7',
    './',
    '../p/7',
    '../',
    '../..',
    '../../../../x',
    './../x',
    '.././x',
    '..//x',
    './?x',
    '?x',
    '#t',
    './#s2',
    '7#top',
    '../p/7#top',
    '/p/7#top',
    'https://a.b/c#x',
    '.x',
    '.',
    '..',
    '...',
    '%2e/x',
    '%2E%2e/x',
    'a%2E',
    'a/../b',
    'a/./b',
    'a?/../b',
    'a&amp;b',
    'a&#35;b',
    'a#&amp;',
    'mailto:x@y.z',
    'javascript:void(0)',
    'a:b',
    'a b',
    'é',
    'a\\b',
  ]
  for (const base of ['https://example.com/dir/page.html?q=1', 'http://example.com:8080/a/', 'https://user:pw@example.com/x', 'https://example.com/a/b/c/d', 'https://example.com']) {
    const resolver = new Resolver(new URL(base))
    const got = hrefs.map((href) => resolver.resolve(href))
    expect(got).toEqual(hrefs.map((href) => absoluteHttp(decodeAttr(href), base)))
  }
})

describe('the base applies to every URL, wherever the <base> is', () => {
  const html = `<head><link rel="canonical" href="c?x#frag"><link rel="stylesheet" href="s.css"><link rel="next" href="p2">
    <script src="app.js"></script></head><body><img src="i.png"><div class="card" href="card">Card</div>
    <base href="https://other.example/b/"><a href="rel">x</a></body>`

  test('canonical, assets and navigator links of other elements met before the <base>', async () => {
    const scan = await scanHtml(html, DOC, { navigators: ['link[rel=next], .card'] })
    expect(scan.base_url).toBe('https://other.example/b/')
    expect(scan.metadata.canonical).toBe('https://other.example/b/c?x')
    expect(scan.assets).toEqual(['https://other.example/b/s.css', 'https://other.example/b/app.js', 'https://other.example/b/i.png'])
    expect(scan.selected).toEqual([[link('https://other.example/b/p2', '', ['next']), link('https://other.example/b/card', 'Card')]])
    expect(scan.links).toEqual([link('https://other.example/b/rel', 'x')])
  })

  test('the first canonical with an http(s) URL counts', async () => {
    const scan = await scanHtml('<link rel=canonical href="mailto:x@y"><link rel=canonical href="/one"><link rel=canonical href="/two">', DOC)
    expect(scan.metadata.canonical).toBe('https://shop.example/one')
  })
})

test('anchor text ends where the walk ends things: an </a> in a comment, a script or an attribute ends no anchor', async () => {
  const html = `<a href=/comment>one<!-- </a> -->two</a>
    <a href=/title>one<title>a</titlex>b</title>two</a>
    <a href=/script>one<script><!-- document.write('<script></script></a>') --></script>two</a>
    <a href=/end-tag>one</span title="</a>">two</a>
    <a href=/template>one<template><b>x</b></template>two</a>
    <a href=/last>last</A >after`
  expect((await scanHtml(html, DOC)).links.map((l) => [l.url, l.text])).toEqual([
    ['https://shop.example/comment', 'onetwo'],
    ['https://shop.example/title', 'onetwo'],
    ['https://shop.example/script', 'onetwo'],
    ['https://shop.example/end-tag', 'onetwo'],
    ['https://shop.example/template', 'onetwo'],
    ['https://shop.example/last', 'last'],
  ])
})

describe('anchor text in linear time', () => {
  // 40,000 raw-text elements in one anchor took 7 s when each searched a lowercased copy of the
  // rest of the anchor; the time limit only makes a relapse fail fast.
  test('an anchor holding many raw-text elements', async () => {
    const html = `<a href="/x">${'<xmp></xmp>'.repeat(40_000)}text</a><a href="/y">y</a>`
    expect((await scanHtml(html, DOC)).links).toEqual([link('https://shop.example/x', 'text'), link('https://shop.example/y', 'y')])
  }, 3000)

  test('anchors holding comments that end as the standard says (--!>), which the walk ends there too', async () => {
    const html = '<a href=/x><!-- --!>x</a>'.repeat(50_000) + '<a href=/y><!-->y</a>'
    expect((await scanHtml(html, DOC)).links).toEqual([link('https://shop.example/x', 'x'), link('https://shop.example/y', 'y')])
  }, 3000)

  test('the end of a raw-text element is found in the source, whatever lowercasing does to the text', async () => {
    // 'İ' lowercases to two characters: positions in a lowercased copy are off.
    const html = `<a href="/x">a<xmp>İİ</xmp>b<noscript>c</NOSCRIPT>d</a>`
    expect((await scanHtml(html, DOC)).links).toEqual([link('https://shop.example/x', 'abd')])
  })
})

test('a navigator `a [href]` is a descendant selector, not the anchors', async () => {
  const html = `<a href="/1">one</a><a href="/2"><span href="/s">span</span></a>`
  const scan = await scanHtml(html, DOC, { navigators: ['a [href]', ' a[href] ', 'a'] })
  expect(scan.selected).toEqual([
    [link('https://shop.example/s', 'span')],
    [link('https://shop.example/1', 'one'), link('https://shop.example/2', 'span')],
    [link('https://shop.example/1', 'one'), link('https://shop.example/2', 'span')],
  ])
})

test('linkOutsFrom applies the scan rules to links found elsewhere (decoded values)', () => {
  const records = [
    { url: 'https://a.example/r', rel: 'next Next', text: ' A &amp;\n  B ' },
    { url: 'https://a.example/i', rel: null, text: '', alt: ' x & y ' },
    { url: 'https://a.example/s', rel: 'nofollow', text: '  ' },
    { url: 'https://a.example/s', rel: 'ugc', text: 'later text' },
    { url: 'https://a.example/r', rel: null, text: 'again' },
  ]
  expect(linkOutsFrom(records, false)).toEqual([link('https://a.example/r', 'A &amp; B', ['next']), link('https://a.example/i', 'x & y'), link('https://a.example/s', 'later text', ['ugc'])])
  expect(linkOutsFrom(records, true).map((l) => l.nofollow)).toEqual([true, true, true])
})

describe('where the scan looks for tags', () => {
  test('nothing in comments, scripts, styles, noscript or textarea counts', async () => {
    const html = `<!doctype html><html lang="de"><head>
      <!-- <title>Commented</title><meta name="description" content="commented"><a href="/c1"> -->
      <title>Page &amp; more</title>
      <script>document.write('<meta name="robots" content="nofollow"><a href="/s1">')</script>
      <script type="application/ld+json">{"@type": "Thing", "name": "</scrip> <a href=/j>"}</script>
      <style>a::after { content: '<link rel="canonical" href="/style">' }</style>
      <noscript><link rel="canonical" href="/noscript"><img src="/noscript.png"></noscript>
      <link rel="canonical" href="/real"><meta name="description" content="Real &amp; true">
    </head><body><a href="/one">One</a><textarea><a href="/ta"></textarea><a href="/two">Two</a></body></html>`
    const scan = await scanHtml(html, DOC)
    expect(scan.metadata).toEqual({
      title: 'Page & more',
      description: 'Real & true',
      canonical: 'https://shop.example/real',
      language: 'de',
      open_graph: {},
      json_ld: [{ '@type': 'Thing', name: '</scrip> <a href=/j>' }],
    })
    expect(scan.robots_nofollow).toBe(false)
    expect(scan.links).toEqual([link('https://shop.example/one', 'One'), link('https://shop.example/two', 'Two')])
    expect(scan.assets).toEqual([])
  })

  test('a tag the document ends inside is not read', async () => {
    const scan = await scanHtml('<a href="/one">One</a><a href="/cut', DOC)
    expect(scan.links).toEqual([link('https://shop.example/one', 'One')])
  })

  test('a navigator meets the links the scan read: their text comes with them, entities in the href too', async () => {
    const html = `<nav><a href="/p?a=1&amp;b=2">First <b>page</b><img alt="icon"></a><a href='/q'><img alt="Q"></a></nav><a href="/out">Out</a>`
    const scan = await scanHtml(html, DOC, { navigators: ['nav a'] })
    expect(scan.selected).toEqual([[link('https://shop.example/p?a=1&b=2', 'First page'), link('https://shop.example/q', 'Q')]])
  })

  test('where HTMLRewriter reads other links than the walk, a navigator keeps its own href, rel and text', async () => {
    // HTMLRewriter reads the svg style's content as markup (a link the walk does not see), so
    // the links after it have other indexes in its pass.
    const html = `<svg><style><a href="/in-style">S</a></style></svg><nav><a href="/n1" rel="nofollow">N <b>one</b></a></nav>`
    const scan = await scanHtml(html, DOC, { navigators: ['nav a', 'svg a'] })
    expect(scan.links).toEqual([link('https://shop.example/n1', 'N one', ['nofollow'], true)])
    expect(scan.selected).toEqual([[link('https://shop.example/n1', 'N one', ['nofollow'], true)], [link('https://shop.example/in-style', 'S')]])
  })
})
