/**
 * robots.txt per RFC 9309, read the way Google's open-source parser reads it (the de facto
 * reference for what sites expect): lenient about syntax, strict about bounds. A robots.txt is
 * hostile input like any page, so its size, its rule count and the cost of a match are capped,
 * and patterns are matched by a linear scan, never by a RegExp built from them.
 */
import { directive, robotsLines } from './robots-lines'

export { MAX_ROBOTS_BYTES } from './robots-lines'

/** What a crawler may fetch on one host, for one user agent. */
export interface AgentRules {
  /** Whether the path (with its query, as in `/a/b?c=d`) may be fetched. */
  allowed(pathAndQuery: string): boolean
  /** Crawl-delay of the group in milliseconds (capped at MAX_CRAWL_DELAY_MS), null when unset. */
  readonly crawlDelayMs: number | null
}

/** A host's parsed robots.txt. */
export interface Robots {
  /**
   * `file` when parsed from a robots.txt; `allow_all` and `disallow_all` when the fetch status
   * decided for the whole host (RFC 9309 §2.3.1), so a crawl log can say why.
   */
  readonly source: 'file' | 'allow_all' | 'disallow_all'
  /** Absolute http(s) URLs of the Sitemap: lines, whichever group they stand in, deduplicated. */
  readonly sitemaps: string[]
  /** Rules of the group for the UA's product token, else of `*`, else allow all. */
  forAgent(userAgent: string): AgentRules
}

/**
 * Rules kept per file. Each rule costs a scan of the path on every check, so this bounds a check
 * at about 10k × path length. Real files stay far below (a big site's robots.txt has a few hundred).
 */
export const MAX_RULES = 10_000
/** A larger Crawl-delay would stall a run on one host; a site that wants less of us can 429. */
export const MAX_CRAWL_DELAY_MS = 60_000
/** Sitemap: lines kept per file, so a hostile file cannot seed an unbounded fetch list. */
const MAX_SITEMAPS = 1000

interface Rule {
  allow: boolean
  /** Length of the normalized pattern: the RFC's "most octets" and Google's priority. */
  length: number
  /** The pattern split on `*`; the first piece is a prefix of the path, the rest follow in order. */
  pieces: string[]
  /** KMP failure tables of the long pieces after the first, so a search never re-reads the path. */
  tables: (Int32Array | null)[]
  /** Pattern ended in `$`: the last piece must end the path. */
  anchored: boolean
}

interface Group {
  rules: Rule[]
  crawlDelayMs: number | null
}

export const ALLOW_ALL_RULES: AgentRules = { allowed: () => true, crawlDelayMs: null }
const DISALLOW_ALL_RULES: AgentRules = { allowed: (path) => isRobotsTxt(path), crawlDelayMs: null }

const ALLOW_ALL: Robots = { source: 'allow_all', sitemaps: [], forAgent: () => ALLOW_ALL_RULES }
const DISALLOW_ALL: Robots = { source: 'disallow_all', sitemaps: [], forAgent: () => DISALLOW_ALL_RULES }

/**
 * The robots of a host from how its /robots.txt fetch ended (RFC 9309 §2.3.1): a 2xx body is
 * parsed; 4xx means there are no rules; 5xx or no answer means the whole host is off limits until
 * a later fetch succeeds. 429 counts as a server error, as Google counts it: treating "too many
 * requests" as "no rules" would answer rate limiting with a full-speed crawl. The fetcher follows
 * redirects (up to 5 hops), so a 3xx here is one it gave up on: RFC 9309 §2.3.1.2 lets the
 * crawler then proceed as for an unavailable file.
 */
export function robotsFromStatus(status: number | 'unreachable', body?: string): Robots {
  if (status === 'unreachable') return DISALLOW_ALL
  if (status >= 200 && status < 300) return parseRobots(body ?? '')
  if (status === 429) return DISALLOW_ALL
  if (status >= 300 && status < 500) return ALLOW_ALL
  return DISALLOW_ALL
}

