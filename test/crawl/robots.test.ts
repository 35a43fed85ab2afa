import { describe, expect, test } from 'bun:test'
import { MAX_CRAWL_DELAY_MS, MAX_ROBOTS_BYTES, parseRobots, robotsFromStatus } from '../../src/crawl/robots'

const UA = 'trawl/0.1.0 (+https://trawl.example/bot)'

/** Rules for `trawl` in a file holding one group for it. */
const rulesOf = (...lines: string[]) => parseRobots(['User-agent: trawl', ...lines].join('\n')).forAgent(UA)

describe('RFC 9309 §5.1 example', () => {
  const robots = parseRobots(
    [
      'User-Agent: *',
      'Disallow: *.gif$',
      'Disallow: /example/',
      'Allow: /publications/',
      '',
      'User-Agent: foobot',
      'Disallow:/',
      'Allow:/example/page.html',
      'Allow:/example/allowed.gif',
      '',
      'User-Agent: barbot',
      'User-Agent: bazbot',
      'Disallow: /example/page.html',
      '',
      'User-Agent: quxbot',
      '',
      'EOF',
    ].join('\n'),
  )

  test('foobot', () => {
    const foobot = robots.forAgent('foobot')
    expect(foobot.allowed('/example/page.html')).toBe(true)
    expect(foobot.allowed('/example/allowed.gif')).toBe(true)
    expect(foobot.allowed('/example/disallowed.gif')).toBe(false)
    expect(foobot.allowed('/publications/')).toBe(false)
  })

  test('barbot and bazbot share a group', () => {
    for (const agent of ['barbot', 'bazbot/1.2']) {
      const rules = robots.forAgent(agent)
      expect(rules.allowed('/example/page.html')).toBe(false)
      expect(rules.allowed('/example/other.html')).toBe(true)
      expect(rules.allowed('/x.gif')).toBe(true)
    }
  })

  test('quxbot has an empty group: everything allowed, no fallback to *', () => {
    const quxbot = robots.forAgent('quxbot')
    expect(quxbot.allowed('/example/')).toBe(true)
    expect(quxbot.allowed('/a.gif')).toBe(true)
  })

  test('any other agent falls back to *', () => {
    const other = robots.forAgent(UA)
    expect(other.allowed('/a/b.gif')).toBe(false)
    expect(other.allowed('/a/b.gif?x')).toBe(true)
    expect(other.allowed('/example/')).toBe(false)
    expect(other.allowed('/example/x')).toBe(false)
    expect(other.allowed('/publications/')).toBe(true)
    expect(other.allowed('/elsewhere')).toBe(true)
  })
})

describe('precedence', () => {
  test('RFC 9309 §2.2.2: the most specific (longest) rule wins', () => {
    const rules = rulesOf('Allow: /example/page/', 'Disallow: /example/page/disallowed.gif')
    expect(rules.allowed('/example/page/')).toBe(true)
    expect(rules.allowed('/example/page/disallowed.gif')).toBe(false)
    expect(rules.allowed('/example/page/other.gif')).toBe(true)
  })

  // Google's documented examples (developers.google.com/search/docs/crawling-indexing/robots/robots_txt).
  test.each([
    ['/page', ['allow: /p', 'disallow: /'], true],
    ['/folder/page', ['allow: /folder', 'disallow: /folder'], true],
    ['/page.htm', ['allow: /page', 'disallow: /*.htm'], false],
    ['/', ['allow: /$', 'disallow: /'], true],
    ['/page.htm', ['allow: /$', 'disallow: /'], false],
  ] as const)('%s with %j', (path, lines, expected) => {
    expect(rulesOf(...lines).allowed(path)).toBe(expected)
  })

  test('Allow wins a tie whatever the order of lines', () => {
    expect(rulesOf('Disallow: /a', 'Allow: /a').allowed('/a/b')).toBe(true)
    expect(rulesOf('Allow: /a', 'Disallow: /a').allowed('/a/b')).toBe(true)
  })

  test('no matching rule allows; an empty Disallow allows everything', () => {
    expect(rulesOf('Disallow: /private').allowed('/public')).toBe(true)
    expect(rulesOf('Disallow:').allowed('/anything')).toBe(true)
    expect(rulesOf().allowed('/anything')).toBe(true)
  })
})

