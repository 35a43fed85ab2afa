import { applyToPage } from '../extract/apply-source'
import type { DataMapDef } from '../extract/data-map'
import { DomainError } from '../core/errors'
import { ParseTimeout, PoolError, type ParsePool } from '../parse/pool'
import type { Scraper } from '../scrape/scraper'

/**
 * A saved data map applied to a live page: the page is fetched by the scraper (the same client,
 * rendering and address guard as a scrape), then applied as POST /v1/data_maps/{id}/apply
 * applies a map. The scraper hands the HTML over decoded, so it goes back to the workers as
 * UTF-8 and says so: a charset in the Content-Type wins over what the document declares
 * (src/parse/charset.ts).
 */
export async function extractWithDataMap(scraper: Scraper, parser: ParsePool, tenant: string, url: string, id: string, map: DataMapDef, timeoutMs: number) {
  const scraped = await scraper.scrape({ url, formats: [{ kind: 'html' }], proxy: null, timeoutMs, locale: null })
  const html = scraped.results[0]!
  if (html.kind !== 'html') throw new DomainError('not_html', `${scraped.url} is not an HTML or text document`)
  const page = { url: scraped.url, body: new TextEncoder().encode(html.content), content_type: 'text/html; charset=utf-8', redirects: [] }
  return applyToPage(parser, page, id, map, tenant).catch((err) => {
    if (err instanceof ParseTimeout || err instanceof PoolError) throw new DomainError('parse_error', err.message)
    throw err
  })
}
