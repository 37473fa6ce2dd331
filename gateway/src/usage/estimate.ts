/**
 * Token counts Gatehouse makes itself when a provider reports none (an OpenAI stream without
 * `include_usage`, a client that left mid-stream, a provider without usage fields). Text is pulled
 * from the known places of each wire format and counted with the o200k_base encoding (the current
 * OpenAI one; for other families it is an estimate, and records say so with `estimated`).
 */
import type { Usage } from '../providers/canonical.ts'

/**
 * The encoding's ranks cost about 66 MB of resident memory and about a second to build, and most
 * gateways never need them: providers report usage (OpenAI-shaped adapters always ask for it). So
 * they load in the background on the first count (`loadTokenizer`), not when a gateway starts.
 * Until they are there, a count is characters / 4, still marked estimated like every count here.
 */
let countTokens: ((text: string) => number) | null = null
let loading: Promise<void> | null = null

export function loadTokenizer(): Promise<void> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then((encoding) => {
    countTokens = encoding.countTokens
  })
  return loading
}

/** Text fields of requests and answers: chat, completions, embeddings, messages, responses. */
const TEXT_KEYS = new Set(['content', 'text', 'prompt', 'input', 'system', 'instructions', 'arguments', 'partial_json', 'thinking', 'refusal'])
/** Containers that may hold text fields further down. */
const NESTED_KEYS = new Set(['messages', 'choices', 'message', 'delta', 'content', 'tool_calls', 'function', 'output', 'input', 'data', 'content_block', 'system', 'parts', 'contents'])
const MAX_DEPTH = 12

function collect(value: unknown, out: string[], depth: number): void {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item === 'string') out.push(item)
      else collect(item, out, depth + 1)
    }
    return
  }
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (typeof item === 'string') {
      if (TEXT_KEYS.has(key)) out.push(item)
    } else if (NESTED_KEYS.has(key) || TEXT_KEYS.has(key)) {
      collect(item, out, depth + 1)
    }
  }
}

/** The text of a request or answer, its parts on their own lines; stream deltas joined as they are. */
export function textOf(value: unknown, separator = '\n'): string {
  const out: string[] = []
  if (typeof value === 'string') return value
  collect(value, out, 0)
  return out.join(separator)
}

export function countText(text: string): number {
  if (text.length === 0) return 0
  if (countTokens !== null) return countTokens(text)
  void loadTokenizer().catch(() => undefined)
  return Math.ceil(text.length / 4)
}

/** Usage counted from the request body and what was answered: an answer body, or the stream chunks relayed. */
export function estimateUsage(requestBody: unknown, answered: unknown, streamed = false): Usage {
  return { inputTokens: countText(textOf(requestBody)), outputTokens: countText(textOf(answered, streamed ? '' : '\n')) }
}
