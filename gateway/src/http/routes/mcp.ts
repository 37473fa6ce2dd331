/**
 * MCP servers at Gatehouse URLs: `/v1/mcp/{server}/mcp` (streamable HTTP; `{server}` is the
 * server's slug in the caller's workspace, or its id). Each request runs the pipeline as the `mcp`
 * operation (authentication, a usage record per request carrying the server and, for `tools/call`,
 * the tool, rate limits, the request's SERVER span), then the relay (mcp/relay.ts), whose call
 * upstream is a CLIENT span (`execute_tool {tool}` for `tools/call`). No provider or config is
 * resolved.
 */
import type { FastifyInstance } from 'fastify'
import { GatewayError } from '../../core/errors.ts'
import { tracedUpstreamCall } from '../../pipeline/attempt-span.ts'
import type { PipelineDeps } from '../../pipeline/build.ts'
import type { RouteSpec } from '../../pipeline/route-spec.ts'
import type { Answer, Exchange, Operation } from '../../pipeline/stage.ts'
import { admitMcp, relayMcp, type McpRelayFacts, type McpRelayRequest } from '../../mcp/relay.ts'
import { findMcpServer, requireMcpScope, requireUserAccess } from '../../mcp/servers.ts'
import { McpUpstreamAuth } from '../../mcp/upstream-auth.ts'
import { mcpCallSpan } from '../../telemetry/upstream-span.ts'
import { OPENAI_FORMAT, pipelineHandler } from '../pipeline-route.ts'
import { relayedAnswer } from '../relayed-answer.ts'

export const MCP_OPERATION: Operation = { name: 'mcp', endpointType: 'mcp', format: 'openai', textual: false, cacheable: false }

export const MCP_PATH = '/v1/mcp/:server/mcp'

async function serve(exchange: Exchange, method: McpRelayRequest['method'], auth: McpUpstreamAuth): Promise<Answer> {
  const { context, facts } = exchange
  requireMcpScope(context.principal.scopes)
  const server = findMcpServer(context.runtime, context.workspaceId, exchange.params.server ?? '')
  requireUserAccess(server, context.principal.userId)
  const relayFacts: McpRelayFacts = { method: null, toolName: null, denied: false }
  facts.mcp = { serverId: server.record.id, method: null, toolName: null }
  const request: McpRelayRequest = { method, headers: exchange.headers, body: exchange.rawBody, signal: context.signal }
  try {
    const { message, refusal } = admitMcp(server, request, relayFacts)
    if (refusal !== null) {
      facts.errorCode = 'mcp_tool_denied'
      return { kind: 'json', status: 200, body: refusal, usage: null }
    }
    return await tracedUpstreamCall(
      exchange,
      () => mcpCallSpan(server.record, relayFacts.method, relayFacts.toolName, method),
      async () => relayedAnswer(exchange, await relayMcp(server, request, message, auth)),
    )
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
