/** Mistral embeddings: OpenAI's shape, with `dimensions` named `output_dimension` and no `user`. */
import type { JsonOperation } from '../adapter.ts'
import type { EmbeddingsRequest, EmbeddingsResponse } from '../canonical.ts'
import { openAIShapedAdapter } from '../openai/index.ts'
import { unsupportedParameter } from '../shared/warnings.ts'

const openAIEmbeddings = openAIShapedAdapter({ kind: 'mistral-ai', defaultBaseUrl: null }).embeddings!

export const mistralEmbeddings: JsonOperation<EmbeddingsRequest, EmbeddingsResponse> = {
  ...openAIEmbeddings,
  toUpstream(request, target) {
    const { dimensions, user, ...rest } = request
    const translated = openAIEmbeddings.toUpstream({ ...rest, ...(dimensions != null && { output_dimension: dimensions }) } as EmbeddingsRequest, target)
    if (user != null) translated.warnings.push(unsupportedParameter('user', 'Mistral has no end-user field; it was not sent'))
    return translated
  },
}