/** Parses a robots.txt body; never throws, ignores lines it cannot read. */
export function parseRobots(text: string): Robots {
  // Groups are kept as the file has them and merged per agent only when asked: merging while
  // parsing would copy every rule into every agent's list, which a file naming thousands of
  // agents in one group would turn into millions of copies.
  const byAgent = new Map<string, Group[]>()
  const sitemaps = new Set<string>()
  // RFC 9309 §2.1: consecutive user-agent lines share the rules that follow them; a user-agent
  // line after a rule starts the next group. Rules before any user-agent line belong to none.
  let group: Group | null = null
  let sawRule = false
  let ruleCount = 0

  for (const rawLine of robotsLines(text)) {
    const line = directive(rawLine)
    if (!line) continue
    const { key, value } = line
    if (key === 'user-agent') {
      if (group === null || sawRule) {
        group = { rules: [], crawlDelayMs: null }
        sawRule = false
      }
      // An unreadable agent names nobody, but its group still takes the rules that follow.
      const agent = agentToken(value)
      if (agent === null) continue
      const groups = byAgent.get(agent)
      if (!groups) byAgent.set(agent, [group])
      else if (groups.at(-1) !== group) groups.push(group)
    } else if (key === 'sitemap') {
      const url = absoluteHttpUrl(value)
      if (url && sitemaps.size < MAX_SITEMAPS) sitemaps.add(url)
    } else if (group !== null) {
      sawRule = true
      if (key === 'crawl-delay') {
        const ms = crawlDelay(value)
        if (ms !== null) group.crawlDelayMs = Math.max(group.crawlDelayMs ?? 0, ms)
      } else if (value) {
        // Only a value makes a rule: an empty Disallow allows everything and an empty Allow says
        // nothing (RFC 9309 §2.2.2).
        const allow = key === 'allow'
        const pattern = fromRoot(value)
        const directory = allow ? directoryOfIndex(pattern) : null
        for (const p of directory ? [pattern, directory] : [pattern]) {
          if (ruleCount === MAX_RULES) break
          group.rules.push(compileRule(allow, p))
          ruleCount++
        }
      }
    }
  }

  const cache = new Map<string, AgentRules>()
  const rulesFor = (agent: string): AgentRules => {
    let rules = cache.get(agent)
    if (!rules) {
      // Groups naming the same agent merge into one (RFC 9309 §2.2.1).
      const groups = byAgent.get(agent) ?? byAgent.get('*')
      rules = groups ? agentRules(groups) : ALLOW_ALL_RULES
      cache.set(agent, rules)
    }
    return rules
  }
  return {
    source: 'file',
    sitemaps: [...sitemaps],
    forAgent: (userAgent) => rulesFor(productToken(userAgent) ?? '*'),
  }
}

function agentRules(groups: Group[]): AgentRules {
  // Longest pattern first, Allow before Disallow at equal length: the first match is the answer.
  const rules = groups.flatMap((group) => group.rules).sort((a, b) => b.length - a.length || Number(b.allow) - Number(a.allow))
  // Where merged groups disagree on Crawl-delay, the slowest is the one that honours them all.
  const crawlDelayMs = groups.reduce<number | null>((max, group) => (group.crawlDelayMs === null ? max : Math.max(max ?? 0, group.crawlDelayMs)), null)
  return {
    crawlDelayMs,
    allowed(pathAndQuery) {
      if (isRobotsTxt(pathAndQuery)) return true
      const path = canonical(pathAndQuery || '/')
      for (const rule of rules) if (matches(rule, path)) return rule.allow
      return true
    },
  }
}

/**
 * Lowercased agent a user-agent line names: `*`, or its leading product token (`Googlebot/2.1`
 * names `googlebot`, as in Google's parser); null when it names nothing usable.
 */
function agentToken(value: string): string | null {
  if (value === '*' || /^\*\s/.test(value)) return '*'
  return productToken(value)
}

/** The product token a UA string starts with (RFC 9309 §2.2.1: letters, `_` and `-`), lowercased. */
function productToken(userAgent: string): string | null {
  const match = /^[A-Za-z_-]+/.exec(userAgent.trim())
  return match ? match[0].toLowerCase() : null
}

function crawlDelay(value: string): number | null {
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(value)) return null
  return Math.min(Math.round(Number(value) * 1000), MAX_CRAWL_DELAY_MS)
}

function absoluteHttpUrl(value: string): string | null {
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null
  } catch {
    return null
  }
}

function isRobotsTxt(pathAndQuery: string): boolean {
  return pathAndQuery === '/robots.txt' || pathAndQuery.startsWith('/robots.txt?')
}

/** Paths start at the root: `Disallow: private` is a typo for `/private`; `*.gif$` is fine as is. */
function fromRoot(value: string): string {
  return value[0] === '/' || value[0] === '*' ? value : `/${value}`
}

/**
 * Google reads an Allow for a directory's index page (a last segment starting `index.htm`:
 * `/dir/index.html`, `/index.htm`) as allowing the directory itself, `/dir/$`, since a server
 * answers the directory with that page. Its priority is that pattern's own length.
 */
