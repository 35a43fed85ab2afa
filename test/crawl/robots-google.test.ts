/**
 * Every assertion of google/robotstxt's robots_test.cc (Apache-2.0) that asks whether a URL is
 * allowed for a user agent, whether an agent is one to obey, or which Sitemap a file names, run
 * through trawl the way the crawl engine calls it. Cases are named after their Google test and
 * numbered in the order that test asserts them.
 *
 * trawl claims to read robots.txt as Google's parser does, so any answer that differs must be a
 * departure named in DEPARTURES with its reason (docs/crawl.md lists them too); a new difference
 * fails here rather than going unnoticed.
 */
import { describe, expect, test } from 'bun:test'
import { parseRobots, robotsFromStatus } from '../../src/crawl/robots'
import { MAX_LINE_BYTES } from '../../src/crawl/robots-lines'
import { robotsAgent } from '../../src/fetch/user-agents'
import { GOOGLE_TESTS, lines } from './robots-google.cases'

/** Whether the engine would fetch `url` as `agent` (execution.ts visit() and fetchRobots()). */
function engineAllows(robotstxt: string, agent: string, url: string): boolean {
  const rules = robotsFromStatus(200, robotstxt).forAgent(robotsAgent(agent))
  // Google reads an empty URL as `/`; the engine never has one, and allowed('') reads it so too.
  if (url === '') return rules.allowed('')
  // WHATWG parsing percent-encodes what a path may not hold raw (`ツ` becomes `%E3%83%84`).
  const u = new URL(url)
  return rules.allowed(u.pathname + u.search)
}

interface Departure {
  /** Agent and URL of the case (the agent alone for validity), so a renumbering cannot move a departure onto another case. */
  input: string
  /** trawl's answer, the opposite of Google's. */
  trawl: boolean
  why: string
}

const URL_ENCODED =
  "The engine matches the URL as WHATWG URL parsing leaves it, percent-encoded: `ツ` in a URL is `%E3%83%84`, as RFC 9309 §2.2.2's examples encode it. Google's library leaves encoding to its caller."
const UNRESERVED_DECODED =
  "Escaped unreserved characters equal the characters (RFC 3986 §6.2.2.2), in rules and URLs alike, as RFC 9309 §2.2.2's example `/foo/bar/%62%61%7A` → `/foo/bar/baz` does. Google compares the escapes literally."
const LEADING_TOKEN =
  "trawl's agent is a whole User-Agent string (`MyBot/1.0 (+https://…)`), so it matches by the product token the string starts with. Google takes the agent as a bare token and obeys no group for one that is not."

const DEPARTURES: Record<string, Departure> = {
  'ID_Encoding #3': { input: 'FooBot http://foo.bar/foo/bar/ツ', trawl: true, why: URL_ENCODED },
  'ID_Encoding #5': { input: 'FooBot http://foo.bar/foo/bar/ツ', trawl: true, why: URL_ENCODED },
  'ID_Encoding #6': { input: 'FooBot http://foo.bar/foo/bar/baz', trawl: true, why: UNRESERVED_DECODED },
  'GoogleOnly_AcceptUserAgentUpToFirstSpace #2': { input: 'Foo Bar http://foo.bar/x/y', trawl: true, why: LEADING_TOKEN },
  'ID_VerifyValidUserAgentsToObey #7': { input: 'Foobot*', trawl: true, why: LEADING_TOKEN },
  'ID_VerifyValidUserAgentsToObey #8': { input: ' Foobot ', trawl: true, why: LEADING_TOKEN },
  'ID_VerifyValidUserAgentsToObey #9': { input: 'Foobot/2.1', trawl: true, why: LEADING_TOKEN },
  'ID_VerifyValidUserAgentsToObey #10': { input: 'Foobot Bar', trawl: true, why: LEADING_TOKEN },
  'GoogleOnly_AcceptUserAgentUpToFirstSpace validity #1': { input: 'Foobot Bar', trawl: true, why: LEADING_TOKEN },
}

