/**
 * A relayed server's answer (an MCP server's, an A2A agent's) as the pipeline's: its protocol
 * headers on Gatehouse's response, then JSON the relay read, or the upstream's bytes as they come.
 */
import type { Answer, Exchange } from '../pipeline/stage.ts'
import type { RelayedAnswer } from '../relay/upstream-call.ts'

export function relayedAnswer(exchange: Exchange, answer: RelayedAnswer): Answer {
  Object.assign(exchange.responseHeaders, answer.headers)
  if (answer.kind === 'json') return { kind: 'json', status: answer.status, body: answer.body, usage: null }
  return { kind: 'relay', status: answer.status, headers: answer.headers, body: answer.body, eventStream: answer.eventStream }
}
