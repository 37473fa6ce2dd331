/**
 * OpenAI embeddings <-> Cohere `/v2/embed`. Cohere needs an `input_type`: `search_document` unless
 * the request names another (`input_type`, an extra field, or the provider option `inputType`).
 */
import type { JsonOperation } from '../adapter.ts'
import { MalformedResponseError } from '../adapter.ts'
import type { EmbeddingsRequest, EmbeddingsResponse } from '../canonical.ts'
import { invalidParameter } from '../../core/errors.ts'
import { encodingFormatWarnings, floatEmbeddingsResponse, textInputs } from '../shared/embeddings.ts'
import { isRecord } from '../shared/errors.ts'
import { unhandledFieldWarnings } from '../shared/warnings.ts'

export const defaultCohereInputType = 'search_document'

const handledFields = new Set(['model', 'input', 'encoding_format', 'dimensions', 'input_type', 'truncate'])

function floatVectors(body: unknown): number[][] {
  const embeddings = isRecord(body) && isRecord(body.embeddings) ? body.embeddings.float : undefined
  if (!Array.isArray(embeddings)) throw new MalformedResponseError('expected a Cohere embed response with float embeddings')
  return embeddings as number[][]
}

export const cohereEmbeddings: JsonOperation<EmbeddingsRequest, EmbeddingsResponse> = {
  toUpstream(request, target) {
    const texts = textInputs(request.input)
    if (!texts) throw invalidParameter('input', 'Cohere embeddings accept text input only, not token ids')
    const inputType = typeof request.input_type === 'string' ? request.input_type : target.options.inputType || defaultCohereInputType
    const body = {
      model: target.upstreamModel,
      texts,
      input_type: inputType,
      embedding_types: ['float'],
      ...(request.dimensions !== undefined && { output_dimension: request.dimensions }),
      ...(typeof request.truncate === 'string' && { truncate: request.truncate }),
    }
    return {
      upstream: { method: 'POST', path: '/v2/embed', headers: {}, body },
      warnings: [...unhandledFieldWarnings(request, handledFields, 'Cohere embeddings'), ...encodingFormatWarnings(request, 'Cohere')],
    }
  },
  fromUpstream(body, context) {
    const meta = isRecord(body) && isRecord(body.meta) && isRecord(body.meta.billed_units) ? body.meta.billed_units : {}
    const tokens = typeof meta.input_tokens === 'number' ? meta.input_tokens : 0
    return floatEmbeddingsResponse(floatVectors(body), context.requestModel, tokens)
  },
  usage: (response) => ({ inputTokens: response.usage.prompt_tokens, outputTokens: 0 }),
}
