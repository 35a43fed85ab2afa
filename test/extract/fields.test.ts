import { describe, expect, test } from 'bun:test'
import { applyDataMap } from '../../src/extract/data-map'
import type { Field } from '../../src/extract/field-schema'
import { extractFields } from '../../src/extract/fields'
import { baseOf, parseTree } from '../../src/extract/tree'

const BASE = 'https://example.com/dir/page'
const run = (html: string, fields: Field[], base = BASE) => extractFields(parseTree(html), fields, base)

describe('attr', () => {
  const html = `<div class="card" data-id=" 42 " title="">
      <h2>  Hello
        <b>wide</b>&nbsp;world<br>again  </h2>
      <script>var hidden = 1</script><style>.x{}</style><template><p>tpl</p></template>
      <p class="note">a &lt; b &amp; <i>c</i></p>
    </div>`

  test('text is textContent without scripts, whitespace collapsed; html is inner HTML; others are attributes, trimmed', () => {
    const { data, errors } = run(html, [
      { name: 'text', selector: 'h2' },
      { name: 'card', selector: '.card' },
      { name: 'html', selector: '.note', attr: 'html' },
      { name: 'id', selector: '.card', attr: 'data-id' },
      { name: 'id_upper', selector: '.card', attr: 'DATA-ID' },
      { name: 'empty_attr', selector: '.card', attr: 'title' },
      { name: 'missing_attr', selector: '.card', attr: 'href' },
      { name: 'proto', selector: '.card', attr: 'constructor' },
    ])
    expect(data).toEqual({
      text: 'Hello wide world again',
      card: 'Hello wide world again a < b & c',
      html: 'a &lt; b &amp; <i>c</i>',
      id: '42',
      id_upper: '42',
      empty_attr: null,
      missing_attr: null,
      proto: null,
    })
    expect(errors).toEqual([])
  })

  test('a matched script or style gives its raw content (JSON-LD)', () => {
    const { data } = run('<script type="application/ld+json">{"name":"a &amp; b"}</script>', [{ name: 'ld', selector: 'script[type="application/ld+json"]' }])
    expect(data).toEqual({ ld: '{"name":"a &amp; b"}' })
  })
})

describe('matching', () => {
  const html = `<UL id="list"><LI class="a">one</LI><li class="b">two</li><li class="a">three</li></UL><p>after</p>`

  test('first match without multiple; every match with it; none is null or []', () => {
    const { data, errors } = run(html, [
      { name: 'first', selector: 'li.a' },
      { name: 'all', selector: 'ul li', multiple: true },
      { name: 'none', selector: 'table' },
      { name: 'none_multi', selector: 'table td', multiple: true },
      { name: 'upper', selector: 'UL > LI:nth-child(2)' },
      { name: 'root', selector: ':root', attr: 'id' },
    ])
    expect(data).toEqual({ first: 'one', all: ['one', 'two', 'three'], none: null, none_multi: [], upper: 'two', root: 'list' })
    expect(errors).toEqual([])
  })

  test('the first match decides even without a value; multiple leaves valueless matches out', () => {
    const { data, errors } = run('<img alt="a"><img src="/b.png"><img src=""><img src="/c.png">', [
      { name: 'first', selector: 'img', attr: 'src', type: 'url' },
      { name: 'with_src', selector: 'img[src]:not([src=""])', attr: 'src', type: 'url' },
      { name: 'all', selector: 'img', attr: 'src', type: 'url', multiple: true },
    ])
    expect(data).toEqual({ first: null, with_src: 'https://example.com/b.png', all: ['https://example.com/b.png', 'https://example.com/c.png'] })
    expect(errors).toEqual([])
  })

  test('a value that does not coerce is null with an error; in a list it keeps its place', () => {
    const { data, errors } = run('<i>1</i><i>two</i><i>3</i><b>x</b>', [
      { name: 'nums', selector: 'i', type: 'integer', multiple: true },
      { name: 'one', selector: 'b', type: 'number' },
    ])
    expect(data).toEqual({ nums: [1, null, 3], one: null })
    expect(errors).toEqual([
      { field: 'nums[1]', error: 'invalid', message: '"two" holds no number' },
      { field: 'one', error: 'invalid', message: '"x" holds no number' },
    ])
  })

  test('required: no match, no value and an empty list are reported, never a silent null', () => {
    const { data, errors } = run('<h1> </h1><a>no href</a><div class="e"></div>', [
      { name: 'title', selector: 'h1', required: true },
      { name: 'link', selector: 'a', attr: 'href', required: true },
      { name: 'body', selector: '.e', attr: 'html', required: true },
      { name: 'price', selector: '.price', type: 'number', required: true },
      { name: 'tags', selector: '.tag', multiple: true, required: true },
      { name: 'author', selector: '.author', required: true, fields: [{ name: 'name', selector: 'a' }] },
      { name: 'optional', selector: '.price' },
    ])
    expect(data).toEqual({ title: null, link: null, body: null, price: null, tags: [], author: null, optional: null })
    expect(errors).toEqual([
      { field: 'title', error: 'required', message: 'the first element matching "h1" has no text' },
      { field: 'link', error: 'required', message: 'the first element matching "a" has no "href" attribute value' },
      { field: 'body', error: 'required', message: 'the first element matching ".e" is empty' },
      { field: 'price', error: 'required', message: 'no element matches ".price"' },
      { field: 'tags', error: 'required', message: 'no element matches ".tag"' },
      { field: 'author', error: 'required', message: 'no element matches ".author"' },
    ])
  })
})

