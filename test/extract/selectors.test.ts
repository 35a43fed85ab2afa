import { describe, expect, test } from 'bun:test'
import { checkDataMap } from '../../src/extract/data-map'
import { selectAll } from '../../src/extract/select'
import { checkFields, selectorProblem } from '../../src/extract/selectors'
import { parseTree } from '../../src/extract/tree'
import { FieldErrors, ValidationError } from '../../src/core/errors'

const invalid = (why: string) => `is not a valid CSS selector: ${why}`

describe('selectorProblem', () => {
  test.each(
    [
      ['div[', invalid('expected a name, found the end of the selector')],
      ['a::', invalid('expected a name, found "::"')],
      ['>>', invalid('two combinators in a row')],
      ['div > > p', invalid('two combinators in a row')],
      ['', 'must not be empty'],
      ['   ', 'must not be empty'],
      ['p,', invalid('an empty selector (a stray comma or character)')],
      [',p', invalid('an empty selector (a stray comma or character)')],
      ['p!', invalid('unexpected "!"')],
      ['p{}', invalid('unexpected "{}"')],
      ['p[id=x', invalid('an attribute selector is not closed with ]')],
      ['a:not(.x', invalid('Missing closing parenthesis in :not (a:not(.x)')],
      ['a::before', invalid('pseudo-elements (::name) are not supported; select the element and use attr')],
      ['p:lang(en)', invalid('Unknown pseudo-class :lang')],
      ['p:first', invalid('Unknown pseudo-class :first')],
      ['li:nth-child(x)', invalid("n-th rule couldn't be parsed ('x')")],
      // What css-what parses without complaint but CSS rejects:
      ['div >', invalid('ends with the combinator ">"')],
      ['p ~', invalid('ends with the combinator "~"')],
      ['li:has(a +)', invalid('ends with the combinator "+"')],
      ['p..a', invalid('".a" is not a class name')],
      ['a&b', invalid('"&b" is not a tag name')],
      ['[&x]', invalid('"&x" is not an attribute name')],
      ['#&x', invalid('"&x" is not an id')],
      // An escape makes any first character valid, but not a bad name after it.
      ['.\\!a..b', invalid('".b" is not a class name')],
      ['p..\\!a', invalid('".!a" is not a class name')],
      ['a | b', invalid('namespace prefixes (ns|name) are not supported')],
      ['svg|rect', invalid('namespace prefixes (ns|name) are not supported')],
      ['x'.repeat(1025), 'must be at most 1024 characters'],
    ].map(([selector, message]) => [selector!.length > 40 ? `${selector!.slice(0, 12)}… (${selector!.length} characters)` : selector, selector, message]),
  )('%p is rejected', (_label, selector, message) => {
    expect(selectorProblem(selector!)).toBe(message!)
  })

  test.each([
    'h1',
    'DIV.Content > P',
    'article h1.headline, h1',
    'a[href^="/"]',
    'a[href$=".PDF" i]',
    '[data-x]',
    '#main',
    '.md\\:flex',
    // Tailwind class names, whose first character is escaped.
    '.\\!mt-0',
    '.\\[mask-type\\:luminance\\]',
    '.\\@lg\\:flex',
    '.\\*\\:p-2',
    '.\\/x',
    '.\\31 0',
    '#\\#top',
    ':is(.\\!hidden, .\\@md\\:block) > a',
    'li:nth-child(2n+1)',
    'li:has(> a)',
    ':is(h1, h2) + p',
    'p:not(.ad):not(:empty)',
    'p:contains("a, b")',
    '> li',
    '+ dd',
    ':scope',
    ':scope > a',
    ':root',
  ])('%p is accepted', (selector) => {
    expect(selectorProblem(selector)).toBeNull()
  })

  test('escaped names select what they name', () => {
    const root = parseTree('<div class="!mt-0 [mask-type:luminance] @lg:flex /x 10" id="#top"><a>ok</a></div>')
    for (const selector of ['.\\!mt-0', '.\\[mask-type\\:luminance\\]', '.\\@lg\\:flex', '.\\/x', '.\\31 0', '#\\#top', '.\\!mt-0.\\@lg\\:flex > a']) {
      expect({ selector, problem: selectorProblem(selector) }).toEqual({ selector, problem: null })
      expect({ selector, found: selectAll(root, selector).length }).toEqual({ selector, found: 1 })
    }
  })

  test('never throws, whatever it is given', () => {
    const alphabet = [
      'a',
      'div',
      ' ',
      '>',
      '+',
      '~',
      ',',
      '.',
      '#',
      '[',
      ']',
      '(',
      ')',
      ':',
      '::',
      '=',
      '"',
      "'",
      '\\',
      '*',
      '|',
      '^',
      '$',
      '!',
      '@',
      'nth-child',
      'has',
      'not',
      '\u0000',
      '💩',
      '-',
      '1',
    ]
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648)
    for (let i = 0; i < 3000; i++) {
      let selector = ''
      for (let n = next() % 9; n >= 0; n--) selector += alphabet[next() % alphabet.length]
      const problem = selectorProblem(selector)
      expect(problem === null || typeof problem === 'string').toBe(true)
    }
    expect(selectorProblem(':not('.repeat(150) + 'a' + ')'.repeat(150))).toBeNull()
    expect(selectorProblem(42 as never)).toBe('must be a string')
  })
})