/** The answer trawl must give: Google's, unless the case is a named departure. */
const expected = (id: string, google: boolean) => DEPARTURES[id]?.trawl ?? google

const short = (s: string) => (s.length > 60 ? `${s.slice(0, 40)}…(${s.length} chars)…${s.slice(-12)}` : s)

const cases = GOOGLE_TESTS.flatMap(({ name, blocks }) =>
  blocks.flatMap((block) => block.checks.map((check) => ({ name, robots: block.robots, check }))).map((c, i) => ({ ...c, id: `${c.name} #${i + 1}` })),
)

describe('google/robotstxt robots_test.cc: is the URL allowed', () => {
  test('all 145 of its allow/disallow assertions are here', () => {
    expect(cases.length).toBe(145)
  })

  for (const { id, robots, check } of cases) {
    const [agent, url, google] = check
    test(`${id}: ${agent || '(no agent)'} ${short(url) || '(empty URL)'}`, () => {
      expect(engineAllows(robots, agent, url)).toBe(expected(id, google))
    })
  }
})

/**
 * Google's IsValidUserAgentToObey: whether its matcher obeys a group written for this agent. The
 * trawl counterpart: forAgent(agent) picks a group whose user-agent line is the agent itself.
 */
function obeysOwnGroup(agent: string): boolean {
  const robots = parseRobots(lines('User-agent: *', 'Allow: /', '', `User-agent: ${agent}`, 'Disallow: /'))
  return !robots.forAgent(robotsAgent(agent)).allowed('/x')
}

const VALIDITY: { id: string; agent: string; google: boolean }[] = [
  ...(
    [
      ['Foobot', true],
      ['Foobot-Bar', true],
      ['Foo_Bar', true],
      ['', false], // Google asserts this twice: an empty string_view and "".
      ['', false],
      ['ツ', false],
      ['Foobot*', false],
      [' Foobot ', false],
      ['Foobot/2.1', false],
      ['Foobot Bar', false],
    ] as const
  ).map(([agent, google], i) => ({ id: `ID_VerifyValidUserAgentsToObey #${i + 1}`, agent, google })),
  { id: 'GoogleOnly_AcceptUserAgentUpToFirstSpace validity #1', agent: 'Foobot Bar', google: false },
]

describe('google/robotstxt robots_test.cc: is the user agent one to obey', () => {
  test('all 11 of its assertions are here', () => expect(VALIDITY.length).toBe(11))

  for (const { id, agent, google } of VALIDITY) {
    test(`${id}: ${JSON.stringify(agent)}`, () => {
      expect(obeysOwnGroup(agent)).toBe(expected(id, google))
    })
  }
})

describe('google/robotstxt robots_test.cc: Sitemap lines', () => {
  const head = lines('User-Agent: foo', 'Allow: /some/path', 'User-Agent: bar', '', '')
  test('ID_NonStandardLineExample_Sitemap #1: after the groups', () => {
    expect(parseRobots(`${head}Sitemap: http://foo.bar/sitemap.xml\n`).sitemaps).toEqual(['http://foo.bar/sitemap.xml'])
  })
  test('ID_NonStandardLineExample_Sitemap #2: anywhere in the file', () => {
    expect(parseRobots(`Sitemap: http://foo.bar/sitemap.xml\n${head}`).sitemaps).toEqual(['http://foo.bar/sitemap.xml'])
  })
})

describe('departures', () => {
  test('each names an existing case, its input, and the opposite of Google', () => {
    const all = new Map<string, { input: string; google: boolean }>()
    for (const {
      id,
      check: [agent, url, google],
    } of cases)
      all.set(id, { input: `${agent} ${url}`, google })
    for (const { id, agent, google } of VALIDITY) all.set(id, { input: agent, google })
    for (const [id, departure] of Object.entries(DEPARTURES)) {
      expect([id, all.get(id)]).toEqual([id, { input: departure.input, google: !departure.trawl }])
      expect(departure.why.length).toBeGreaterThan(0)
    }
  })
})

