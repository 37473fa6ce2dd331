/**
 * Mistral AI (api.mistral.ai): OpenAI-shaped chat and embeddings with Mistral's renames
 * (`max_completion_tokens` -> `max_tokens`, `seed` -> `random_seed`, tool_choice `required` ->
 * `any`), plus document OCR.
 */
import type { ProviderAdapter } from '../adapter.ts'
import { usageFromOpenAI } from '../canonical.ts'
import { mistralEmbeddings } from './embeddings.ts'
import { parseMistralError } from './errors.ts'
import { mistralOcr } from './ocr.ts'
import { toMistralChat } from './request.ts'
import { fromMistralChat, mistralStream } from './response.ts'

export const mistralAI: ProviderAdapter = {
  kind: 'mistral-ai',
  defaultBaseUrl: 'https://api.mistral.ai/v1',
  auth: { type: 'bearer' },
  chat: {
    framing: 'sse',
    toUpstream: (request, target) => toMistralChat(request, target, '/chat/completions'),
    fromUpstream: fromMistralChat,
    usage: (response) => usageFromOpenAI(response.usage),
    stream: mistralStream,
  },
  embeddings: mistralEmbeddings,
  ocr: mistralOcr,
  // Mistral's batch, fine-tuning and agent APIs live at paths of their own, not OpenAI's.
  passthrough: false,
  parseError: parseMistralError,
}
