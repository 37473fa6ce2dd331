/**
 * Agent (A2A) servers at Gatehouse URLs: `POST /v1/agents/{server}` takes the agent's JSON-RPC
 * calls, and `GET /v1/agents/{server}/.well-known/agent-card.json` serves the agent's card with that
 * URL as its only interface and only the enabled skills (`{server}`: the server's slug in the
 * caller's workspace, or its id). Both need the `agents.invoke` scope and the server's user access.
 *
 * Each JSON-RPC call runs the pipeline as the `agents` operation (authentication, rate limits, a
 * usage record naming the server and the method, the request's SERVER span), then the relay
 * (agents/relay.ts), whose call to the agent is a CLIENT span (`invoke_agent {agent}` for the
 * message methods). The card is answered after authentication only: it calls no agent, so it is
 * neither limited nor recorded.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { GatewayError } from '../../core/errors.ts'
import { tracedUpstreamCall } from '../../pipeline/attempt-span.ts'
import { buildLocalPipeline, type PipelineDeps } from '../../pipeline/build.ts'
import type { RouteSpec } from '../../pipeline/route-spec.ts'
import type { Answer, Exchange, Operation } from '../../pipeline/stage.ts'
import { admitAgent, relayAgent, type AgentRelayFacts, type AgentRelayRequest } from '../../agents/relay.ts'
import { agentServerFor, type CompiledAgentServer } from '../../agents/servers.ts'
import { McpUpstreamAuth } from '../../mcp/upstream-auth.ts'
import { servedAgentCard } from '../../snapshot/agents.ts'
import { agentCallSpan } from '../../telemetry/upstream-span.ts'
import { OPENAI_FORMAT, pipelineHandler, serveExchange, startExchange } from '../pipeline-route.ts'
import { relayedAnswer } from '../relayed-answer.ts'

export const AGENTS_OPERATION: Operation = { name: 'agents', endpointType: 'a2a', format: 'openai', textual: false, cacheable: false }

export const AGENT_PATH = '/v1/agents/:server'
export const AGENT_CARD_PATH = `${AGENT_PATH}/.well-known/agent-card.json`

function serverOf(exchange: Exchange): CompiledAgentServer {
  const { context } = exchange
  return agentServerFor(context.runtime, context.workspaceId, exchange.params.server ?? '', context.principal.scopes, context.principal.userId)
}

async function relay(exchange: Exchange, auth: McpUpstreamAuth): Promise<Answer> {
  const server = serverOf(exchange)
  const { facts, context } = exchange
  const relayFacts: AgentRelayFacts = { method: null, refused: false }
  facts.agent = { serverId: server.record.id, method: null }
  const request: AgentRelayRequest = { headers: exchange.headers, body: exchange.rawBody, signal: context.signal }
  try {
    const { message, refusal } = admitAgent(request, relayFacts)
    if (refusal !== null) {
      facts.errorCode = 'a2a_method_refused'
      return { kind: 'json', status: 200, body: refusal, usage: null }
    }
    return await tracedUpstreamCall(
      exchange,
      () => agentCallSpan(server.record, message.method),
      async () => relayedAnswer(exchange, await relayAgent(server, request, auth)),
    )
  } finally {
    facts.agent = { serverId: server.record.id, method: relayFacts.method }
  }
}

/** The Gatehouse URL of the agent as the client reached it (the card's interface URL). */
function agentUrl(request: FastifyRequest, server: string): string {
  const host = String(request.headers['x-forwarded-host'] ?? request.headers.host ?? 'localhost').split(',')[0]!.trim()
  const protocol = String(request.headers['x-forwarded-proto'] ?? request.protocol).split(',')[0]!.trim()
  return `${protocol}://${host}/v1/agents/${encodeURIComponent(server)}`
}

function route(answer: (exchange: Exchange) => Promise<Answer>): RouteSpec {
  return {
    operation: AGENTS_OPERATION,
    providerless: true,
    model: () => undefined,
    attempt: () => Promise.reject(new GatewayError('internal_error', 'Agent calls are relayed, never sent to a model provider')),
    answerUnrouted: answer,
  }
}

export function registerAgentRoutes(app: FastifyInstance, deps: PipelineDeps): void {
  // One token cache for the server's lifetime: OAuth client-credentials tokens are reused across requests.
  const auth = new McpUpstreamAuth({ nowMs: deps.now })
  app.post(AGENT_PATH, pipelineHandler(route((exchange) => relay(exchange, auth)), deps, OPENAI_FORMAT))
  const cardRoute = route(() => Promise.reject(new GatewayError('internal_error', 'The card is answered locally')))
  const urls = new WeakMap<Exchange, string>()
  const card = buildLocalPipeline(cardRoute, deps, (exchange) => {
    const server = serverOf(exchange)
    return Promise.resolve({ kind: 'json', status: 200, body: servedAgentCard(server.record.card, urls.get(exchange)!, server.skills), usage: null })
  })
  app.get(AGENT_CARD_PATH, (request, reply) => {
    const exchange = startExchange(cardRoute, deps, card, request, reply)
    urls.set(exchange, agentUrl(request, exchange.params.server ?? ''))
    return serveExchange(card.run, exchange, reply, OPENAI_FORMAT)
  })
}
