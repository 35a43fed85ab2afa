import { VERSION } from '../version'
import type { HeaderPair } from './types'

/**
 * The user agents behind the keywords. Browser strings follow each vendor's current format
 * (Chrome's reduced UA: minor versions frozen to 0.0.0); refresh the versions with each release
 * (Chromium 156 ships in Debian as this is written, Firefox 157, Safari 26.x).
 */
const CHROME = ['Windows NT 10.0; Win64; x64', 'Macintosh; Intel Mac OS X 10_15_7', 'X11; Linux x86_64'].map(
  (os) => `Mozilla/5.0 (${os}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36`,
)
const FIREFOX = ['Windows NT 10.0; Win64; x64; rv:157.0', 'Macintosh; Intel Mac OS X 10.15; rv:157.0', 'X11; Linux x86_64; rv:157.0', 'X11; Ubuntu; Linux x86_64; rv:157.0'].map(
  (os) => `Mozilla/5.0 (${os}) Gecko/20100101 Firefox/157.0`,
)
const SAFARI = ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 Safari/605.1.15']

export const TRAWL_USER_AGENT = `trawl/${VERSION}`

type Family = 'trawl' | 'chrome' | 'firefox' | 'safari' | 'custom'
/** Keywords that claim a browser; each picks one of several strings at random per request. */
export const BROWSER_KEYWORDS = ['chrome', 'firefox', 'safari', 'random'] as const
const BROWSER_KEYWORD_SET: ReadonlySet<string> = new Set(BROWSER_KEYWORDS)
export const isBrowserKeyword = (value: string) => BROWSER_KEYWORD_SET.has(value)
const pick = (list: string[]) => list[Math.floor(Math.random() * list.length)]!

/** The user-agent string for a keyword (or the string itself), and the browser family it claims. */
export function resolveUserAgent(value: string): { userAgent: string; family: Family } {
  switch (value) {
    case 'trawl':
      return { userAgent: TRAWL_USER_AGENT, family: 'trawl' }
    case 'chrome':
      return { userAgent: pick(CHROME), family: 'chrome' }
    case 'firefox':
      return { userAgent: pick(FIREFOX), family: 'firefox' }
    case 'safari':
      return { userAgent: pick(SAFARI), family: 'safari' }
    case 'random': {
      // Weighted roughly by desktop share, so "random" looks like ordinary traffic.
      const r = Math.random()
      return r < 0.65 ? resolveUserAgent('chrome') : r < 0.85 ? resolveUserAgent('safari') : resolveUserAgent('firefox')
    }
    default:
      return { userAgent: value, family: 'custom' }
  }
}

/**
 * The product token robots.txt groups are matched against: a browser keyword claims to be a
 * browser (`Mozilla`), `trawl` and custom strings are themselves.
 */
export function robotsAgent(value: string): string {
  return isBrowserKeyword(value) ? 'Mozilla' : value
}

const HTML_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'

/**
 * Headers sent before the caller's own: a browser keyword also gets that browser's Accept and
 * Accept-Language, since a browser UA with a bare `Accept: *\/*` is an easy bot tell.
 */
export function defaultHeaders(userAgent: string, family: Family): HeaderPair[] {
  const headers: HeaderPair[] = [['User-Agent', userAgent]]
  if (family === 'chrome' || family === 'firefox' || family === 'safari') {
    headers.push(['Accept', family === 'chrome' ? 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8' : HTML_ACCEPT])
    headers.push(['Accept-Language', family === 'firefox' ? 'en-US,en;q=0.5' : 'en-US,en;q=0.9'])
  } else headers.push(['Accept', HTML_ACCEPT])
  headers.push(['Accept-Encoding', 'gzip, deflate, br, zstd'])
  return headers
}