function directoryOfIndex(pattern: string): string | null {
  const slash = pattern.lastIndexOf('/')
  return pattern.startsWith('/index.htm', slash) ? `${pattern.slice(0, slash + 1)}$` : null
}

function compileRule(allow: boolean, pattern: string): Rule {
  // `$` anchors only at the end (Google); elsewhere it is an ordinary character.
  const anchored = pattern.endsWith('$')
  if (anchored) pattern = pattern.slice(0, -1)
  const pieces = pattern.split('*').map(canonical)
  const length = pieces.reduce((sum, piece) => sum + piece.length, pieces.length - 1) + (anchored ? 1 : 0)
  const tables = pieces.map((piece, i) => (i === 0 || piece.length <= SHORT_PIECE ? null : failureTable(piece)))
  return { allow, length, pieces, tables, anchored }
}

/**
 * Whether a rule matches a canonical path: the first piece is a prefix, each next piece is found
 * leftmost after the previous one (leftmost leaves the most room, so it never needs to try
 * again), and an anchored last piece must end the path. Each search starts where the previous
 * match ended, so one check reads the path about once: linear, whatever the pattern.
 */
function matches(rule: Rule, path: string): boolean {
  const { pieces, tables, anchored } = rule
  const first = pieces[0]!
  if (!path.startsWith(first)) return false
  let at = first.length
  const last = pieces.length - 1
  if (last === 0) return !anchored || at === path.length
  for (let i = 1; i < last; i++) {
    const piece = pieces[i]!
    if (!piece) continue
    const found = find(path, piece, tables[i] ?? null, at)
    if (found < 0) return false
    at = found + piece.length
  }
  const tail = pieces[last]!
  if (anchored) return path.length - tail.length >= at && path.endsWith(tail)
  return !tail || find(path, tail, tables[last] ?? null, at) >= 0
}

/** Knuth–Morris–Pratt failure table: how far a partial match falls back on a mismatch. */
function failureTable(piece: string): Int32Array {
  const table = new Int32Array(piece.length)
  for (let i = 1, k = 0; i < piece.length; i++) {
    while (k > 0 && piece.charCodeAt(i) !== piece.charCodeAt(k)) k = table[k - 1]!
    if (piece.charCodeAt(i) === piece.charCodeAt(k)) k++
    table[i] = k
  }
  return table
}

/**
 * Pieces up to this length are searched with the native indexOf: far faster on real paths, and
 * even a naive search reads each character at most this many times. Longer pieces use KMP, since
 * indexOf promises nothing about `aaa…ab` in `aaaa…a`.
 */
const SHORT_PIECE = 16

/** Index of `piece` in `text` at or after `from`, or -1, in time linear in the text searched. */
function find(text: string, piece: string, table: Int32Array | null, from: number): number {
  if (table === null) return text.indexOf(piece, from)
  for (let i = from, k = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    while (k > 0 && c !== piece.charCodeAt(k)) k = table[k - 1]!
    if (c === piece.charCodeAt(k)) k++
    if (k === piece.length) return i - k + 1
  }
  return -1
}

const HEX = '0123456789ABCDEF'
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
const isUnreserved = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 95 || c === 126

/**
 * One spelling for paths and patterns before comparing (RFC 9309 §2.2.2, design.md §3): escapes
 * uppercased, escaped unreserved characters decoded, non-ASCII characters (UTF-8), blanks and
 * controls escaped. Reserved characters stay as written: `/a%2Fb` and `/a/b` are different paths.
 */
function canonical(text: string): string {
  if (!/[^\x21-\x7e]|%/.test(text)) return text
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 37 && isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2))) {
      const byte = parseInt(text.slice(i + 1, i + 3), 16)
      out += isUnreserved(byte) ? String.fromCharCode(byte) : `%${text.slice(i + 1, i + 3).toUpperCase()}`
      i += 2
    } else if (c <= 0x20 || c === 0x7f) {
      out += `%${HEX[c >> 4]}${HEX[c & 15]}`
    } else if (c > 0x7f) {
      const cp = text.codePointAt(i)!
      if (cp > 0xffff) i++
      try {
        out += encodeURIComponent(String.fromCodePoint(cp))
      } catch {
        out += '%EF%BF%BD' // a lone surrogate: what a UTF-8 encoder writes for it
      }
    } else {
      out += text[i]
    }
  }
  return out
}
