import { describe, expect, test } from 'bun:test'
import { RE2JS } from 're2js'
import { categorize, checkPatternDef, compilePatterns, patternProblem, resolvePath, type PatternFormat } from '../../src/extract/patterns'
import { compileUrlPattern } from '../../src/extract/url-pattern'
import { estimateProgramSize, RE2_BUDGET } from '../../src/util/re2'
import { FieldErrors, ValidationError } from '../../src/core/errors'

/** Whether `pattern` matches `path` resolved against https://a.com/, the way the match route does it. */
const matches = (format: PatternFormat, pattern: string, path: string) => compilePatterns({ format, patterns: [pattern] })(resolvePath(path, 'a.com')!).length > 0

describe('url_pattern matching', () => {
  test.each([
    // pathname patterns (start with /): any scheme, host, port, query and fragment
    ['/p/:id', '/p/1', true],
    ['/p/:id', '/p/1/', false], // a trailing slash is one more segment
    ['/p/:id', '/p', false],
    ['/p/:id', '/p/1?x=2', true], // any query
    ['/p/:id', '/p/1#top', true], // any fragment (the match route drops it anyway)
    ['/p/:id', 'https://a.com:8443/p/1', true], // any port
    ['/p/:id', 'http://other.example/p/1', true], // any host: a set is only ever asked about its own host's URLs
    ['/p/:id{/}?', '/p/1', true],
    ['/p/:id{/}?', '/p/1/', true],
    ['/p/*', '/p', false],
    ['/p/*', '/p/', true],
    ['/p/*', '/p/1/2', true],
    ['/p/:id+', '/p/1/2', true],
    ['/p/:id*', '/p', true],
    ['/*.html', '/a/b.html', true],
    ['/*.html', '/a/b.htm', false],
    ['/P/*', '/p/x', false], // case-sensitive
    ['/p/:id(\\d+)', '/p/12', true],
    ['/p/:id(\\d+)', '/p/ab', false],
    ['/:section/:id(\\d+)-:slug', '/news/12-hello-world', true],
    ['/:section/:id(\\d+)-:slug', '/news/ab-hello', false],
    ['/x/(foo|bar)/*', '/x/bar/1', true],
    // encoded characters: the pattern is percent-encoded like the URL's path, escapes compared as written
    ['/café', '/café', true],
    ['/café', '/caf%C3%A9', true],
    ['/caf%C3%A9', '/café', true],
    ['/caf%c3%a9', '/café', false], // URL serializes %C3%A9; a lowercase escape stays lowercase
    ['/p/:name', '/p/café', true], // a segment matches its encoded form
    ['/a b', '/a%20b', true],
    ['/a b', '/a b', true],
    ['/a%2Fb', '/a%2Fb', true],
    ['/a%2Fb', '/a/b', false], // an encoded slash is not a slash
    // full URL patterns: a component left unwritten after the path (query, fragment) is a wildcard;
    // the port is not: unwritten means the default port only
    ['https://a.com/p/*', '/p/1', true],
    ['https://a.com/p/*', '/p/1?x=2', true],
    ['https://a.com/p/*', 'https://a.com:443/p/1', true], // the default port is dropped by URL
    ['https://a.com/p/*', 'https://a.com:8443/p/1', false],
    ['https://a.com:8443/p/*', 'https://a.com:8443/p/1', true],
    ['https://a.com:8443/p/*', '/p/1', false],
    ['https://a.com/p/*', 'http://a.com/p/1', false],
    ['http{s}?://a.com/p/*', 'http://a.com/p/1', true],
    ['*://a.com/p/*', 'http://a.com/p/1', true],
    ['https://A.COM/p/*', 'https://a.com/p/1', true], // the host is canonicalized (lowercase, punycode)
    ['https://a.com/p/*', 'https://A.COM/p/1', true],
    ['https://bücher.example/café', 'https://xn--bcher-kva.example/caf%C3%A9', true],
    ['https://*.a.com/*', 'https://b.a.com/x', true],
    ['https://*.a.com/*', 'https://a.com/x', false],
    ['https://{*.}?a.com/*', 'https://a.com/x', true],
    ['https://a.com/p', 'https://a.com/p/', false], // trailing slash
    ['https://a.com/p{/}?', 'https://a.com/p/', true],
    // query strings: written after the path, the query must match in full
    ['https://a.com/p?x=1', '/p?x=1', true],
    ['https://a.com/p?x=1', '/p?x=2', false],
    ['https://a.com/p?x=1', '/p', false],
    ['https://a.com/p?x=1', '/p?x=1&y=2', false],
    ['https://a.com/p?x=:v', '/p?x=1&y=2', true], // a named group in the query takes the rest
    ['https://a.com/p/*\\?x=:v', '/p/1?x=2', true], // after * a ? is a modifier, so escape it
    ['https://a.com/p/*?x=:v', '/p/1?x=2', false], // …unescaped it made `*` optional, and x=:v path text
    ['https://a.com/p/:id?x=1', '/p/1?x=1', false], // same: `:id?` is an optional segment
    ['https://a.com/search?q=*', '/search?q=shoes&page=2', true],
    // URLs are judged without their fragment (as parse's category guard judges them), so a written
    // fragment never matches
    ['https://a.com/p#top', '/p#top', false],
    ['https://a.com/p#top', '/p', false],
    ['https://a.com/p', '/p#top', true],
  ])('%s against %s is %p', (pattern, path, expected) => {
    expect(matches('url_pattern', pattern, path)).toBe(expected)
  })

  // Our RE2 compilation must agree with the standard; Bun's own URLPattern is the reference.
  test('agrees with Bun URLPattern on every pattern x URL pair of a table', () => {
    const patterns = [
      '/p/:id',
      '/p/:id{/}?',
      '/p/*',
      '/café',
      '/caf%c3%a9',
      '/p/:id(\\d+)',
      '/:a/:id(\\d+)-:slug',
      '/p/:id+',
      '/p/:id*',
      '/p/:id?',
      '/a/{b}?',
      '/*.html',
      '/a b',
      '/a%2Fb',
      '/',
      '/{:x}*',
      '/p{/:a}+',
      'https://a.com/p/*',
      'https://a.com:8443/p/*',
      'https://a.com/p?x=1',
      'https://a.com/p/:id?x=1',
      'https://a.com/p/*\\?x=:v',
      'http{s}?://*.a.com/:x(\\d+)',
      '*://a.com/*',
      'https://a.com/a\\:b/c',
      'https://a.com/p#frag',
      'https://a.com/p/*#:h',
      'https://:sub.a.com/*',
      'https://{*.}?a.com/*',
      'https://a.com/products/:id([0-9]+){.html}?',
      'https://user:pw@a.com/*',
      'https://a.com/p/(.*)',
      '/x/(foo|bar)/:rest*',
    ]
    const urls = [
      'https://a.com/p/1',
      'https://a.com/p/1/',
      'https://a.com/p',
      'https://a.com/p/',
      'https://a.com/p/1?x=2',
      'https://a.com/p?x=1',
      'https://a.com/caf%C3%A9',
      'https://a.com/p/12',
      'https://a.com/news/12-hello',
      'https://a.com/p/1/2/3',
      'https://a.com/a',
      'https://a.com/a/b',
      'https://a.com/x/y.html',
      'https://a.com/a%20b',
      'https://a.com/a%2Fb',
      'https://a.com/',
      'https://a.com:8443/p/1',
      'http://a.com/p/1',
      'http://b.a.com/12',
      'https://b.a.com/12',
      'https://a.com/a:b/c',
      'https://a.com/p#frag',
      'https://b.c.a.com/x',
      'https://a.com/products/42',
      'https://a.com/products/42.html',
      'https://user:pw@a.com/x',
      'https://a.com/x/foo/1/2',
      'https://a.com/x/baz/1',
      'https://A.COM/P/1',
    ]
    const disagreements: string[] = []
    for (const p of patterns) {
      const ours = compileUrlPattern(p)
      const reference = p.startsWith('/') ? new URLPattern({ pathname: p }) : new URLPattern(p)
      for (const u of urls) if (ours(new URL(u)) !== reference.test(u)) disagreements.push(`${p} ${u}`)
    }
    expect(disagreements).toEqual([])
  })

  test('patterns that make a backtracking engine run for minutes answer correctly', () => {
    // Bun's URLPattern took 1 s on the first of these with a 300-character path.
    const stars = `/${'*a'.repeat(30)}b`
    expect(matches('url_pattern', stars, `/${'a'.repeat(5000)}`)).toBe(false)
    expect(matches('url_pattern', stars, `/${'a'.repeat(5000)}b`)).toBe(true)
    expect(matches('url_pattern', '/(\\w+\\w+\\w+\\w+\\w+\\w+b)', `/${'a'.repeat(5000)}`)).toBe(false)
  })
})

