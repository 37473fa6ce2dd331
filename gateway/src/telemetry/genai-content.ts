/**
 * Message content on spans, for workspaces that opted in (GATEHOUSE_TRACE_CONTENT_WORKSPACES, and
 * only where the workspace's log level is `full`). Recorded as the GenAI convention's
 * `gen_ai.client.inference.operation.details` event with `gen_ai.input.messages`,
 * `gen_ai.system_instructions` and `gen_ai.output.messages` as JSON text. Everything goes through
 * the usage log's redaction (credential fields and key-shaped strings masked) and is capped.
 */
import type { Attributes } from '@opentelemetry/api'
import { redactValue } from '../usage/redact.ts'

export const CONTENT_EVENT = 'gen_ai.client.inference.operation.details'
/** The most characters one content attribute keeps; a longer one is cut with a note. */
export const MAX_CONTENT_CHARS = 64 * 1024

/** Workspaces whose message content may go on spans: ids or slugs, or `*` for every workspace. */
export function contentWorkspacesSetting(value: string | undefined): readonly string[] {
  return (value ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '')
}

export function contentAllowed(setting: readonly string[], workspace: { id: string; slug: string; logLevel: string } | undefined): boolean {
  if (workspace === undefined || workspace.logLevel !== 'full' || setting.length === 0) return false
  return setting.includes('*') || setting.includes(workspace.id) || setting.includes(workspace.slug)
}

function capped(value: unknown): string {
  const text = JSON.stringify(redactValue(value))
  return text.length <= MAX_CONTENT_CHARS ? text : `${text.slice(0, MAX_CONTENT_CHARS)}…[truncated ${text.length - MAX_CONTENT_CHARS} characters]`
}

type Part = { type: string; [field: string]: unknown }

function parts(content: unknown): Part[] {
  if (typeof content === 'string') return [{ type: 'text', content }]
  if (!Array.isArray(content)) return []
  return content.map((item) => {
    const part = item as { type?: unknown; text?: unknown } | null
    if (part !== null && typeof part === 'object' && typeof part.text === 'string') return { type: 'text', content: part.text }
    return { type: typeof part?.type === 'string' ? part.type : 'unknown' }
  })
}

/** The request's messages (chat, messages), prompt (completions) or input (embeddings, responses). */
export function inputContent(body: Record<string, unknown> | null): Attributes {
  if (body === null) return {}
  const attributes: Attributes = {}
  if (Array.isArray(body.messages)) {
    attributes['gen_ai.input.messages'] = capped(body.messages.map((message) => {
      const { role, content } = (message ?? {}) as { role?: unknown; content?: unknown }
      return { role: typeof role === 'string' ? role : 'user', parts: parts(content) }
    }))
  } else if (body.prompt !== undefined || body.input !== undefined) {
    attributes['gen_ai.input.messages'] = capped([{ role: 'user', parts: parts(body.prompt ?? body.input) }])
  }
  if (body.system !== undefined) attributes['gen_ai.system_instructions'] = capped(parts(body.system))
  return attributes
}

/** A JSON answer's messages (OpenAI choices, Anthropic content, completions text). */
export function outputContent(body: unknown): Attributes {
  if (typeof body !== 'object' || body === null) return {}
  const record = body as Record<string, unknown>
  if (Array.isArray(record.choices)) {
    return {
      'gen_ai.output.messages': capped(record.choices.map((choice) => {
        const { message, text, finish_reason: finishReason } = (choice ?? {}) as { message?: { role?: unknown; content?: unknown }; text?: unknown; finish_reason?: unknown }
        return { role: typeof message?.role === 'string' ? message.role : 'assistant', parts: parts(message?.content ?? text), finish_reason: finishReason ?? null }
      })),
    }
  }
  if (Array.isArray(record.content)) return { 'gen_ai.output.messages': capped([{ role: 'assistant', parts: parts(record.content), finish_reason: record.stop_reason ?? null }]) }
  return {}
}

/** Collects a stream's text (OpenAI deltas, Anthropic text deltas) into one output message. */
export class StreamedText {
  #text = ''

  add(chunk: unknown): void {
    if (this.#text.length > MAX_CONTENT_CHARS || typeof chunk !== 'object' || chunk === null) return
    const record = chunk as { choices?: Array<{ delta?: { content?: unknown }; text?: unknown }>; event?: unknown; data?: { delta?: { text?: unknown } } }
    const piece = record.choices?.[0]?.delta?.content ?? record.choices?.[0]?.text ?? (record.event === 'content_block_delta' ? record.data?.delta?.text : undefined)
    if (typeof piece === 'string') this.#text += piece
  }

  attributes(finishReason: string | null): Attributes {
    return { 'gen_ai.output.messages': capped([{ role: 'assistant', parts: [{ type: 'text', content: this.#text }], finish_reason: finishReason }]) }
  }
}
