import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { createFetcher } from '../../src/fetch'
import { createLogger } from '../../src/log'
import { ParsePool } from '../../src/parse/pool'
import type { Payments } from '../../src/scrape'
import { scrapeApp, scrapeDeps } from '../../src/server'
import { jsonClient } from './client'

/**
 * The scrape surface as `trawl serve` builds it (scrapeDeps), driven with app.handle: real
 * fetches, real parse workers. `env` sets TRAWL_* settings; `clientIp` stands in for the
 * listening server's view of the caller.
 */
export function testScrape(env: Record<string, string> = {}, opts: { payments?: Payments | null; clientIp?: (request: Request) => string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-scrape-'))
  const config = loadConfig(['--data-dir', dir], { TRAWL_SCRAPE_RENDER: 'never', ...env }).config
  const logs: string[] = []
  const log = createLogger('info', (line) => logs.push(line))
  const fetcher = createFetcher(config, log)
  const parser = new ParsePool(config.parseWorkers, config.parseTimeoutMs)
  const app = scrapeApp(scrapeDeps(config, log, { fetcher, parser, payments: opts.payments ?? null }, opts.clientIp ?? (() => '203.0.113.7')))
  return {
    ...jsonClient('http://localhost', (request) => app.handle(request)),
    app,
    config,
    logs,
    async close() {
      parser.close()
      await fetcher.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
export type TestScrape = ReturnType<typeof testScrape>