describe('regex matching: RE2, searched anywhere in the URL as WHATWG URL serializes it', () => {
  test.each([
    ['^https://a\\.com/p/\\d+$', '/p/12', true],
    ['^https://a\\.com/p/\\d+$', '/p/12/', false], // trailing slash
    ['^https://a\\.com/p/\\d+$', '/p/12?x=1', false], // the query is part of the URL
    ['^https://a\\.com/p/\\d+$', 'https://a.com:443/p/12', true], // default port dropped
    ['^https://a\\.com/p/\\d+$', 'https://a.com:8443/p/12', false],
    [':8443/', 'https://a.com:8443/p/12', true],
    ['/p/\\d+', '/p/12?x=1', true], // unanchored: found anywhere
    ['/p/\\d+', '/x/p/12', true],
    ['[?&]page=\\d+', '/list?sort=a&page=2', true],
    ['[?&]page=\\d+', '/list/page=2', false],
    ['/p/$', '/p/', true],
    ['/p/$', '/p', false],
    ['café', '/café', false], // the URL holds caf%C3%A9
    ['caf%C3%A9', '/café', true],
    ['/a%20b', '/a b', true],
    ['/P/', '/p/', false], // case-sensitive…
    ['(?i)/P/', '/p/', true], // …unless asked
    ['#top$', '/p#top', false], // the fragment is dropped, as parse's category guard drops it
    ['/p$', '/p#top', true],
    ['^https://A\\.COM/', 'https://A.COM/', false], // the host is lowercased first
  ])('%s against %s is %p', (pattern, path, expected) => {
    expect(matches('regex', pattern, path)).toBe(expected)
  })

  test('a catastrophic regex runs in linear time and answers correctly', () => {
    const long = `https://a.com/${'a'.repeat(100_000)}`
    expect(compilePatterns({ format: 'regex', patterns: ['(a+)+$'] })(`${long}!`)).toEqual([])
    expect(compilePatterns({ format: 'regex', patterns: ['(a+)+$'] })(long)).toEqual(['(a+)+$'])
    expect(compilePatterns({ format: 'regex', patterns: ['^https://a\\.com/(a|a)*b'] })(long)).toEqual([])
  })
})

