/** Cohere (api.cohere.com): v2 chat with tools and streaming, embed, and rerank. */
import type { ProviderAdapter } from '../adapter.ts'
import { usageFromOpenAI } from '../canonical.ts'
import { cohereEmbeddings } from './embeddings.ts'
import { parseCohereError } from './errors.ts'
import { cohereRerank } from './rerank.ts'
import { toCohereChat } from './request.ts'
import { fromCohereChat } from './response.ts'
import { cohereStream } from './stream.ts'

export const cohere: ProviderAdapter = {
  kind: 'cohere',
  defaultBaseUrl: 'https://api.cohere.com',
  auth: { type: 'bearer' },
  chat: {
    framing: 'sse',
    toUpstream: toCohereChat,
    fromUpstream: fromCohereChat,
    usage: (response) => usageFromOpenAI(response.usage),
    stream: cohereStream,
  },
  embeddings: cohereEmbeddings,
  rerank: cohereRerank,
  passthrough: false,
  parseError: parseCohereError,
}
