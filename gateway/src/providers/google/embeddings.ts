/**
 * OpenAI embeddings <-> Gemini `embedContent` (one text) and `batchEmbedContents` (a list). The
 * Gemini API reports no token counts for embeddings, so usage is zero.
 */
import type { JsonOperation } from '../adapter.ts'
import { MalformedResponseError } from '../adapter.ts'
import type { EmbeddingsRequest, EmbeddingsResponse } from '../canonical.ts'
import { invalidParameter } from '../../core/errors.ts'
import { encodingFormatWarnings, floatEmbeddingsResponse, textInputs } from '../shared/embeddings.ts'
import { isRecord } from '../shared/errors.ts'
import { unhandledFieldWarnings } from '../shared/warnings.ts'

const handledFields = new Set(['model', 'input', 'encoding_format', 'dimensions', 'task_type'])

interface GeminiEmbedRequest {
  model?: string
  content: { parts: Array<{ text: string }> }
  taskType?: string
  outputDimensionality?: number
}

/** `task_type` (RETRIEVAL_QUERY, SEMANTIC_SIMILARITY...) is accepted as an extra field, as other gateways do. */
function embedRequest(text: string, request: EmbeddingsRequest, model?: string): GeminiEmbedRequest {
  return {
    ...(model !== undefined && { model }),
    content: { parts: [{ text }] },
    ...(typeof request.task_type === 'string' && { taskType: request.task_type }),
    ...(request.dimensions !== undefined && { outputDimensionality: request.dimensions }),
  }
}

function vectorsOf(body: unknown): number[][] {
  if (isRecord(body) && isRecord(body.embedding) && Array.isArray(body.embedding.values)) return [body.embedding.values as number[]]
  if (isRecord(body) && Array.isArray(body.embeddings)) {
    return body.embeddings.map((embedding) => {
      if (!isRecord(embedding) || !Array.isArray(embedding.values)) throw new MalformedResponseError('expected embeddings[].values')
      return embedding.values as number[]
    })
  }
  throw new MalformedResponseError('expected a Gemini embedContent or batchEmbedContents response')
}

export const geminiEmbeddings: JsonOperation<EmbeddingsRequest, EmbeddingsResponse> = {
  toUpstream(request, target) {
    const texts = textInputs(request.input)
    if (!texts) throw invalidParameter('input', 'Gemini embeddings accept text input only, not token ids')
    const model = `models/${target.upstreamModel}`
    const single = typeof request.input === 'string'
    const body = single ? embedRequest(texts[0]!, request) : { requests: texts.map((text) => embedRequest(text, request, model)) }
    return {
      upstream: { method: 'POST', path: `/${model}:${single ? 'embedContent' : 'batchEmbedContents'}`, headers: {}, body },
      warnings: [...unhandledFieldWarnings(request, handledFields, 'Gemini embeddings'), ...encodingFormatWarnings(request, 'Gemini')],
    }
  },
  fromUpstream: (body, context) => floatEmbeddingsResponse(vectorsOf(body), context.requestModel, 0),
  usage: (response) => ({ inputTokens: response.usage.prompt_tokens, outputTokens: 0 }),
}
