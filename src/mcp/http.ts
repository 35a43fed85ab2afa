import { Type } from '@sinclair/typebox'
import { ValidationError } from '../http/errors'
import { route, type Route } from '../http/route'
import { Scraper } from '../scrape/scraper'
import type { Deps } from '../api/deps'

/**
 * POST /mcp on the management port: MCP's streamable HTTP transport, stateless (decision 96),
 * for the tenant of X-Tenant-Id. GET and DELETE (the event stream and session end of stateful
 * servers) are answered 405 by the app, as for any method a path does not serve. The SDK is
 * loaded by the first request, so a server that is never asked for MCP never loads it.
 */
export const mcpRoutes = (deps: Deps): Route[] => {
  // The scrape surface's scraper, on the management port's fetcher: the same client, address guard and parse workers.
  const mcp = { ...deps, scraper: new Scraper({ fetcher: deps.fetcher, parser: deps.parser, config: deps.config, log: deps.log }) }
  return [
    route({
      method: 'POST',
      path: '/mcp',
      summary: 'MCP (streamable HTTP): the scrape, crawl and extract tools for agents',
      description:
        'A JSON-RPC message or batch of the Model Context Protocol, answered as JSON. Stateless: no Mcp-Session-Id. Needs `Accept: application/json, text/event-stream`. Tools and their arguments: docs/mcp.md, or `tools/list`.',
      tag: 'mcp',
      body: Type.Unknown({ description: 'a JSON-RPC 2.0 message or batch' }),
      response: { status: 200, description: 'the JSON-RPC answer (202 with no body for notifications alone)' },
      handle: async ({ tenant, request, body }) => {
        if (body === undefined) throw ValidationError.of('body', 'is required: a JSON-RPC message')
        const { handleMcpRequest } = await import('./server')
        return handleMcpRequest(mcp, tenant, request, body)
      },
    }),
  ]
}