describe('wildcards and anchors (Google examples)', () => {
  const check = (pattern: string, yes: string[], no: string[]) => {
    const rules = rulesOf(`Disallow: ${pattern}`)
    for (const path of yes) expect([path, rules.allowed(path)]).toEqual([path, false])
    for (const path of no) expect([path, rules.allowed(path)]).toEqual([path, true])
  }

  test('/fish*', () =>
    check('/fish*', ['/fish', '/fish.html', '/fish/salmon.html', '/fishheads', '/fishheads/yummy.html', '/fish.php?id=anything'], ['/Fish.asp', '/catfish', '/?id=fish', '/desert/fish']))

  test('/fish/', () => check('/fish/', ['/fish/', '/fish/?id=anything', '/fish/salmon.htm'], ['/fish', '/fish.html', '/animals/fish/', '/Fish/Salmon.asp']))

  test('/*.php', () =>
    check('/*.php', ['/index.php', '/filename.php', '/folder/filename.php', '/folder/filename.php?parameters', '/folder/any.php.file.html', '/filename.php/'], ['/', '/windows.PHP']))

  test('/*.php$', () => check('/*.php$', ['/filename.php', '/folder/filename.php'], ['/filename.php?parameters', '/filename.php/', '/filename.php5', '/windows.PHP']))

  test('/fish*.php', () => check('/fish*.php', ['/fish.php', '/fishheads/catfish.php?parameters'], ['/Fish.PHP']))

  test('/$ matches the root only; / and /* match everything', () => {
    check('/$', ['/'], ['/index.html', '/?a=b'])
    check('/', ['/', '/a', '/a/b?c'], [])
    check('/*', ['/', '/a', '/a/b?c'], [])
  })

  test('RFC 9309 §2.2.3 special characters', () => {
    check('/this/*/exactly', ['/this/is/exactly', '/this/a/b/exactly/more'], ['/this/exactly'])
    check('/this/path/exactly$', ['/this/path/exactly'], ['/this/path/exactly/', '/this/path/exactly?x'])
    expect(rulesOf('Disallow: / # comment in line').allowed('/x')).toBe(false)
  })

  test('$ is literal except at the end; repeated * act as one', () => {
    check('/a$b', ['/a$b', '/a$bc'], ['/a', '/ab'])
    check('/a**b', ['/ab', '/a/x/b'], ['/a'])
  })

  test('a pattern without a leading slash is read from the root', () => {
    check('private', ['/private/x'], ['/x/private'])
  })
})

describe('groups', () => {
  test('product token of the UA, case-insensitive, against the file token', () => {
    const robots = parseRobots('User-agent: Trawl/2.0 extra words\nDisallow: /t\n\nUser-agent: *\nDisallow: /s\n')
    for (const ua of ['trawl', 'TRAWL/0.1.0', UA]) {
      expect(robots.forAgent(ua).allowed('/t')).toBe(false)
      expect(robots.forAgent(ua).allowed('/s')).toBe(true)
    }
    expect(robots.forAgent('trawler/1.0').allowed('/s')).toBe(false)
    expect(robots.forAgent('Mozilla/5.0 (compatible; trawl/0.1)').allowed('/s')).toBe(false)
  })

  test('groups naming the same agent are merged', () => {
    const rules = parseRobots(['User-agent: trawl', 'Disallow: /a', '', 'User-agent: other', 'Disallow: /b', '', 'User-agent: TRAWL', 'Disallow: /c'].join('\n')).forAgent(UA)
    expect(rules.allowed('/a')).toBe(false)
    expect(rules.allowed('/b')).toBe(true)
    expect(rules.allowed('/c')).toBe(false)
  })

  test('a specific group replaces * instead of adding to it', () => {
    const rules = parseRobots('User-agent: *\nDisallow: /\n\nUser-agent: trawl\nDisallow: /private\n').forAgent(UA)
    expect(rules.allowed('/public')).toBe(true)
    expect(rules.allowed('/private')).toBe(false)
  })

  test('blank lines do not end a group; a user-agent line after rules starts a new one', () => {
    const robots = parseRobots('User-agent: a\n\nUser-agent: b\n\nDisallow: /x\nUser-agent: c\nDisallow: /y\n')
    expect(robots.forAgent('a').allowed('/x')).toBe(false)
    expect(robots.forAgent('b').allowed('/x')).toBe(false)
    expect(robots.forAgent('c').allowed('/x')).toBe(true)
    expect(robots.forAgent('c').allowed('/y')).toBe(false)
  })

  test('rules before any user-agent line are ignored', () => {
    expect(parseRobots('Disallow: /\nUser-agent: *\nDisallow: /x\n').forAgent(UA).allowed('/y')).toBe(true)
  })

  test('no group for the agent and no * group allows everything', () => {
    const rules = parseRobots('User-agent: other\nDisallow: /\n').forAgent(UA)
    expect(rules.allowed('/anything')).toBe(true)
    expect(rules.crawlDelayMs).toBeNull()
    expect(parseRobots('').forAgent(UA).allowed('/')).toBe(true)
  })

  test('an empty or odd UA string uses *', () => {
    const robots = parseRobots('User-agent: *\nDisallow: /x\n')
    expect(robots.forAgent('').allowed('/x')).toBe(false)
    expect(robots.forAgent('/1.0').allowed('/x')).toBe(false)
  })
})