const fieldErrors = (check: (errors: FieldErrors) => void) => {
  const errors = new FieldErrors()
  check(errors)
  try {
    errors.throwIfAny()
    return []
  } catch (err) {
    return (err as ValidationError).fields
  }
}

describe('checkFields and checkDataMap', () => {
  test('report every problem with its path, nested ones included', () => {
    const fields = [
      { name: 'title', selector: 'h1[' },
      { name: 'title', selector: 'h2' },
      {
        name: 'author',
        selector: '.byline',
        type: 'number',
        fields: [
          { name: 'name', selector: 'a' },
          { name: 'url', selector: 'a >', attr: 'href' },
        ],
      },
    ]
    expect(fieldErrors((e) => checkDataMap({ item_selector: 'li..x', fields }, 'map', e))).toEqual([
      { field: 'map.item_selector', errors: [invalid('".x" is not a class name')] },
      { field: 'map.fields[0].selector', errors: [invalid('expected a name, found the end of the selector')] },
      { field: 'map.fields[1].name', errors: ['repeats the name of map.fields[0]'] },
      { field: 'map.fields[2].type', errors: ['must not be set on a field with nested fields'] },
      { field: 'map.fields[2].fields[1].selector', errors: [invalid('ends with the combinator ">"')] },
    ])
  })

  test('a sound definition passes; the same name at different levels is fine', () => {
    const fields = [
      { name: 'name', selector: 'h1' },
      { name: 'author', selector: '.byline', fields: [{ name: 'name', selector: 'a' }] },
    ]
    expect(fieldErrors((e) => checkDataMap({ fields, item_selector: 'article' }, 'map', e))).toEqual([])
  })

  test('nesting deeper than 8 levels and more than 1000 fields are refused', () => {
    let deep: Record<string, unknown> = { name: 'leaf', selector: 'b' }
    for (let i = 0; i < 9; i++) deep = { name: `n${i}`, selector: 'div', fields: [deep] }
    const errors = fieldErrors((e) => checkFields([deep], 'fields', e))
    expect(errors).toEqual([{ field: `fields[0]${'.fields[0]'.repeat(7)}.fields`, errors: ['must not nest deeper than 8 levels'] }])

    const wide = Array.from({ length: 11 }, (_, i) => ({ name: `g${i}`, selector: 'div', fields: Array.from({ length: 100 }, (_, j) => ({ name: `f${j}`, selector: 'p' })) }))
    expect(fieldErrors((e) => checkFields(wide, 'fields', e))).toEqual([{ field: 'fields[9].fields[90]', errors: ['a definition may hold at most 1000 fields in all'] }])
  })

  test('shapes it cannot trust are skipped, not thrown on', () => {
    for (const junk of [null, 42, 'fields', [null, 3, 'x', { selector: 7 }, { fields: 'no' }], { fields: { 0: {} } }]) {
      expect(fieldErrors((e) => checkFields(junk, 'fields', e))).toEqual([])
      expect(fieldErrors((e) => checkDataMap(junk, 'map', e))).toEqual([])
    }
  })
})
