/**
 * The target of `GET /v1/scrape/{url}` (design.md §7). The rest of the path after the prefix is
 * read from the raw request line, not from a router's decoded parameter:
 * - starting with `http%3A` or `https%3A` (any case), it is one percent-encoded URL: decoded
 *   once, and the request's own query string is not part of it;
 * - otherwise it is the URL as written, and the request's query string is the target's
 *   (`/v1/scrape/https://a.example/p?q=1` scrapes `https://a.example/p?q=1`).
 * Null when the rest is empty or does not decode.
 */
export const SCRAPE_PATH_PREFIX = '/v1/scrape/'

const ENCODED = /^https?%3a/i
// Some clients and proxies merge `//` in paths: `https:/a.example/p` meant `https://a.example/p`.
const MERGED_SLASHES = /^(https?):\/(?!\/)/i

export function targetOf(requestUrl: string): string | null {
  // The path starts at the first `/` after the scheme's `//` (request.url is absolute).
  const pathStart = requestUrl.indexOf('/', requestUrl.indexOf('//') + 2)
  const at = pathStart < 0 ? -1 : requestUrl.indexOf(SCRAPE_PATH_PREFIX, pathStart)
  if (at !== pathStart) return null
  const rest = requestUrl.slice(at + SCRAPE_PATH_PREFIX.length)
  const query = rest.indexOf('?')
  const path = query < 0 ? rest : rest.slice(0, query)
  if (path === '') return null
  if (ENCODED.test(path)) {
    try {
      return decodeURIComponent(path)
    } catch {
      return null
    }
  }
  return rest.replace(MERGED_SLASHES, '$1://')
}