describe('syntax', () => {
  test('directives are case-insensitive, paths are not', () => {
    const rules = parseRobots('USER-AGENT: TRAWL\nDISALLOW: /Private\nallow: /Private/ok\n').forAgent(UA)
    expect(rules.allowed('/Private/x')).toBe(false)
    expect(rules.allowed('/private/x')).toBe(true)
    expect(rules.allowed('/Private/ok')).toBe(true)
  })

  test('BOM, CRLF, CR, comments and blanks', () => {
    const text = '\uFEFFUser-agent: trawl # us\r\n# whole-line comment\r\n  Disallow :  /a  \r\nDisallow: /b\rDisallow: /c#not-part\n'
    const rules = parseRobots(text).forAgent(UA)
    for (const path of ['/a', '/b', '/c']) expect(rules.allowed(path)).toBe(false)
    expect(rules.allowed('/d')).toBe(true)
    expect(rules.allowed('/c#not-part')).toBe(false)
  })

  test('a blank instead of a colon is accepted for two words only, like Google', () => {
    const rules = parseRobots('User-agent trawl\nDisallow /a\nDisallow /b and more\n').forAgent(UA)
    expect(rules.allowed('/a')).toBe(false)
    expect(rules.allowed('/b')).toBe(true)
  })

  test("Google's accepted misspellings", () => {
    const rules = parseRobots('useragent: trawl\ndisalow: /a\ndissallow: /b\nuser agent: x\n').forAgent(UA)
    expect(rules.allowed('/a')).toBe(false)
    expect(rules.allowed('/b')).toBe(false)
  })

  test('a key is taken by its beginning, as Google takes it', () => {
    const robots = parseRobots('User-agents: trawl\nDisallowed: /a\nDisallow-this: /b\nAllowance: /a/ok\nSitemaps: https://example.com/s.xml\n')
    const rules = robots.forAgent(UA)
    expect(rules.allowed('/a')).toBe(false)
    expect(rules.allowed('/b')).toBe(false)
    expect(rules.allowed('/a/ok')).toBe(true)
    expect(robots.sitemaps).toEqual(['https://example.com/s.xml'])
    // Crawl-delay is not Google's: only as written (or misspelt as Google misspells the others).
    expect(parseRobots('User-agent: *\nCrawl-delays: 5\n').forAgent(UA).crawlDelayMs).toBeNull()
    expect(parseRobots('User-agent: *\nCrawl-delay: 5\n').forAgent(UA).crawlDelayMs).toBe(5000)
    // A key that only begins like one of these words is still nothing else.
    expect(parseRobots('User-agent: *\nDis: /a\nAllo: /b\n').forAgent(UA).allowed('/a')).toBe(true)
  })

  test('unknown directives are ignored and do not split groups', () => {
    const robots = parseRobots('User-agent: a\nHost: example.com\nUser-agent: b\nDisallow: /x\n')
    expect(robots.forAgent('a').allowed('/x')).toBe(false)
    expect(robots.forAgent('b').allowed('/x')).toBe(false)
  })
})

