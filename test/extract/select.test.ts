import { describe, expect, test } from 'bun:test'
import type { HTMLElement } from 'node-html-parser'
import { applyDataMap } from '../../src/extract/data-map'
import { extractFields } from '../../src/extract/fields'
import { selectAll, selectFirst } from '../../src/extract/select'
import { attrOf, baseOf, parseTree } from '../../src/extract/tree'

const BASE = 'https://example.com/dir/page'
const ids = (els: HTMLElement[]) => els.map((el) => attrOf(el, 'id') ?? attrOf(el, 'data-id') ?? el.text)

describe('attributes', () => {
  // Every name Object.prototype has: node-html-parser's plain-object attrs crash or answer a function on them.
  const PROTO = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__proto__', '__defineGetter__', 'toLocaleString']
  const page = `<div class="card Big" id="c1" ${PROTO.map((name) => `${name}="${name}-value"`).join(' ')}>t</div><p>after</p>`

  test('attributes named like Object.prototype members are read as written, through fields and selectors', () => {
    const { data, errors } = extractFields(
      parseTree(page),
      [
        ...PROTO.map((name) => ({ name, selector: 'div', attr: name })),
        { name: 'by_attribute', selector: '[valueOf="valueOf-value"]', attr: 'id' },
        { name: 'by_presence', selector: 'div[constructor][toString]', attr: 'id' },
        { name: 'by_class', selector: '.card.Big', attr: 'id' },
        { name: 'by_id', selector: '#c1', attr: 'constructor' },
        { name: 'absent', selector: 'p', attr: 'toString' },
        { name: 'absent_selected', selector: 'p[hasOwnProperty], p[__proto__]' },
      ],
      BASE,
    )
    expect(data).toEqual({
      ...Object.fromEntries(PROTO.map((name) => [name, `${name}-value`])),
      by_attribute: 'c1',
      by_presence: 'c1',
      by_class: 'c1',
      by_id: 'constructor-value',
      absent: null,
      absent_selected: null,
    })
    expect(errors).toEqual([])
  })

  test('a repeated attribute keeps its first value, whatever the case of its name', () => {
    const root = parseTree('<div ID="first" id="second" Data-X="1" data-x="2" class="a" class="b">t</div><a href="" href="/x">l</a>')
    expect(
      extractFields(
        root,
        [
          { name: 'id', selector: 'div', attr: 'id' },
          { name: 'x', selector: 'div', attr: 'data-x' },
          { name: 'by_id', selector: '#first', attr: 'data-x' },
          { name: 'by_second_id', selector: '#second' },
          { name: 'by_class', selector: '.a', attr: 'id' },
          { name: 'by_second_class', selector: '.b' },
          { name: 'href', selector: 'a', attr: 'href', required: true },
        ],
        BASE,
      ),
    ).toEqual({
      data: { id: 'first', x: '1', by_id: '1', by_second_id: null, by_class: 'first', by_second_class: null, href: null },
      errors: [{ field: 'href', error: 'required', message: 'the first element matching "a" has no "href" attribute value' }],
    })
  })

  test('quoted, unquoted and bare values; character references decoded as in attributes', () => {
    const el = selectFirst(parseTree(`<a href=/p/1?a=1&amp;b=2&copy=3 title='it&#39;s "x"' data-v = "a&nbsp;b" hidden checked=checked data-e="">l</a>`), 'a')!
    expect(attrOf(el, 'href')).toBe('/p/1?a=1&b=2&copy=3')
    expect(attrOf(el, 'title')).toBe('it\'s "x"')
    expect(attrOf(el, 'data-v')).toBe('a\u00a0b')
    expect(attrOf(el, 'hidden')).toBe('')
    expect(attrOf(el, 'CHECKED')).toBe('checked')
    expect(attrOf(el, 'data-e')).toBe('')
    expect(attrOf(el, 'missing')).toBeUndefined()
  })

  test('<base href> is found by our attributes too', () => {
    expect(baseOf(parseTree('<head><base constructor="x" href="/shop/"></head>'), BASE)).toBe('https://example.com/shop/')
    expect(baseOf(parseTree('<base hasOwnProperty><base href="https://cdn.example/">'), BASE)).toBe('https://cdn.example/')
  })
})

