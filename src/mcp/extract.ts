import type { DataMapDef } from '../extract/data-map'
import { ApiError } from '../http/errors'
import type { StepResult } from '../parse/pipeline'
import { ParseTimeout, PoolError, type ParsePool } from '../parse/pool'
import type { Scraper } from '../scrape/scraper'

/**
 * A saved data map applied to a live page: the page is fetched by the scraper (the same client,
 * rendering and address guard as a scrape), then the map runs as a data_map step on the parse
 * workers, as POST /v1/data_maps/{id}/apply runs it. The scraper hands the HTML over decoded, so
 * it goes back to the workers as UTF-8 and says so: a charset in the Content-Type wins over what
 * the document declares (src/parse/charset.ts).
 */
export async function extractWithDataMap(scraper: Scraper, parser: ParsePool, tenant: string, url: string, id: string, map: DataMapDef, timeoutMs: number): Promise<{ data: unknown; errors: unknown[] }> {
  const scraped = await scraper.scrape({ url, formats: [{ kind: 'html' }], proxy: null, timeoutMs, locale: null })
  const html = scraped.results[0]!
  if (html.kind !== 'html') throw new ApiError(422, 'not_html', `${scraped.url} is not an HTML or text document`)
  const parsed = await parser
    .parse(
      { url: scraped.url, body: new TextEncoder().encode(html.content), content_type: 'text/html; charset=utf-8', pipelines: [{ steps: [{ kind: 'data_map', id }] }] },
      { patternSets: () => [], dataMap: (wanted) => (wanted === id ? map : null) },
      tenant,
    )
    .catch((err) => {
      if (err instanceof ParseTimeout || err instanceof PoolError) throw new ApiError(500, 'parse_error', err.message)
      throw err
    })
  const { data, errors } = parsed.pipelines[0]!.steps[0] as Extract<StepResult, { data: unknown }>
  return { data, errors }
}
