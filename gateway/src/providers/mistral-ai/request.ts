/**
 * OpenAI chat request -> Mistral chat request. The shapes are close, but Mistral rejects fields it
 * does not know (HTTP 422), so the body is rebuilt from an allow-list: renamed fields are renamed,
 * and every other field is left out with a warning.
 */
import type { TargetContext, Translated } from '../adapter.ts'
import type { ChatMessage, ChatRequest, Warning } from '../canonical.ts'
import { unsupportedParameter } from '../shared/warnings.ts'

/** Fields Mistral's chat API takes under the same name and meaning as OpenAI's (plus its own). */
const passedFields = new Set([
  'model', 'messages', 'temperature', 'top_p', 'max_tokens', 'stream', 'stop', 'response_format', 'tools', 'tool_choice',
  'presence_penalty', 'frequency_penalty', 'n', 'prediction', 'parallel_tool_calls', 'metadata',
  // Mistral's own: a client that targets Mistral may send them.
  'random_seed', 'safe_prompt', 'prompt_mode',
])

/** OpenAI names Mistral spells differently; mapped after the copy. */
const renamedFields = new Set(['max_completion_tokens', 'seed'])

// Mistral always reports usage on the last stream chunk, so `stream_options.include_usage` is met without sending it.
const satisfiedWithoutSending = new Set(['stream_options'])

/** Mistral has no `developer` role; it is the same instruction channel as `system`. */
function mistralMessage(message: ChatMessage): ChatMessage {
  return message.role === 'developer' ? { ...message, role: 'system' } : message
}

export function toMistralChat(request: ChatRequest, target: TargetContext, path: string): Translated {
  const warnings: Warning[] = []
  const body: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(request)) {
    if (value === undefined || value === null) continue
    if (passedFields.has(key)) body[key] = value
    else if (renamedFields.has(key)) continue
    else if (!satisfiedWithoutSending.has(key)) warnings.push(unsupportedParameter(key, 'Mistral has no equivalent; the field was not sent'))
  }
  // `max_completion_tokens` is the newer name; when both are set it wins, as at OpenAI.
  if (request.max_completion_tokens != null) body.max_tokens = request.max_completion_tokens
  if (request.seed != null && request.random_seed == null) body.random_seed = request.seed
  if (request.tool_choice === 'required') body.tool_choice = 'any'
  body.model = target.upstreamModel
  body.messages = request.messages.map(mistralMessage)
  return { upstream: { method: 'POST', path, headers: {}, body }, warnings }
}
