/**
 * OpenAI's `stream_options.include_usage` contract for chat completion streams: the whole request's
 * usage comes in one extra chunk, last before `[DONE]`, whose `choices` is empty; every other chunk
 * has `usage: null`; without include_usage no chunk carries usage. Adapters that translate another
 * family (Anthropic, Bedrock, Gemini, Cohere) and Mistral put the usage on the finishing chunk
 * instead; this turns such a chunk into the two chunks OpenAI clients expect.
 */
interface ChunkLike {
  choices?: unknown[]
  usage?: unknown
}

export function openAIUsageChunks<Chunk extends ChunkLike>(chunk: Chunk, includeUsage: boolean): Chunk[] {
  const usage = chunk.usage
  if (usage === undefined || usage === null) return [includeUsage ? { ...chunk, usage: null } : chunk]
  const { usage: _usage, ...rest } = chunk
  const choices = chunk.choices ?? []
  if (!includeUsage) return choices.length === 0 ? [] : [rest as Chunk]
  if (choices.length === 0) return [chunk]
  return [{ ...rest, usage: null } as unknown as Chunk, { ...rest, choices: [], usage } as unknown as Chunk]
}
