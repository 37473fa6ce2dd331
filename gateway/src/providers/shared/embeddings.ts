/** Embeddings input and output handling shared by providers that are not OpenAI-shaped. */
import type { EmbeddingsRequest, EmbeddingsResponse, Warning } from '../canonical.ts'
import { unsupportedParameter } from './warnings.ts'

/** The texts of an embeddings input, or null when it is token ids (which only OpenAI accepts). */
export function textInputs(input: EmbeddingsRequest['input']): string[] | null {
  if (typeof input === 'string') return [input]
  if (input.every((item): item is string => typeof item === 'string')) return input
  return null
}

/**
 * These providers answer with float vectors only. The OpenAI SDKs ask for base64 by default and
 * accept floats back, so the request is served, with a warning naming the difference.
 */
export function encodingFormatWarnings(request: EmbeddingsRequest, provider: string): Warning[] {
  return request.encoding_format === 'base64' ? [unsupportedParameter('encoding_format', `${provider} returns float vectors; they are returned as floats`)] : []
}

export function floatEmbeddingsResponse(vectors: number[][], model: string, promptTokens: number): EmbeddingsResponse {
  return {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  }
}
