/**
 * OpenAI's `stream_options.include_usage` contract for chat completion streams: the whole request's
 * usage comes in one extra chunk, last before `[DONE]`, whose `choices` is empty; without
 * include_usage no chunk carries usage. Adapters that translate another family (Anthropic, Bedrock,
 * Gemini, Cohere) and Mistral put the usage on the finishing chunk instead; this turns such a chunk
 * into the two chunks OpenAI clients expect, or drops the usage nobody asked for.
 *
 * Chunks without usage (all but one per stream) pass through as they are, with no allocation: this
 * runs on every batch of every chat stream.
 */
interface ChunkLike {
  choices?: unknown[]
  usage?: unknown
}

function carriesUsage(chunk: unknown): chunk is ChunkLike {
  const usage = (chunk as ChunkLike | null)?.usage
  return usage !== undefined && usage !== null
}

export function openAIUsageChunks<Chunk extends ChunkLike>(chunk: Chunk, includeUsage: boolean): Chunk[] {
  if (!carriesUsage(chunk)) return [chunk]
  const { usage, ...rest } = chunk
  const choices = chunk.choices ?? []
  if (!includeUsage) return choices.length === 0 ? [] : [rest as Chunk]
  if (choices.length === 0) return [chunk]
  return [{ ...rest, usage: null } as unknown as Chunk, { ...rest, choices: [], usage } as unknown as Chunk]
}

/** One batch of a stream in the OpenAI form; the same array when no chunk in it carries usage. */
export function openAIUsageBatch<Chunk>(batch: readonly Chunk[], includeUsage: boolean): readonly Chunk[] {
  if (!batch.some(carriesUsage)) return batch
  return batch.flatMap((chunk) => (carriesUsage(chunk) ? (openAIUsageChunks(chunk as Chunk & ChunkLike, includeUsage) as Chunk[]) : [chunk]))
}