describe('nested fields and item lists', () => {
  const html = `<div class="thread">
      <div class="post" id="p1"><span class="who"><a href="/u/ann">Ann</a></span><p>hi</p><i class="likes">3</i></div>
      <div class="post" id="p2"><span class="who">Bob</span><p>yo</p><p>again</p><i class="likes">many</i></div>
      <div class="post" id="p3"><p>orphan</p></div>
    </div><span class="who">outside</span>`

  test('an object per matched element, selectors relative to it, error paths with indexes', () => {
    const { data, errors } = run(html, [
      {
        name: 'posts',
        selector: '.post',
        multiple: true,
        fields: [
          { name: 'id', selector: ':scope', attr: 'id' },
          {
            name: 'author',
            selector: '.who',
            required: true,
            fields: [
              { name: 'name', selector: ':scope' },
              { name: 'url', selector: 'a', attr: 'href', type: 'url' },
            ],
          },
          { name: 'text', selector: '> p', multiple: true },
          { name: 'likes', selector: '.likes', type: 'integer' },
          { name: 'in_thread', selector: '.thread .post', multiple: true },
        ],
      },
      {
        name: 'first',
        selector: '.post',
        fields: [
          { name: 'id', selector: ':scope', attr: 'id' },
          { name: 'next', selector: '+ .post', attr: 'id' },
        ],
      },
    ])
    expect(data).toEqual({
      posts: [
        { id: 'p1', author: { name: 'Ann', url: 'https://example.com/u/ann' }, text: ['hi'], likes: 3, in_thread: [] },
        { id: 'p2', author: { name: 'Bob', url: null }, text: ['yo', 'again'], likes: null, in_thread: [] },
        { id: 'p3', author: null, text: ['orphan'], likes: null, in_thread: [] },
      ],
      first: { id: 'p1', next: 'p2' },
    })
    expect(errors).toEqual([
      { field: 'posts[1].likes', error: 'invalid', message: '"many" holds no number' },
      { field: 'posts[2].author', error: 'required', message: 'no element matches ".who"' },
    ])
  })

  test('item_selector gives a list; error paths start with the item index', () => {
    const root = parseTree(html)
    const map = {
      item_selector: '.post',
      fields: [
        { name: 'id', selector: ':scope', attr: 'id' },
        { name: 'likes', selector: '.likes', type: 'integer' as const, required: true },
      ],
    }
    expect(applyDataMap(root, map, BASE)).toEqual({
      data: [
        { id: 'p1', likes: 3 },
        { id: 'p2', likes: null },
        { id: 'p3', likes: null },
      ],
      errors: [
        { field: '[1].likes', error: 'invalid', message: '"many" holds no number' },
        { field: '[2].likes', error: 'required', message: 'no element matches ".likes"' },
      ],
    })
    expect(applyDataMap(root, { item_selector: 'table tr', fields: map.fields }, BASE)).toEqual({ data: [], errors: [] })
    expect(applyDataMap(root, { fields: map.fields }, BASE)).toEqual({ data: { id: null, likes: 3 }, errors: [] })
  })

  test('nested items (replies inside comments) each see their whole subtree and never match themselves', () => {
    const root = parseTree(`<div class="c" id="a"><p>A</p>
        <div class="c" id="b"><p>B</p><div class="c" id="c"><p>C</p></div></div>
      </div>`)
    const map = {
      item_selector: '.c',
      fields: [
        { name: 'id', selector: ':scope', attr: 'id' },
        { name: 'texts', selector: 'p', multiple: true },
        // The item is not its own descendant: `.c` inside a `.c` item finds only the replies.
        { name: 'replies', selector: '.c', attr: 'id', multiple: true },
      ],
    }
    expect(applyDataMap(root, map, BASE).data).toEqual([
      { id: 'a', texts: ['A', 'B', 'C'], replies: ['b', 'c'] },
      { id: 'b', texts: ['B', 'C'], replies: ['c'] },
      { id: 'c', texts: ['C'], replies: [] },
    ])
  })

  test('a field may be named __proto__ or constructor without touching prototypes', () => {
    const { data } = run('<b>x</b>', [
      { name: '__proto__', selector: 'b' },
      { name: 'constructor', selector: 'b' },
    ])
    expect(JSON.stringify(data)).toBe('{"__proto__":"x","constructor":"x"}')
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype)
  })
})

