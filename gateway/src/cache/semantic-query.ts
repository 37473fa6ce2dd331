/**
 * What semantic mode may answer, and what it compares. Only a request whose answer depends on its
 * last user turn alone, given everything else, is answered by similarity:
 *
 * - a chat completion or an Anthropic message whose last turn is the user's, in plain text;
 * - no tools or functions (the answer may be a call whose arguments quote the request exactly);
 * - one choice (`n` absent or 1).
 *
 * Everything else in the body (the model, the system prompt, the earlier turns, every parameter)
 * is the exact filter: it goes into the partition key, so two requests are compared only when all
 * of it is equal. Requests outside these rules are cached in simple mode (exact match) instead.
 */

/** A longer last turn is not embedded (embedding models take about 8,000 tokens). */
export const MAX_SEMANTIC_TEXT_CHARS = 24_000

const TOOL_FIELDS = ['tools', 'functions', 'tool_choice', 'function_call'] as const
const SEMANTIC_OPERATIONS = new Set(['chat', 'messages'])

export interface SemanticQuery {
  /** The last user turn's text: what is embedded. */
  readonly text: string
  /** The body without the last turn: the exact filter. */
  readonly filter: Record<string, unknown>
}

/** The text of a turn's content: a string, or text parts only (an image or a file makes it null). */
function plainText(content: unknown): string | null {
  if (typeof content === 'string') return content
  if (!Array.isArray(content) || content.length === 0) return null
  const texts: string[] = []
  for (const part of content) {
    if (typeof part !== 'object' || part === null) return null
    const { type, text } = part as { type?: unknown; text?: unknown }
    if (type !== 'text' || typeof text !== 'string') return null
    texts.push(text)
  }
  return texts.join('\n')
}

/** The semantic query of a request, or null when semantic mode cannot answer it safely. */
export function semanticQuery(operation: string, body: Record<string, unknown>): SemanticQuery | null {
  if (!SEMANTIC_OPERATIONS.has(operation)) return null
  if (TOOL_FIELDS.some((field) => body[field] !== undefined && body[field] !== null)) return null
  if (body.n !== undefined && body.n !== null && body.n !== 1) return null
  const messages = body.messages
  if (!Array.isArray(messages) || messages.length === 0) return null
  const last = messages[messages.length - 1] as { role?: unknown; content?: unknown } | null
  if (typeof last !== 'object' || last === null || last.role !== 'user') return null
  const keys = Object.keys(last)
  if (keys.some((key) => key !== 'role' && key !== 'content')) return null
  const text = plainText(last.content)
  if (text === null || text.trim() === '' || text.length > MAX_SEMANTIC_TEXT_CHARS) return null
  return { text, filter: { ...body, messages: messages.slice(0, -1) } }
}