describe('size budget: each pattern compiles to at most RE2_BUDGET instructions', () => {
  const tooLarge = (size: number) => `is too large: it compiles to about ${size} RE2 instructions, more than the 1000 a pattern may use (a repetition such as x{n} counts x n times)`

  test('ordinary patterns pass with room to spare', () => {
    expect(RE2_BUDGET).toBe(1000)
    for (const p of [
      '^https://shop\\.example/p/\\d+(\\?.*)?$',
      '/blog/\\d{4}/\\d{2}/[^/]+/?$',
      '/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}',
      '[a-z0-9-]{1,255}',
      '(?i)/(?:p|product|item)/[^/?#]{1,120}',
    ])
      expect(patternProblem('regex', p)).toBeNull()
    for (const p of ['/p/:id(\\d+)', '/:section/:id(\\d+)-:slug', 'http{s}?://*.a.com/:lang(en|de|fr)/products/:slug([a-z0-9\\-]+)-:id(\\d+){.html}?', '/p/:id(\\d{1,200})'])
      expect(patternProblem('url_pattern', p)).toBeNull()
  })

  test.each([
    ['regex', '.{998}', null], // 998 + match + fail: exactly 1000
    ['regex', '.{999}', tooLarge(1001)],
    ['regex', '.{1000}.{1000}', tooLarge(2002)],
    ['regex', '(?:a?){500}a{500}', tooLarge(1502)],
    ['regex', '.{1000}'.repeat(292), tooLarge(292002)], // rejected from an estimate, without compiling
    ['regex', '(a{1000}){1000}', tooLarge(1002002)], // RE2 would refuse it too
    ['url_pattern', '/:a(\\d{450})', null],
    // the budget holds for the entry as a whole: here two path groups of about 600 each
    ['url_pattern', '/:a(\\d{600})/:b(\\d{600})', tooLarge(1206)],
    ['url_pattern', 'https://(\\w{900}).a.com/:b(\\d{200})', tooLarge(1128)],
    ['url_pattern', `/:a(${'\\d{1000}'.repeat(200)})`, expect.stringMatching(/^is too large: it compiles to about 2000\d+ RE2 instructions/)],
  ] as const)('%s %s', (format, source, problem) => {
    expect(patternProblem(format, source)).toEqual(problem)
  })

  test('rejecting a full set of the largest patterns is quick', () => {
    // each took 230 ms to compile (and 2 s to search an 8 KB URL) before the budget
    const started = performance.now()
    const errors = new FieldErrors()
    checkPatternDef({ format: 'regex', patterns: Array.from({ length: 100 }, (_, i) => `${'.{1000}'.repeat(290)}${i}`) }, 'patterns', errors)
    checkPatternDef({ format: 'url_pattern', patterns: Array.from({ length: 100 }, (_, i) => `/:a(${'\\d{1000}'.repeat(200)})${i}`) }, 'patterns', errors)
    expect(performance.now() - started).toBeLessThan(1000)
    expect(() => errors.throwIfAny()).toThrow(ValidationError)
  })

  test('a stored pattern over the budget matches nothing instead of throwing', () => {
    expect(compilePatterns({ format: 'regex', patterns: ['.{2000}', '/x'] })(`https://a.com/x${'a'.repeat(3000)}`)).toEqual(['/x'])
  })

  test('the estimate never counts less than RE2 and rarely much more', () => {
    const sources = [
      '^https://',
      '(?:a|b|c){100}',
      '(a|b|[c-e]|\\d){50}',
      '(?:^|$){300}',
      '(?:ab|c){100}',
      '(?:.|\\n){500}',
      '\\Qa.b{3}\\E{3}',
      '[]a{3}]{3}',
      '[[:alpha:]{]{3}',
      '\\x{41}{3}\\p{Greek}{3}\\pL{3}\\x41{3}',
      '(?P<n>x){3}(?<m>y){3}(?i:z){3}(?i)w{3}',
      'a{2,}b{0,}c{2,5}?d*?e+?f??',
      '😀{3}é{3}',
      '(?:(?:(?:a{10}){10}){10})',
      '^https://(?:www\\.)?shop\\.example/(?:en|de|fr|it)/(?:products|produkte|produits)/[a-z0-9-]+-\\d{5,8}(?:\\.html)?$',
    ]
    for (const source of sources) {
      const real = RE2JS.compile(source).programSize()
      const estimate = estimateProgramSize(source)
      expect({ source, ok: estimate >= real && estimate <= 2.5 * real }).toEqual({ source, ok: true })
    }
  })
})