// Google's two rules those tests show trawl missing, checked around their edges too.
const UA = 'trawl/0.1.0 (+https://trawl.example/bot)'
const rulesOf = (...l: string[]) => parseRobots(lines('User-agent: trawl', ...l)).forAgent(UA)

describe('index pages (Google)', () => {
  test('an Allow for /dir/index.html also allows /dir/, and only that URL', () => {
    const rules = rulesOf('Allow: /dir/index.html', 'Disallow: /')
    expect(rules.allowed('/dir/')).toBe(true)
    expect(rules.allowed('/dir/index.html')).toBe(true)
    expect(rules.allowed('/dir/?page=2')).toBe(false)
    expect(rules.allowed('/dir/other')).toBe(false)
    expect(rules.allowed('/dir')).toBe(false)
  })

  test('any last segment starting index.htm counts, at any depth, with wildcards', () => {
    expect(rulesOf('Allow: /index.htm', 'Disallow: /').allowed('/')).toBe(true)
    expect(rulesOf('Allow: /a/b/index.html$', 'Disallow: /').allowed('/a/b/')).toBe(true)
    expect(rulesOf('Allow: /*/index.html', 'Disallow: /').allowed('/any/')).toBe(true)
    expect(rulesOf('Allow: /dir/index.php', 'Disallow: /').allowed('/dir/')).toBe(false)
    expect(rulesOf('Allow: /dir/index.html?from=/x', 'Disallow: /').allowed('/dir/')).toBe(false)
    expect(rulesOf('Disallow: /dir/index.html').allowed('/dir/')).toBe(true)
  })

  test('the directory rule has its own length: `/dir/$` beats `/dir/`, ties `/dir/$`, loses to longer', () => {
    expect(rulesOf('Allow: /dir/index.html', 'Disallow: /dir/').allowed('/dir/')).toBe(true)
    expect(rulesOf('Allow: /dir/index.html', 'Disallow: /dir/$').allowed('/dir/')).toBe(true)
    expect(rulesOf('Allow: /dir/index.html', 'Disallow: /*/$').allowed('/dir/')).toBe(true)
    expect(rulesOf('Allow: /dir/index.html', 'Disallow: /di*r/$').allowed('/dir/')).toBe(false)
  })
})

describe(`a line is cut after ${MAX_LINE_BYTES} bytes, as Google cuts it`, () => {
  const prefix = 'Disallow: /'
  test('counted in bytes, so a line of two-byte characters is cut at half as many', () => {
    const kept = (MAX_LINE_BYTES - prefix.length) / 2
    const rules = rulesOf(`${prefix}${'é'.repeat(kept + 100)}/qux`)
    expect(rules.allowed(`/${'é'.repeat(kept)}/fux`)).toBe(false)
    expect(rules.allowed(`/${'é'.repeat(kept - 1)}/fux`)).toBe(true)
  })

  test('a character cut in two keeps its first bytes, as escapes', () => {
    // One byte of room is left for the last `é` (C3 A9): the rule ends in `%C3`, which `ü` (C3 BC) matches.
    const fill = 'é'.repeat(Math.floor((MAX_LINE_BYTES - prefix.length - 1) / 2))
    expect(MAX_LINE_BYTES - prefix.length - 1 - fill.length * 2).toBe(1)
    const rules = rulesOf(`${prefix}a${fill}é/qux`)
    expect(rules.allowed(`/a${fill}ü`)).toBe(false)
    expect(rules.allowed(`/a${fill}x`)).toBe(true)
  })

  test('the last byte kept is byte MAX_LINE_BYTES', () => {
    const path = `/${'a'.repeat(MAX_LINE_BYTES - prefix.length - 2)}`
    const whole = rulesOf(`${prefix}${path.slice(1)}/q`)
    expect(whole.allowed(`${path}/q`)).toBe(false)
    expect(whole.allowed(`${path}/x`)).toBe(true)
    const cut = rulesOf(`${prefix}${path.slice(1)}a/q`)
    expect(cut.allowed(`${path}a/x`)).toBe(false)
  })
})
