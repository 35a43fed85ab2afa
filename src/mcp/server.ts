import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool as ToolInfo } from '@modelcontextprotocol/sdk/types.js'
import { DomainError, ValidationError } from '../core/errors'
import { VERSION } from '../version'
import { argumentsOf, TOOLS, type McpDeps } from './tools'

/**
 * trawl's MCP server (docs/mcp.md): the tools of tools.ts on the SDK's low-level Server, whose
 * tools take JSON Schema as it is, so the TypeBox schemas that check the arguments are the ones
 * tools/list shows (decision 96). Only the transports (stdio, streamable HTTP) load this module,
 * and with it the SDK.
 */
export function createMcpServer(deps: McpDeps, tenant: string): Server {
  const server = new Server(
    { name: 'trawl', title: 'trawl', version: VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        'trawl fetches and crawls web pages and turns them into clean markdown. scrape reads one page; crawl_start, crawl_status and crawl_export crawl a site and read its pages; extract pulls structured values out of a page with CSS selectors.',
    },
  )
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: LISTED }))
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = BY_NAME.get(request.params.name)
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `no tool named "${request.params.name}"; the tools are ${TOOLS.map((t) => t.name).join(', ')}`)
    try {
      const args = argumentsOf(tool, request.params.arguments)
      const answer = await tool.call(deps, tenant, args)
      return { content: answer.text.map((text) => ({ type: 'text', text: text === '' ? '(empty)' : text })) }
    } catch (err) {
      // A tool's failure is the agent's to read and act on, not a protocol error (MCP, "Error handling").
      return { isError: true, content: [{ type: 'text', text: failureText(err, deps, tool.name) }] }
    }
  })
  return server
}

/** What an agent is told of a failed call: the problem and its code, never a stack. */
function failureText(err: unknown, deps: McpDeps, tool: string): string {
  if (err instanceof ValidationError) return `invalid arguments: ${err.message}`
  if (err instanceof DomainError) return `${err.code}: ${err.message}`
  deps.log.error('MCP tool failed', { tool, error: String((err as Error)?.stack ?? err) })
  return 'internal: the tool failed unexpectedly; the server log has the details'
}

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]))

// A TypeBox schema is JSON Schema with symbols beside it; the JSON copy drops them.
const LISTED: ToolInfo[] = TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: JSON.parse(JSON.stringify(t.input)),
  annotations: { title: t.title, ...t.annotations },
}))

/**
 * One POST to /mcp, answered statelessly (decision 96): a server and a transport for this
 * request alone, the tenant the route checked, answers as JSON rather than an event stream.
 * `body` is the JSON the app already parsed; the transport would read the body again otherwise.
 */
export async function handleMcpRequest(deps: McpDeps, tenant: string, request: Request, body: unknown): Promise<Response> {
  const server = createMcpServer(deps, tenant)
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  await server.connect(transport)
  try {
    return await transport.handleRequest(request, { parsedBody: body })
  } finally {
    // The answer is whole by now (JSON, not a stream): nothing is left to send.
    await server.close()
  }
}