describe('documents', () => {
  test('<base href> sets the base for url fields; a non-http base is ignored', () => {
    expect(baseOf(parseTree('<head><base href="/shop/"></head>'), BASE)).toBe('https://example.com/shop/')
    expect(baseOf(parseTree('<BASE HREF="https://cdn.example/x/">'), BASE)).toBe('https://cdn.example/x/')
    expect(baseOf(parseTree('<base href="javascript:alert(1)">'), BASE)).toBe(BASE)
    expect(baseOf(parseTree('<base target="_blank">'), BASE)).toBe(BASE)
  })

  test('broken markup still extracts; deep nesting does not exhaust the stack', () => {
    expect(
      run('<ul><li>a<li>b</ul><p>c<p>d', [
        { name: 'li', selector: 'li', multiple: true },
        { name: 'p', selector: 'p', multiple: true },
      ]).data,
    ).toEqual({ li: ['a', 'b'], p: ['c', 'd'] })
    const deep = (n: number) => `${'<div>'.repeat(n)}<span class="x">bottom</span>${'</div>'.repeat(n)}`
    expect(
      run(deep(2000), [
        { name: 'x', selector: 'div .x' },
        { name: 'all', selector: 'body' },
      ]).data,
    ).toEqual({ x: 'bottom', all: null })
    // Past TREE_MAX_NESTING (2048) elements lose their tags, their text stays.
    expect(
      run(deep(20_000), [
        { name: 'x', selector: 'div .x' },
        { name: 'top', selector: 'div' },
      ]).data,
    ).toEqual({ x: null, top: 'bottom' })
  })

  test('extraction over a large listing stays linear (each selector compiled once)', () => {
    const card = (i: number) => `<li class="product"><h2><a href="/p/${i}">Product ${i}</a></h2><span class="price">$${(i * 1000 + 0.99).toLocaleString('en-US')}</span><img src="/i/${i}.jpg"></li>`
    const fields: Field[] = [
      { name: 'name', selector: 'h2 a' },
      { name: 'url', selector: 'h2 > a', attr: 'href', type: 'url' },
      { name: 'price', selector: '.price', type: 'number' },
      { name: 'image', selector: 'img', attr: 'src', type: 'url' },
    ]
    const time = (n: number) => {
      const root = parseTree(`<ul>${Array.from({ length: n }, (_, i) => card(i)).join('')}</ul>`)
      const started = performance.now()
      const out = applyDataMap(root, { item_selector: 'li.product', fields }, BASE)
      return { ms: performance.now() - started, out }
    }
    // The best of a few runs of each: a single one of a few ms is at the mercy of a GC pause.
    const best = (n: number) => {
      const runs = Array.from({ length: 5 }, () => time(n))
      return runs.reduce((a, b) => (b.ms < a.ms ? b : a))
    }
    time(100) // warm up
    const small = best(200)
    const large = best(4000)
    expect((large.out.data as unknown[]).length).toBe(4000)
    expect((large.out.data as unknown[])[3999]).toEqual({ name: 'Product 3999', url: 'https://example.com/p/3999', price: 3999000.99, image: 'https://example.com/i/3999.jpg' })
    // Twenty times the items may take at most 60 times as long (quadratic would be ~400 times).
    expect(large.ms).toBeLessThan(Math.max(small.ms, 1) * 60)
  })
})

describe('hostile nesting', () => {
  test('a page of 40,000 unclosed divs parses (nesting is bounded before the tree is built)', () => {
    const html = `<body><h1>Title</h1>${'<div>'.repeat(40_000)}deep text`
    const root = parseTree(html)
    // (node-html-parser nests unclosed divs its own way; what counts here is that it finishes.)
    expect(extractFields(root, [{ name: 'title', selector: 'h1' }], 'https://a.example/')).toEqual({ data: { title: 'Title' }, errors: [] })
  })
})