describe('selection stays linear on deep pages', () => {
  // Before: css-select retried every ancestor for every earlier compound, 150 levels took 15 s.
  const deep = (levels: number) => parseTree(`${'<div>'.repeat(levels)}${'<a href="/x">l</a>'.repeat(20)}${'</div>'.repeat(levels)}`)

  test('descendant chains that fail, and ones that match, over 150 nested divs', () => {
    const root = deep(150)
    expect(selectAll(root, 'nav div div div a')).toEqual([])
    expect(selectAll(root, 'section div div div div div div a')).toEqual([])
    expect(selectAll(root, 'div div div div a')).toHaveLength(20)
    expect(selectAll(root, ':is(nav div div div a)')).toEqual([])
    expect(selectAll(root, 'a:not(nav div div div a)')).toHaveLength(20)
    expect(selectAll(root, ':has(nav div div a)')).toEqual([])
    expect(selectAll(root, 'div:has(> div div div a)')).toHaveLength(147)
    expect(selectAll(root, 'div ~ div ~ div ~ a')).toEqual([])
    expect(selectAll(root, 'a ~ a ~ a ~ a')).toHaveLength(17)
  })

  test('deeper still, each selection inside an item of its own', () => {
    const root = deep(2000) // below the tree's nesting bound (TREE_MAX_NESTING)
    const items = selectAll(root, 'div div div')
    expect(items).toHaveLength(1998)
    expect(selectAll(items[0]!, 'section div div a')).toEqual([])
    expect(selectAll(items[1996]!, 'div div a')).toEqual([])
    expect(selectAll(items[1995]!, 'div div a')).toHaveLength(20)
  })
})

describe('the scope', () => {
  const dl = parseTree('<dl><dt id="t1">a</dt><dd id="d1">1</dd><dt id="t2">b</dt><dd id="d2">2</dd></dl><dd id="outside">x</dd>')

  test('`:scope + dd` and `:scope ~ dd` are `+ dd` and `~ dd`', () => {
    const items = selectAll(dl, 'dt')
    for (const [relative, scoped] of [
      ['+ dd', ':scope + dd'],
      ['~ dd', ':scope ~ dd'],
      ['+ dd', 'dt:scope + dd'],
      ['~ dd', ':is(:scope) ~ dd'],
      ['+ dd, ~ dd', ':scope ~ dd, :scope + dd'],
    ]) {
      for (const item of items) expect({ scoped, found: ids(selectAll(item, scoped!)) }).toEqual({ scoped, found: ids(selectAll(item, relative!)) })
    }
    expect(ids(selectAll(items[0]!, ':scope ~ dd'))).toEqual(['d1', 'd2'])
    expect(ids(selectAll(items[1]!, ':scope + dd'))).toEqual(['d2'])
    expect(ids(selectAll(items[0]!, ':scope + dt'))).toEqual([])
  })

  test('a :scope that is not in the first compound does not let a match reach outside the scope', () => {
    const root = parseTree('<div class="o"><section id="s"><p id="in">in</p><div><p id="deep">deep</p></div></section></div><p id="out">out</p>')
    const section = selectFirst(root, 'section')!
    expect(ids(selectAll(section, 'div p:not(:scope)'))).toEqual(['deep'])
    expect(ids(selectAll(section, 'div p'))).toEqual(['deep'])
    expect(ids(selectAll(section, '.o p:not(:scope)'))).toEqual([])
    expect(ids(selectAll(section, 'div :scope p'))).toEqual([])
    expect(ids(selectAll(section, ':not(:scope) p'))).toEqual(['deep'])
    expect(ids(selectAll(section, ':is(:scope) > p'))).toEqual(['in'])
    expect(ids(selectAll(section, ':is(:scope, div) > p'))).toEqual(['in', 'deep'])
    expect(ids(selectAll(section, ':scope'))).toEqual(['s'])
    expect(ids(selectAll(section, ':scope p'))).toEqual(['in', 'deep'])
  })

  test('what a selector remembers for one scope is not reused for the next', () => {
    const root = parseTree(`<div class="c" data-id="a"><p>A</p>
        <div class="c" data-id="b"><p>B</p><div class="c" data-id="c"><p>C</p></div></div>
      </div><ul><li class="x">1</li><li>2</li><li class="x">3</li><li>4</li></ul>`)
    const map = {
      item_selector: '.c',
      fields: [
        { name: 'id', selector: ':scope', attr: 'data-id' },
        { name: 'nested_texts', selector: '.c p', multiple: true },
        { name: 'has_nested', selector: ':scope:has(> p ~ .c .c)', attr: 'data-id' },
      ],
    }
    expect(applyDataMap(root, map, BASE).data).toEqual([
      { id: 'a', nested_texts: ['B', 'C'], has_nested: 'a' },
      { id: 'b', nested_texts: ['C'], has_nested: null },
      { id: 'c', nested_texts: [], has_nested: null },
    ])
    const lis = selectAll(root, 'li')
    expect(lis.map((li) => ids(selectAll(li, '~ li')))).toEqual([['2', '3', '4'], ['3', '4'], ['4'], []])
    expect(lis.map((li) => ids(selectAll(li, ':scope ~ .x ~ li')))).toEqual([['4'], ['4'], [], []])
    expect(ids(selectAll(root, '.x ~ li:not(.x)'))).toEqual(['2', '4'])
    expect(ids(selectAll(root, 'li + li ~ .x'))).toEqual(['3'])
  })
})
