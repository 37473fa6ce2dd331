/**
 * OpenAI embeddings <-> Vertex AI `:predict` for Google embedding models: one instance per text,
 * one prediction per instance, with a token count per prediction that adds up to the usage.
 */
import type { JsonOperation } from '../adapter.ts'
import { MalformedResponseError } from '../adapter.ts'
import type { EmbeddingsRequest, EmbeddingsResponse } from '../canonical.ts'
import { invalidParameter } from '../../core/errors.ts'
import { encodingFormatWarnings, floatEmbeddingsResponse, textInputs } from '../shared/embeddings.ts'
import { isRecord } from '../shared/errors.ts'
import { unhandledFieldWarnings } from '../shared/warnings.ts'
import { vertexModelPath } from './paths.ts'

const handledFields = new Set(['model', 'input', 'encoding_format', 'dimensions', 'task_type'])

interface Prediction {
  values: number[]
  tokenCount: number
}

function predictionsOf(body: unknown): Prediction[] {
  if (!isRecord(body) || !Array.isArray(body.predictions)) throw new MalformedResponseError('expected a Vertex AI predict response')
  return body.predictions.map((prediction) => {
    const embeddings = isRecord(prediction) && isRecord(prediction.embeddings) ? prediction.embeddings : null
    if (!embeddings || !Array.isArray(embeddings.values)) throw new MalformedResponseError('expected predictions[].embeddings.values')
    const statistics = isRecord(embeddings.statistics) ? embeddings.statistics : {}
    return { values: embeddings.values as number[], tokenCount: typeof statistics.token_count === 'number' ? statistics.token_count : 0 }
  })
}

export const vertexEmbeddings: JsonOperation<EmbeddingsRequest, EmbeddingsResponse> = {
  toUpstream(request, target) {
    const texts = textInputs(request.input)
    if (!texts) throw invalidParameter('input', 'Vertex AI embeddings accept text input only, not token ids')
    const taskType = typeof request.task_type === 'string' ? request.task_type : undefined
    const body = {
      instances: texts.map((content) => (taskType ? { content, task_type: taskType } : { content })),
      ...(request.dimensions !== undefined && { parameters: { outputDimensionality: request.dimensions } }),
    }
    return {
      upstream: { method: 'POST', path: `${vertexModelPath(target, 'google')}:predict`, headers: {}, body },
      warnings: [...unhandledFieldWarnings(request, handledFields, 'Vertex AI embeddings'), ...encodingFormatWarnings(request, 'Vertex AI')],
    }
  },
  fromUpstream(body, context) {
    const predictions = predictionsOf(body)
    const tokens = predictions.reduce((sum, prediction) => sum + prediction.tokenCount, 0)
    return floatEmbeddingsResponse(predictions.map((prediction) => prediction.values), context.requestModel, tokens)
  },
  usage: (response) => ({ inputTokens: response.usage.prompt_tokens, outputTokens: 0 }),
}
