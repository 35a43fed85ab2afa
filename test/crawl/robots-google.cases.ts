/**
 * The allow/disallow assertions of google/robotstxt's robots_test.cc (Apache-2.0), as data: the
 * robots.txt bodies, agents and URLs of each Google test, in the order it asserts them, with
 * Google's answer. robots-google.test.ts runs them through trawl.
 */

export const lines = (...l: string[]) => `${l.join('\n')}\n`

export type Check = readonly [agent: string, url: string, google: boolean]
export interface GoogleTest {
  name: string
  blocks: { robots: string; checks: Check[] }[]
}

// Google's GoogleOnly_LineTooLong builds lines that overflow its 2083 × 8 byte buffer by a few bytes.
const MAX_LINE = 2083 * 8
const longPath = (fill: string, directive: string) => '/x/'.padEnd(MAX_LINE - '/x/'.length - directive.length + '\n'.length, fill)
const longA = longPath('a', 'allow: ')
const longB = longPath('b', 'allow: ')
const longD = longPath('a', 'disallow: ')

const fooBotAllowsX = (agentLine: string) => lines(`User-Agent: ${agentLine}`, 'Allow: /x/', 'Disallow: /')
const fooBotDisallowsAllowsFish = (allow: string) => lines('user-agent: FooBot', 'disallow: /', `allow: ${allow}`)

