/**
 * Worst cases to reserve before a call, and the output a stream has produced so far.
 *
 * Input: the UTF-8 byte length of the request body. Tokenisers in use (BPE families) spend at least
 * one byte per token, so this bounds the prompt's tokens from above without a tokeniser; a budget
 * reserved from it is never short because the prompt was larger than guessed.
 * Output: the request's own cap (`max_tokens`, `max_completion_tokens`, `max_output_tokens`), else
 * `DEFAULT_OUTPUT_RESERVE_TOKENS`; a stream that outgrows it asks for more as it goes.
 */

export const DEFAULT_OUTPUT_RESERVE_TOKENS = 4_096

export function inputTokenBound(body: Record<string, unknown> | null): number {
  if (body === null) return 0
  return Buffer.byteLength(JSON.stringify(body), 'utf8')
}

export function statedOutputCap(body: Record<string, unknown> | null): number | null {
  if (body === null) return null
  for (const field of ['max_tokens', 'max_completion_tokens', 'max_output_tokens']) {
    const value = body[field]
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.ceil(value)
  }
  return null
}

const CONTENT_FIELD = '"content":"'

/**
 * Characters of `"content":"..."` string values in a relayed chunk's JSON text, without parsing it
 * (relayed chunks stay unparsed on purpose; escapes count as their source characters).
 */
export function relayedContentChars(text: string): number {
  let chars = 0
  let at = text.indexOf(CONTENT_FIELD)
  while (at !== -1) {
    let end = at + CONTENT_FIELD.length
    while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1
    chars += end - at - CONTENT_FIELD.length
    at = text.indexOf(CONTENT_FIELD, end)
  }
  return chars
}

/** Characters of generated text in one parsed stream chunk (OpenAI chunk or Anthropic `{event, data}`). */
export function generatedChars(chunk: unknown): number {
  if (chunk === null || typeof chunk !== 'object') return 0
  const record = chunk as Record<string, unknown>
  let chars = 0
  const choices = record.choices
  if (Array.isArray(choices)) {
    for (const choice of choices as Array<Record<string, unknown>>) {
      const delta = (choice.delta ?? {}) as Record<string, unknown>
      for (const field of ['content', 'reasoning_content', 'refusal']) if (typeof delta[field] === 'string') chars += (delta[field] as string).length
      if (Array.isArray(delta.tool_calls)) chars += JSON.stringify(delta.tool_calls).length
      if (typeof choice.text === 'string') chars += choice.text.length
    }
  }
  const data = record.data as Record<string, unknown> | undefined
  const delta = (data?.delta ?? null) as Record<string, unknown> | null
  if (delta) for (const field of ['text', 'partial_json', 'thinking']) if (typeof delta[field] === 'string') chars += (delta[field] as string).length
  return chars
}

/** A rough token count of streamed text (about four characters a token), rounded up. */
export const tokensOfChars = (chars: number): number => Math.ceil(chars / 4)
