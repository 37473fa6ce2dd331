/**
 * The text guardrails judge. Before the request: the last user turn (chat and messages), the
 * prompt (completions), or the input (responses). After: the answer's text, tool-call arguments
 * included; for streams, the text each chunk adds (OpenAI chunks, Anthropic and Responses API events).
 */
import { chunkValue } from '../core/raw-json.ts'
type Json = Record<string, unknown>

function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  let text = ''
  for (const part of content) {
    if (typeof part !== 'object' || part === null) continue
    const block = part as Json
    if (typeof block.text === 'string') text += (text ? '\n' : '') + block.text
  }
  return text
}

export function requestText(body: Readonly<Json> | null): string {
  if (body === null) return ''
  if (Array.isArray(body.messages)) {
    const messages = body.messages as Json[]
    const last = messages.findLast((message) => message.role === 'user')
    return last ? contentText(last.content) : ''
  }
  if (typeof body.prompt === 'string') return body.prompt
  if (Array.isArray(body.prompt)) return body.prompt.filter((p) => typeof p === 'string').join('\n')
  if (typeof body.input === 'string') return body.input
  if (Array.isArray(body.input)) {
    const last = (body.input as Json[]).findLast((item) => item.role === 'user')
    return last ? contentText(last.content) : ''
  }
  return ''
}

function toolArguments(calls: unknown): string {
  if (!Array.isArray(calls)) return ''
  return calls.map((call) => String(((call as Json).function as Json | undefined)?.arguments ?? '')).join('\n')
}

/** The text of a non-streamed answer (OpenAI chat or completions, Anthropic messages, responses). */
export function answerText(body: unknown): string {
  if (typeof body !== 'object' || body === null) return ''
  const answer = body as Json
  if (Array.isArray(answer.choices)) {
    const choice = (answer.choices[0] ?? {}) as Json
    if (typeof choice.text === 'string') return choice.text
    const message = (choice.message ?? {}) as Json
    const tools = toolArguments(message.tool_calls)
    return [contentText(message.content), tools].filter(Boolean).join('\n')
  }
  if (Array.isArray(answer.content)) {
    return (answer.content as Json[]).map((block) => (block.type === 'tool_use' ? JSON.stringify(block.input ?? {}) : typeof block.text === 'string' ? block.text : '')).filter(Boolean).join('\n')
  }
  if (typeof answer.output_text === 'string') return answer.output_text
  // A response object (the Responses API): its message items' output_text parts, and function call arguments.
  if (Array.isArray(answer.output)) {
    return (answer.output as Json[]).flatMap((item) => {
      if (item.type === 'function_call' && typeof item.arguments === 'string') return [item.arguments]
      if (!Array.isArray(item.content)) return []
      return (item.content as Json[]).map((part) => (typeof part.text === 'string' ? part.text : '')).filter(Boolean)
    }).join('\n')
  }
  return ''
}

/** The text one stream chunk adds: OpenAI chat/completions deltas, Anthropic `{event, data}` deltas, Responses API deltas. */
export function chunkText(received: unknown): string {
  // A relayed chunk is the provider's JSON text: parse it to read its deltas.
  const chunk = chunkValue(received)
  if (typeof chunk !== 'object' || chunk === null) return ''
  const value = chunk as Json
  if (Array.isArray(value.choices)) {
    let text = ''
    for (const choice of value.choices as Json[]) {
      if (typeof choice.text === 'string') text += choice.text
      const delta = choice.delta as Json | undefined
      if (!delta) continue
      if (typeof delta.content === 'string') text += delta.content
      if (Array.isArray(delta.tool_calls)) text += toolArguments(delta.tool_calls)
    }
    return text
  }
  const data = (value.data ?? value) as Json
  if (data.type === 'content_block_delta') {
    const delta = (data.delta ?? {}) as Json
    if (typeof delta.text === 'string') return delta.text
    if (typeof delta.partial_json === 'string') return delta.partial_json
  }
  // Responses API events: answer text and function-call arguments.
  if ((data.type === 'response.output_text.delta' || data.type === 'response.function_call_arguments.delta') && typeof data.delta === 'string') return data.delta
  return ''
}