describe('percent-encoding (RFC 9309 §2.2.2)', () => {
  test('a non-ASCII pattern matches its UTF-8 escape, and back', () => {
    expect(rulesOf('Disallow: /foo/bar/ツ').allowed('/foo/bar/%E3%83%84')).toBe(false)
    expect(rulesOf('Disallow: /foo/bar/%E3%83%84').allowed('/foo/bar/ツ')).toBe(false)
    expect(rulesOf('Disallow: /foo/bar/%e3%83%84').allowed('/foo/bar/%E3%83%84')).toBe(false)
  })

  test('escaped unreserved characters equal the characters', () => {
    expect(rulesOf('Disallow: /foo/bar/%62%61%7A').allowed('/foo/bar/baz')).toBe(false)
    expect(rulesOf('Disallow: /foo/bar/baz').allowed('/foo/bar/%62%61%7a')).toBe(false)
    expect(rulesOf('Disallow: /~user').allowed('/%7Euser/x')).toBe(false)
  })

  test('escaped reserved characters stay distinct from the characters', () => {
    expect(rulesOf('Disallow: /a/b').allowed('/a%2Fb')).toBe(true)
    expect(rulesOf('Disallow: /a%2fb').allowed('/a%2Fb')).toBe(false)
  })

  test('queries are part of the match', () => {
    const rules = rulesOf('Disallow: /*?sessionid=', 'Disallow: /search?q=')
    expect(rules.allowed('/p?sessionid=1')).toBe(false)
    expect(rules.allowed('/search?q=x')).toBe(false)
    expect(rules.allowed('/search')).toBe(true)
    expect(rules.allowed('/foo/bar?baz=quz')).toBe(true)
  })
})

describe('/robots.txt', () => {
  test('is always allowed', () => {
    expect(rulesOf('Disallow: /').allowed('/robots.txt')).toBe(true)
    expect(rulesOf('Disallow: /').allowed('/robots.txt.bak')).toBe(false)
    expect(robotsFromStatus(503).forAgent(UA).allowed('/robots.txt')).toBe(true)
  })
})

describe('Crawl-delay', () => {
  test.each([
    ['10', 10_000],
    ['0.5', 500],
    ['.25', 250],
    ['0', 0],
    ['3600', MAX_CRAWL_DELAY_MS],
  ])('%s seconds', (value, ms) => {
    expect(rulesOf(`Crawl-delay: ${value}`).crawlDelayMs).toBe(ms)
  })

  test.each(['abc', '-1', '', '1e3', '5s'])('ignores %p', (value) => {
    expect(rulesOf(`Crawl-delay: ${value}`).crawlDelayMs).toBeNull()
  })

  test('belongs to its group; merged groups keep the longest', () => {
    const robots = parseRobots('User-agent: *\nCrawl-delay: 5\n\nUser-agent: trawl\nCrawl-delay: 1\nUser-agent: trawl\nCrawl-delay: 2\n')
    expect(robots.forAgent(UA).crawlDelayMs).toBe(2000)
    expect(robots.forAgent('other').crawlDelayMs).toBe(5000)
    expect(parseRobots('User-agent: other\nCrawl-delay: 5\n').forAgent(UA).crawlDelayMs).toBeNull()
  })

  test('a crawl-delay line ends the user-agent lines of its group', () => {
    const robots = parseRobots('User-agent: a\nCrawl-delay: 3\nUser-agent: b\nDisallow: /x\n')
    expect(robots.forAgent('a').allowed('/x')).toBe(true)
    expect(robots.forAgent('b').crawlDelayMs).toBeNull()
  })
})

describe('Sitemap lines', () => {
  test('absolute http(s) URLs from anywhere in the file, deduplicated', () => {
    const robots = parseRobots(
      [
        'Sitemap: https://example.com/sitemap.xml',
        'User-agent: other',
        'Disallow: /',
        'sitemap: http://example.com/news.xml.gz # comment',
        'Site-map: https://example.com/sitemap.xml',
        'Sitemap: /relative.xml',
        'Sitemap: ftp://example.com/x.xml',
        'User-agent: *',
        'Sitemap: https://cdn.example.com/maps/index.xml',
      ].join('\n'),
    )
    expect(robots.sitemaps).toEqual(['https://example.com/sitemap.xml', 'http://example.com/news.xml.gz', 'https://cdn.example.com/maps/index.xml'])
    // A Sitemap line between user-agent lines does not split their group.
    expect(parseRobots('User-agent: a\nSitemap: https://e.com/s.xml\nUser-agent: b\nDisallow: /\n').forAgent('a').allowed('/x')).toBe(false)
  })
})