export const GOOGLE_TESTS: GoogleTest[] = [
  {
    name: 'GoogleOnly_SystemTest',
    blocks: [
      { robots: '', checks: [['FooBot', '', true]] },
      {
        robots: lines('user-agent: FooBot', 'disallow: /'),
        checks: [
          ['', '', true],
          ['FooBot', '', false],
        ],
      },
      { robots: '', checks: [['', '', true]] },
    ],
  },
  {
    name: 'ID_LineSyntax_Line',
    blocks: [
      { robots: lines('user-agent: FooBot', 'disallow: /'), checks: [['FooBot', 'http://foo.bar/x/y', false]] },
      { robots: lines('foo: FooBot', 'bar: /'), checks: [['FooBot', 'http://foo.bar/x/y', true]] },
      { robots: lines('user-agent FooBot', 'disallow /'), checks: [['FooBot', 'http://foo.bar/x/y', false]] },
    ],
  },
  {
    name: 'ID_LineSyntax_Groups',
    blocks: [
      {
        robots: lines(
          'allow: /foo/bar/',
          '',
          'user-agent: FooBot',
          'disallow: /',
          'allow: /x/',
          'user-agent: BarBot',
          'disallow: /',
          'allow: /y/',
          '',
          '',
          'allow: /w/',
          'user-agent: BazBot',
          '',
          'user-agent: FooBot',
          'allow: /z/',
          'disallow: /',
        ),
        checks: [
          ['FooBot', 'http://foo.bar/x/b', true],
          ['FooBot', 'http://foo.bar/z/d', true],
          ['FooBot', 'http://foo.bar/y/c', false],
          ['BarBot', 'http://foo.bar/y/c', true],
          ['BarBot', 'http://foo.bar/w/a', true],
          ['BarBot', 'http://foo.bar/z/d', false],
          ['BazBot', 'http://foo.bar/z/d', true],
          ['FooBot', 'http://foo.bar/foo/bar/', false],
          ['BarBot', 'http://foo.bar/foo/bar/', false],
          ['BazBot', 'http://foo.bar/foo/bar/', false],
        ],
      },
    ],
  },
  {
    name: 'ID_LineSyntax_Groups_OtherRules',
    blocks: [
      {
        robots: lines('User-agent: BarBot', 'Sitemap: https://foo.bar/sitemap', 'User-agent: *', 'Disallow: /'),
        checks: [
          ['FooBot', 'http://foo.bar/', false],
          ['BarBot', 'http://foo.bar/', false],
        ],
      },
      {
        robots: lines('User-agent: FooBot', 'Invalid-Unknown-Line: unknown', 'User-agent: *', 'Disallow: /'),
        checks: [
          ['FooBot', 'http://foo.bar/', false],
          ['BarBot', 'http://foo.bar/', false],
        ],
      },
    ],
  },
  {
    name: 'ID_REPLineNamesCaseInsensitive',
    blocks: [
      ['USER-AGENT: FooBot', 'ALLOW: /x/', 'DISALLOW: /'],
      ['user-agent: FooBot', 'allow: /x/', 'disallow: /'],
      ['uSeR-aGeNt: FooBot', 'AlLoW: /x/', 'dIsAlLoW: /'],
    ].map((file) => ({
      robots: lines(...file),
      checks: [
        ['FooBot', 'http://foo.bar/x/y', true],
        ['FooBot', 'http://foo.bar/a/b', false],
      ],
    })),
  },
  {
    name: 'ID_UserAgentValueCaseInsensitive',
    blocks: ['FOO BAR', 'foo bar', 'FoO bAr'].map((agent) => ({
      robots: fooBotAllowsX(agent),
      checks: [
        ['Foo', 'http://foo.bar/x/y', true],
        ['Foo', 'http://foo.bar/a/b', false],
        ['foo', 'http://foo.bar/x/y', true],
        ['foo', 'http://foo.bar/a/b', false],
      ],
    })),
  },
  {
    name: 'GoogleOnly_AcceptUserAgentUpToFirstSpace',
    blocks: [
      {
        robots: lines('User-Agent: *', 'Disallow: /', 'User-Agent: Foo Bar', 'Allow: /x/', 'Disallow: /'),
        checks: [
          ['Foo', 'http://foo.bar/x/y', true],
          ['Foo Bar', 'http://foo.bar/x/y', false],
        ],
      },
    ],
  },
  {
    name: 'ID_GlobalGroups_Secondary',
    blocks: [
      { robots: '', checks: [['FooBot', 'http://foo.bar/x/y', true]] },
      {
        robots: lines('user-agent: *', 'allow: /', 'user-agent: FooBot', 'disallow: /'),
        checks: [
          ['FooBot', 'http://foo.bar/x/y', false],
          ['BarBot', 'http://foo.bar/x/y', true],
        ],
      },
      {
        robots: lines('user-agent: FooBot', 'allow: /', 'user-agent: BarBot', 'disallow: /', 'user-agent: BazBot', 'disallow: /'),
        checks: [['QuxBot', 'http://foo.bar/x/y', true]],
      },
    ],
  },
  {
    name: 'ID_AllowDisallow_Value_CaseSensitive',
    blocks: [
      { robots: lines('user-agent: FooBot', 'disallow: /x/'), checks: [['FooBot', 'http://foo.bar/x/y', false]] },
      { robots: lines('user-agent: FooBot', 'disallow: /X/'), checks: [['FooBot', 'http://foo.bar/x/y', true]] },
    ],
  },
  {
    name: 'ID_LongestMatch',
    blocks: [
      { robots: lines('user-agent: FooBot', 'disallow: /x/page.html', 'allow: /x/'), checks: [['FooBot', 'http://foo.bar/x/page.html', false]] },
      {
        robots: lines('user-agent: FooBot', 'allow: /x/page.html', 'disallow: /x/'),
        checks: [
          ['FooBot', 'http://foo.bar/x/page.html', true],
          ['FooBot', 'http://foo.bar/x/', false],
        ],
      },
      { robots: lines('user-agent: FooBot', 'disallow: ', 'allow: '), checks: [['FooBot', 'http://foo.bar/x/page.html', true]] },
      { robots: lines('user-agent: FooBot', 'disallow: /', 'allow: /'), checks: [['FooBot', 'http://foo.bar/x/page.html', true]] },
      {
        robots: lines('user-agent: FooBot', 'disallow: /x', 'allow: /x/'),
        checks: [
          ['FooBot', 'http://foo.bar/x', false],
          ['FooBot', 'http://foo.bar/x/', true],
        ],
      },
      { robots: lines('user-agent: FooBot', 'disallow: /x/page.html', 'allow: /x/page.html'), checks: [['FooBot', 'http://foo.bar/x/page.html', true]] },
      {
        robots: lines('user-agent: FooBot', 'allow: /page', 'disallow: /*.html'),
        checks: [
          ['FooBot', 'http://foo.bar/page.html', false],
          ['FooBot', 'http://foo.bar/page', true],
        ],
      },
      {
        robots: lines('user-agent: FooBot', 'allow: /x/page.', 'disallow: /*.html'),
        checks: [
          ['FooBot', 'http://foo.bar/x/page.html', true],
          ['FooBot', 'http://foo.bar/x/y.html', false],
        ],
      },
      {
        robots: lines('User-agent: *', 'Disallow: /x/', 'User-agent: FooBot', 'Disallow: /y/'),
        checks: [
          ['FooBot', 'http://foo.bar/x/page', true],
          ['FooBot', 'http://foo.bar/y/page', false],
        ],
      },
    ],
  },
  {
    name: 'ID_Encoding',
    blocks: [
      {
        robots: lines('User-agent: FooBot', 'Disallow: /', 'Allow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par'),
        checks: [['FooBot', 'http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par', true]],
      },
      {
        robots: lines('User-agent: FooBot', 'Disallow: /', 'Allow: /foo/bar/ツ'),
        checks: [
          ['FooBot', 'http://foo.bar/foo/bar/%E3%83%84', true],
          ['FooBot', 'http://foo.bar/foo/bar/ツ', false],
        ],
      },
      {
        robots: lines('User-agent: FooBot', 'Disallow: /', 'Allow: /foo/bar/%E3%83%84'),
        checks: [
          ['FooBot', 'http://foo.bar/foo/bar/%E3%83%84', true],
          ['FooBot', 'http://foo.bar/foo/bar/ツ', false],
        ],
      },
      {
        robots: lines('User-agent: FooBot', 'Disallow: /', 'Allow: /foo/bar/%62%61%7A'),
        checks: [
          ['FooBot', 'http://foo.bar/foo/bar/baz', false],
          ['FooBot', 'http://foo.bar/foo/bar/%62%61%7A', true],
        ],
      },
    ],
  },
  {
    name: 'ID_SpecialCharacters',
    blocks: [
      {
        robots: lines('User-agent: FooBot', 'Disallow: /foo/bar/quz', 'Allow: /foo/*/qux'),
        checks: [
          ['FooBot', 'http://foo.bar/foo/bar/quz', false],
          ['FooBot', 'http://foo.bar/foo/quz', true],
          ['FooBot', 'http://foo.bar/foo//quz', true],
          ['FooBot', 'http://foo.bar/foo/bax/quz', true],
        ],
      },
      {
        robots: lines('User-agent: FooBot', 'Disallow: /foo/bar$', 'Allow: /foo/bar/qux'),
        checks: [
          ['FooBot', 'http://foo.bar/foo/bar', false],
          ['FooBot', 'http://foo.bar/foo/bar/qux', true],
          ['FooBot', 'http://foo.bar/foo/bar/', true],
          ['FooBot', 'http://foo.bar/foo/bar/baz', true],
        ],
      },
      {
        robots: lines('User-agent: FooBot', '# Disallow: /', 'Disallow: /foo/quz#qux', 'Allow: /'),
        checks: [
          ['FooBot', 'http://foo.bar/foo/bar', true],
          ['FooBot', 'http://foo.bar/foo/quz', false],
        ],
      },
    ],
  },
  {
    name: 'GoogleOnly_IndexHTMLisDirectory',
    blocks: [
      {
        robots: lines('User-Agent: *', 'Allow: /allowed-slash/index.html', 'Disallow: /'),
        checks: [
          ['foobot', 'http://foo.com/allowed-slash/', true],
          ['foobot', 'http://foo.com/allowed-slash/index.htm', false],
          ['foobot', 'http://foo.com/allowed-slash/index.html', true],
          ['foobot', 'http://foo.com/anyother-url', false],
        ],
      },
    ],
  },
  {
    name: 'GoogleOnly_LineTooLong',
    blocks: [
      {
        robots: lines('user-agent: FooBot', `disallow: ${longD}/qux`),
        checks: [
          ['FooBot', 'http://foo.bar/fux', true],
          ['FooBot', `http://foo.bar${longD}/fux`, false],
        ],
      },
      {
        robots: lines('user-agent: FooBot', 'disallow: /', `allow: ${longA}/qux`, `allow: ${longB}/qux`),
        checks: [
          ['FooBot', 'http://foo.bar/', false],
          ['FooBot', `http://foo.bar${longA}/qux`, true],
          ['FooBot', `http://foo.bar${longB}/fux`, true],
        ],
      },
    ],
  },
  {
    name: 'GoogleOnly_DocumentationChecks',
    blocks: [
      {
        robots: fooBotDisallowsAllowsFish('/fish'),
        checks: [
          ['FooBot', 'http://foo.bar/bar', false],
          ['FooBot', 'http://foo.bar/fish', true],
          ['FooBot', 'http://foo.bar/fish.html', true],
          ['FooBot', 'http://foo.bar/fish/salmon.html', true],
          ['FooBot', 'http://foo.bar/fishheads', true],
          ['FooBot', 'http://foo.bar/fishheads/yummy.html', true],
          ['FooBot', 'http://foo.bar/fish.html?id=anything', true],
          ['FooBot', 'http://foo.bar/Fish.asp', false],
          ['FooBot', 'http://foo.bar/catfish', false],
          ['FooBot', 'http://foo.bar/?id=fish', false],
        ],
      },
      {
        robots: fooBotDisallowsAllowsFish('/fish*'),
        checks: [
          ['FooBot', 'http://foo.bar/bar', false],
          ['FooBot', 'http://foo.bar/fish', true],
          ['FooBot', 'http://foo.bar/fish.html', true],
          ['FooBot', 'http://foo.bar/fish/salmon.html', true],
          ['FooBot', 'http://foo.bar/fishheads', true],
          ['FooBot', 'http://foo.bar/fishheads/yummy.html', true],
          ['FooBot', 'http://foo.bar/fish.html?id=anything', true],
          ['FooBot', 'http://foo.bar/Fish.bar', false],
          ['FooBot', 'http://foo.bar/catfish', false],
          ['FooBot', 'http://foo.bar/?id=fish', false],
        ],
      },
      {
        robots: fooBotDisallowsAllowsFish('/fish/'),
        checks: [
          ['FooBot', 'http://foo.bar/bar', false],
          ['FooBot', 'http://foo.bar/fish/', true],
          ['FooBot', 'http://foo.bar/fish/salmon', true],
          ['FooBot', 'http://foo.bar/fish/?salmon', true],
          ['FooBot', 'http://foo.bar/fish/salmon.html', true],
          ['FooBot', 'http://foo.bar/fish/?id=anything', true],
          ['FooBot', 'http://foo.bar/fish', false],
          ['FooBot', 'http://foo.bar/fish.html', false],
          ['FooBot', 'http://foo.bar/Fish/Salmon.html', false],
        ],
      },
      {
        robots: fooBotDisallowsAllowsFish('/*.php'),
        checks: [
          ['FooBot', 'http://foo.bar/bar', false],
          ['FooBot', 'http://foo.bar/filename.php', true],
          ['FooBot', 'http://foo.bar/folder/filename.php', true],
          ['FooBot', 'http://foo.bar/folder/filename.php?parameters', true],
          ['FooBot', 'http://foo.bar//folder/any.php.file.html', true],
          ['FooBot', 'http://foo.bar/filename.php/', true],
          ['FooBot', 'http://foo.bar/index?f=filename.php/', true],
          ['FooBot', 'http://foo.bar/php/', false],
          ['FooBot', 'http://foo.bar/index?php', false],
          ['FooBot', 'http://foo.bar/windows.PHP', false],
        ],
      },
      {
        robots: fooBotDisallowsAllowsFish('/*.php$'),
        checks: [
          ['FooBot', 'http://foo.bar/bar', false],
          ['FooBot', 'http://foo.bar/filename.php', true],
          ['FooBot', 'http://foo.bar/folder/filename.php', true],
          ['FooBot', 'http://foo.bar/filename.php?parameters', false],
          ['FooBot', 'http://foo.bar/filename.php/', false],
          ['FooBot', 'http://foo.bar/filename.php5', false],
          ['FooBot', 'http://foo.bar/php/', false],
          ['FooBot', 'http://foo.bar/filename?php', false],
          ['FooBot', 'http://foo.bar/aaaphpaaa', false],
          ['FooBot', 'http://foo.bar//windows.PHP', false],
        ],
      },
      {
        robots: fooBotDisallowsAllowsFish('/fish*.php'),
        checks: [
          ['FooBot', 'http://foo.bar/bar', false],
          ['FooBot', 'http://foo.bar/fish.php', true],
          ['FooBot', 'http://foo.bar/fishheads/catfish.php?parameters', true],
          ['FooBot', 'http://foo.bar/Fish.PHP', false],
        ],
      },
      { robots: lines('user-agent: FooBot', 'allow: /p', 'disallow: /'), checks: [['FooBot', 'http://example.com/page', true]] },
      { robots: lines('user-agent: FooBot', 'allow: /folder', 'disallow: /folder'), checks: [['FooBot', 'http://example.com/folder/page', true]] },
      { robots: lines('user-agent: FooBot', 'allow: /page', 'disallow: /*.htm'), checks: [['FooBot', 'http://example.com/page.htm', false]] },
      {
        robots: lines('user-agent: FooBot', 'allow: /$', 'disallow: /'),
        checks: [
          ['FooBot', 'http://example.com/', true],
          ['FooBot', 'http://example.com/page.html', false],
        ],
      },
    ],
  },
]
