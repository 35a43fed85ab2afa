import { ConfigError, loadConfig, tenantFlag } from '../config'
import { openCrawlResources } from '../crawl/resources'
import { Runner } from '../crawl/runner'
import { createLogger } from '../log'
import { Scraper } from '../scrape/scraper'

/**
 * `trawl mcp [--data-dir DIR] [--tenant T]`: trawl's MCP tools over stdio for an agent on this
 * machine (docs/mcp.md). It opens the data dir and crawls in this process, as `trawl crawl` does,
 * so a crawl an agent starts makes progress while the agent polls it; private addresses are
 * allowed, as for every one-shot command. stdout carries JSON-RPC alone; logs go to stderr.
 * It ends when the client closes stdin or on SIGINT/SIGTERM; runs still crawling then stay
 * `running` and resume at the next start of `trawl mcp`, `trawl serve` or `trawl crawl` on the data dir.
 */
export async function mcpCommand(argv: string[]): Promise<number> {
  const { config, positionals, flags } = loadConfig(
    argv,
    { ...process.env, TRAWL_ALLOW_PRIVATE_NETWORKS: process.env.TRAWL_ALLOW_PRIVATE_NETWORKS ?? 'true' },
    {
      tenant: { type: 'string' },
    },
  )
  if (positionals.length > 0) throw new ConfigError(`mcp takes no arguments, got "${positionals[0]}": trawl mcp [--data-dir DIR] [--tenant T]`)
  const tenant = tenantFlag(flags.tenant)

  const log = createLogger(config.logLevel === 'debug' ? 'debug' : 'warn')
  const resources = await openCrawlResources(config, log)
  const runner = new Runner(resources, config.maxActiveRuns)
  const scraper = new Scraper({ fetcher: resources.fetcher, parser: resources.parser, config, log })
  const [{ createMcpServer }, { StdioServerTransport }] = await Promise.all([import('../mcp/server'), import('@modelcontextprotocol/sdk/server/stdio.js')])
  const server = createMcpServer({ ...resources, config, scraper, engine: runner }, tenant)
  server.onerror = (err) => log.warn('MCP message refused', { error: err.message })

  const ended = new Promise<string>((resolve) => {
    server.onclose = () => resolve('closed')
    process.stdin.once('end', () => resolve('stdin ended'))
    process.stdin.once('close', () => resolve('stdin closed'))
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve(signal))
  })
  runner.start()
  await server.connect(new StdioServerTransport())
  log.info('trawl mcp ready on stdio', { tenant, data_dir: config.dataDir })
  const why = await ended
  log.info('trawl mcp stopping', { why })
  // The runs it was crawling checkpoint and stay running, unheld; whichever trawl opens the data dir next resumes them.
  await runner.stop()
  await server.close()
  await resources.close()
  return 0
}
