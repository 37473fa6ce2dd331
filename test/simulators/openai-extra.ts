/**
 * OpenAI routes beyond inference that pass-through tests need answered faithfully rather than
 * echoed: the Responses API (JSON and its named-event stream), deletion results, binary file
 * content and a streamed Assistants run (audio routes: openai-audio.ts).
 */
import type { Exchange } from './base.ts'
import { estimateTokens, generateAnswer, sse, textOf } from './content.ts'
import { sequenceId } from './reply.ts'
import type { Route } from './router.ts'
import { jsonObject } from './router.ts'

const createdAt = 1_767_225_600

function responseObject(id: string, model: string, text: string, status: 'completed' | 'in_progress', input: string): Record<string, unknown> {
  const inputTokens = estimateTokens(input)
  const outputTokens = status === 'completed' ? estimateTokens(text) : 0
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    model,
    instructions: null,
    metadata: {},
    temperature: 1,
    top_p: 1,
    tools: [],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    output:
      status === 'completed'
        ? [{ id: `msg_${id.slice(5)}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }]
        : [],
    error: null,
    incomplete_details: null,
    previous_response_id: null,
    reasoning: { effort: null, generate_summary: null },
    max_output_tokens: null,
    text: { format: { type: 'text' } },
    truncation: 'disabled',
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
  }
}

/**
 * The Responses API's named-event stream, in its documented order: created, in_progress, the
 * message item and its text part opening, text deltas, the part and item closing, completed.
 * Every event carries an increasing `sequence_number`.
 */
function* responseEvents(response: Record<string, unknown>, pieces: string[], done: Record<string, unknown>): Generator<string> {
  let sequence = 0
  const itemId = `msg_${String(response.id).slice(5)}`
  const text = pieces.join('')
  const event = (type: string, payload: Record<string, unknown>): string => sse({ type, sequence_number: sequence++, ...payload }, type)
  const place = { item_id: itemId, output_index: 0, content_index: 0 }
  yield event('response.created', { response })
  yield event('response.in_progress', { response })
  yield event('response.output_item.added', { output_index: 0, item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] } })
  yield event('response.content_part.added', { ...place, part: { type: 'output_text', text: '', annotations: [] } })
  for (const delta of pieces) yield event('response.output_text.delta', { ...place, delta, logprobs: [] })
  yield event('response.output_text.done', { ...place, text, logprobs: [] })
  const part = { type: 'output_text', text, annotations: [] }
  yield event('response.content_part.done', { ...place, part })
  yield event('response.output_item.done', { output_index: 0, item: { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [part] } })
  yield event('response.completed', { response: done })
}

async function createResponse(exchange: Exchange): Promise<void> {
  const body = jsonObject(exchange.request.body) ?? {}
  const input = typeof body.input === 'string' ? body.input : textOf(body.input)
  const model = typeof body.model === 'string' ? body.model : 'gpt-4o'
  const id = sequenceId('resp_sim', exchange.sequence)
  const answer = generateAnswer(input, exchange.options)
  const done = responseObject(id, model, answer.text, 'completed', input)
  // A provider's own headers, of which a gateway should relay only some (request id, rate limits).
  const headers = { 'x-request-id': sequenceId('req_sim', exchange.sequence), 'openai-organization': 'simulator-org', 'x-ratelimit-remaining-requests': '9999' }
  if (body.stream !== true) return exchange.json(200, done, headers)
  await exchange.stream({ contentType: 'text/event-stream; charset=utf-8', headers, frames: responseEvents(responseObject(id, model, '', 'in_progress', input), answer.pieces, done) })
}

/** Deterministic bytes standing in for audio or file content: `size` bytes of a repeating pattern. */
export function pseudoBytes(size: number): Buffer {
  const bytes = Buffer.alloc(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff
  return bytes
}

function* runEvents(threadId: string, runId: string): Generator<string> {
  const run = { id: runId, object: 'thread.run', thread_id: threadId, status: 'queued' }
  yield sse(run, 'thread.run.created')
  yield sse({ ...run, status: 'in_progress' }, 'thread.run.in_progress')
  yield sse({ id: 'msg_sim', object: 'thread.message', thread_id: threadId, run_id: runId, role: 'assistant', status: 'in_progress', content: [] }, 'thread.message.created')
  yield sse({ id: 'msg_sim', object: 'thread.message.delta', delta: { content: [{ index: 0, type: 'text', text: { value: 'Hello' } }] } }, 'thread.message.delta')
  yield sse({ ...run, status: 'completed' }, 'thread.run.completed')
  yield 'event: done\ndata: [DONE]\n\n'
}

export const openaiExtraRoutes: Route[] = [
  { method: 'POST', pattern: /^\/v1\/responses$/, handle: createResponse },
  {
    method: 'GET',
    pattern: /^\/v1\/responses\/([^/]+)$/,
    handle: (exchange, [id]) => exchange.json(200, responseObject(id!, 'gpt-4o', 'A stored answer.', 'completed', 'stored question')),
  },
  { method: 'DELETE', pattern: /^\/v1\/responses\/([^/]+)$/, handle: (exchange, [id]) => exchange.json(200, { id, object: 'response', deleted: true }) },
  {
    method: 'DELETE',
    pattern: /^\/v1\/vector_stores\/([^/]+)$/,
    handle: (exchange, [id]) => exchange.json(200, { id, object: 'vector_store.deleted', deleted: true }),
  },
  {
    method: 'GET',
    pattern: /^\/v1\/files\/([^/]+)\/content$/,
    handle: (exchange, [id]) => exchange.raw(200, 'application/octet-stream', pseudoBytes(4096), { 'content-disposition': `attachment; filename="${id}.jsonl"` }),
  },
  {
    method: 'POST',
    pattern: /^\/v1\/threads\/([^/]+)\/runs$/,
    handle: async (exchange, [threadId]) => {
      if (jsonObject(exchange.request.body)?.stream !== true) return exchange.json(200, { id: sequenceId('run_sim', exchange.sequence), object: 'thread.run', thread_id: threadId, status: 'queued' })
      await exchange.stream({ contentType: 'text/event-stream', frames: runEvents(threadId!, sequenceId('run_sim', exchange.sequence)) })
    },
  },
]