describe('compilePatterns', () => {
  test('answers every matching pattern, in definition order', () => {
    const match = compilePatterns({ format: 'url_pattern', patterns: ['/p/*', '/q/*', '/p/:id', 'https://a.com/*'] })
    expect(match('https://a.com/p/1')).toEqual(['/p/*', '/p/:id', 'https://a.com/*'])
    expect(match('https://b.com/q/1')).toEqual(['/q/*'])
    expect(match('https://b.com/')).toEqual([])
    expect(match('not a url')).toEqual([])
  })

  test('is cached per definition, so classifying many URLs compiles once', () => {
    const a = compilePatterns({ format: 'regex', patterns: ['x', 'y'] })
    expect(compilePatterns({ format: 'regex', patterns: ['x', 'y'] })).toBe(a)
    expect(compilePatterns({ format: 'regex', patterns: ['y', 'x'] })).not.toBe(a)
    expect(compilePatterns({ format: 'url_pattern', patterns: ['x', 'y'] })).not.toBe(a)
  })

  test('a stored pattern that does not compile matches nothing instead of throwing', () => {
    expect(compilePatterns({ format: 'regex', patterns: ['(', '/x'] })('https://a.com/x')).toEqual(['/x'])
    expect(compilePatterns({ format: 'url_pattern', patterns: ['no-base/*', '/x'] })('https://a.com/x')).toEqual(['/x'])
  })
})

