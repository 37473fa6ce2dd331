/**
 * MCP servers at Gatehouse URLs: `/v1/mcp/{server}/mcp` (streamable HTTP; `{server}` is the
 * server's slug in the caller's workspace, or its id). Each request runs the pipeline as the `mcp`
 * operation (authentication, a usage record per request carrying the server and, for `tools/call`,
 * the tool, rate limits), then the relay (mcp/relay.ts). No provider or config is resolved.
 */
import type { FastifyInstance } from 'fastify'
import { GatewayError } from '../../core/errors.ts'
import type { PipelineDeps } from '../../pipeline/build.ts'
import type { RouteSpec } from '../../pipeline/route-spec.ts'
import type { Answer, Exchange, Operation } from '../../pipeline/stage.ts'
import { relayMcp, type McpRelayFacts, type McpRelayRequest } from '../../mcp/relay.ts'
import { findMcpServer, requireMcpScope, requireUserAccess } from '../../mcp/servers.ts'
import { McpUpstreamAuth } from '../../mcp/upstream-auth.ts'
import { OPENAI_FORMAT, pipelineHandler } from '../pipeline-route.ts'

export const MCP_OPERATION: Operation = { name: 'mcp', endpointType: 'mcp', format: 'openai', textual: false, cacheable: false }

export const MCP_PATH = '/v1/mcp/:server/mcp'

async function serve(exchange: Exchange, method: McpRelayRequest['method'], auth: McpUpstreamAuth): Promise<Answer> {
  const { context, facts } = exchange
  requireMcpScope(context.principal.scopes)
  const server = findMcpServer(context.runtime, context.workspaceId, exchange.params.server ?? '')
  requireUserAccess(server, context.principal.userId)
  const relayFacts: McpRelayFacts = { method: null, toolName: null, denied: false }
  facts.mcp = { serverId: server.record.id, method: null, toolName: null }
  try {
    const answer = await relayMcp(server, { method, headers: exchange.headers, body: exchange.rawBody, signal: context.signal }, auth, relayFacts)
    if (relayFacts.denied) facts.errorCode = 'mcp_tool_denied'
    Object.assign(exchange.responseHeaders, answer.headers)
    if (answer.kind === 'json') return { kind: 'json', status: answer.status, body: answer.body, usage: null }
    return { kind: 'relay', status: answer.status, headers: answer.headers, body: answer.body, eventStream: answer.eventStream }
  } finally {
    facts.mcp = { serverId: server.record.id, method: relayFacts.method, toolName: relayFacts.toolName }
  }
}

function mcpRoute(method: McpRelayRequest['method'], auth: McpUpstreamAuth): RouteSpec {
  return {
    operation: MCP_OPERATION,
    providerless: true,
    model: () => undefined,
    attempt: () => Promise.reject(new GatewayError('internal_error', 'MCP requests are relayed, never sent to a model provider')),
    answerUnrouted: (exchange) => serve(exchange, method, auth),
  }
}

export function registerMcpRoutes(app: FastifyInstance, deps: PipelineDeps): void {
  // One token cache for the server's lifetime: OAuth client-credentials tokens are reused across requests.
  const auth = new McpUpstreamAuth({ nowMs: deps.now })
  app.post(MCP_PATH, pipelineHandler(mcpRoute('POST', auth), deps, OPENAI_FORMAT))
  app.get(MCP_PATH, pipelineHandler(mcpRoute('GET', auth), deps, OPENAI_FORMAT))
  app.delete(MCP_PATH, pipelineHandler(mcpRoute('DELETE', auth), deps, OPENAI_FORMAT))
}