describe('robotsFromStatus (RFC 9309 §2.3.1)', () => {
  test('2xx parses the body', () => {
    const robots = robotsFromStatus(200, 'User-agent: *\nDisallow: /x\nSitemap: https://e.com/s.xml')
    expect(robots.source).toBe('file')
    expect(robots.forAgent(UA).allowed('/x')).toBe(false)
    expect(robots.forAgent(UA).allowed('/y')).toBe(true)
    expect(robots.sitemaps).toEqual(['https://e.com/s.xml'])
    expect(robotsFromStatus(204).forAgent(UA).allowed('/x')).toBe(true)
  })

  test.each([400, 401, 403, 404, 410, 451, 301, 302])('%d allows everything', (status) => {
    const robots = robotsFromStatus(status, 'User-agent: *\nDisallow: /')
    expect(robots.source).toBe('allow_all')
    expect(robots.forAgent(UA).allowed('/anything')).toBe(true)
  })

  test.each([500, 502, 503, 504, 429, 'unreachable'] as const)('%p disallows everything', (status) => {
    const robots = robotsFromStatus(status)
    expect(robots.source).toBe('disallow_all')
    expect(robots.forAgent(UA).allowed('/')).toBe(false)
    expect(robots.forAgent(UA).allowed('/anything?x=1')).toBe(false)
    expect(robots.sitemaps).toEqual([])
  })
})

describe('bounds', () => {
  test(`a 1 MB file is read up to ${MAX_ROBOTS_BYTES} bytes, the cut line dropped`, () => {
    const head = 'User-agent: *\nDisallow: /early\n'
    const filler = '# padding padding padding padding padding padding padding padding padding\n'
    let text = head
    while (text.length < MAX_ROBOTS_BYTES - 20) text += filler
    // This line straddles the cap: read in part it would be `Allow: /` or `Disallow: /ea`.
    text += 'Disallow: /early-but-cut-short-by-the-cap\n'
    while (text.length < 1024 * 1024) text += 'Disallow: /late\n'
    expect(text.length).toBeGreaterThan(MAX_ROBOTS_BYTES)
    const rules = parseRobots(text).forAgent(UA)
    expect(rules.allowed('/early')).toBe(false)
    expect(rules.allowed('/late')).toBe(true)
    expect(rules.allowed('/ea')).toBe(true)
    expect(rules.allowed('/early-but-cut-short-by-the-cap')).toBe(false) // by /early
  })

  test('the cap counts UTF-8 bytes, not characters', () => {
    const filler = `# ${'é'.repeat(1000)}\n`
    let text = 'User-agent: *\n'
    while (text.length < (MAX_ROBOTS_BYTES / 2) * 1.1) text += filler
    text += 'Disallow: /late\n'
    expect(parseRobots(text).forAgent(UA).allowed('/late')).toBe(true)
  })

  test('a pathological pattern answers in linear time', () => {
    const rules = rulesOf('Disallow: /*a*a*a*a*a*a*a*b', 'Disallow: /*aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab$')
    const path = `/${'a'.repeat(5000)}`
    const started = performance.now()
    for (let i = 0; i < 10; i++) expect(rules.allowed(path)).toBe(true)
    // A few ms here; backtracking would take seconds. The bound leaves room for a GC pause.
    expect(performance.now() - started).toBeLessThan(500)
    expect(rules.allowed(`${path}b`)).toBe(false)
  })

  test('many rules stay cheap', () => {
    const lines = ['User-agent: *']
    for (let i = 0; i < 20_000; i++) lines.push(`Disallow: /*x${i}-*y`)
    const rules = parseRobots(lines.join('\n')).forAgent(UA)
    const path = `/${'z'.repeat(200)}`
    const started = performance.now()
    expect(rules.allowed(path)).toBe(true)
    expect(performance.now() - started).toBeLessThan(500)
    // Past MAX_RULES the rest of the file is ignored.
    expect(rules.allowed('/x9999-y')).toBe(false)
    expect(rules.allowed('/x19999-y')).toBe(true)
  })
})

describe('hostile files', () => {
  test('thousands of agents in one group parse in linear time', () => {
    const lines: string[] = []
    for (let i = 0; i < 8_000; i++) lines.push(`User-agent: b-${i}`)
    lines.push('User-agent: trawl')
    for (let i = 0; i < 10_000; i++) lines.push(`Disallow: /p${i}/`)
    const started = performance.now()
    const robots = parseRobots(lines.join('\n'))
    for (const agent of [UA, 'b-0', 'b-7999']) {
      expect(robots.forAgent(agent).allowed('/p9999/x')).toBe(false)
      expect(robots.forAgent(agent).allowed('/q')).toBe(true)
    }
    expect(performance.now() - started).toBeLessThan(500)
  })
})