describe('categorize', () => {
  const sets = [
    { category: 'products', patterns: { format: 'url_pattern' as const, patterns: ['/p/:id'] } },
    { category: 'articles', patterns: { format: 'regex' as const, patterns: ['/p/', '/blog/'] } },
  ]
  test('the first set with a matching pattern wins; null when none matches', () => {
    expect(categorize('https://a.com/p/1', sets)).toBe('products')
    expect(categorize('https://a.com/p/1', [...sets].reverse())).toBe('articles')
    expect(categorize('https://a.com/blog/x', sets)).toBe('articles')
    expect(categorize('https://a.com/about', sets)).toBeNull()
    expect(categorize('https://a.com/p/1', [])).toBeNull()
  })
})

describe('patternProblem', () => {
  test.each([
    ['regex', '^/p/\\d+$', null],
    ['regex', '(', 'is not a valid RE2 regular expression: error parsing regexp: missing closing ): `(`'],
    ['regex', 'a(?=b)', 'is not a valid RE2 regular expression: error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
    ['regex', '(a)\\1', 'is not a valid RE2 regular expression: error parsing regexp: invalid escape sequence: `\\1`'],
    ['url_pattern', '/p/:id', null],
    ['url_pattern', 'https://a.com/p/*', null],
    ['url_pattern', '/p/(', 'is not a valid URL pattern: Current open token does not have a corresponding close token.'],
    ['url_pattern', '/search?q=1', 'is not a valid URL pattern: Null token was produced when consuming a required token.'],
    [
      'url_pattern',
      'a.com/p/*',
      'is not a valid URL pattern: Relative constructor string must have additional baseURL argument. (start with / for a path pattern, or write a full URL pattern such as https://example.com/products/:id)',
    ],
    // JavaScript accepts the lookahead, RE2 (which runs the match) does not
    ['url_pattern', '/p/:id(\\d+(?=x))', 'is not a valid URL pattern: a regexp group is not valid RE2 syntax (error parsing regexp: invalid or unsupported Perl syntax: `(?=`)'],
  ] as const)('%s %s', (format, source, problem) => {
    expect(patternProblem(format, source)).toBe(problem)
  })

  test('checkPatternDef names each bad pattern by index and trusts no shape', () => {
    const errors = new FieldErrors()
    checkPatternDef({ format: 'regex', patterns: ['ok', 7, '(', 'fine', '['] }, 'patterns', errors)
    checkPatternDef({ format: 'nope', patterns: ['('] }, 'x', errors)
    checkPatternDef('not an object', 'y', errors)
    checkPatternDef({ format: 'url_pattern', patterns: 'not a list' }, 'z', errors)
    expect(() => errors.throwIfAny()).toThrow(ValidationError)
    try {
      errors.throwIfAny()
    } catch (err) {
      expect((err as ValidationError).fields.map((f) => f.field)).toEqual(['patterns.patterns[2]', 'patterns.patterns[4]'])
    }
  })
})

describe('resolvePath', () => {
  test.each([
    ['/p/1', 'https://a.com/p/1'],
    ['p/1', 'https://a.com/p/1'],
    ['?x=1', 'https://a.com/?x=1'],
    ['/p/../q', 'https://a.com/q'],
    ['//b.com/x', 'https://b.com/x'],
    ['/p/1#top', 'https://a.com/p/1'], // without the fragment
    ['/p/1#', 'https://a.com/p/1'],
    ['?x=1#a?b', 'https://a.com/?x=1'],
    ['http://b.com:8080/x', 'http://b.com:8080/x'],
    ['mailto:a@b.com', null],
    ['javascript:alert(1)', null],
    ['https://', null],
  ])('%s → %s', (path, url) => {
    expect(resolvePath(path, 'a.com')).toBe(url)
  })
})
