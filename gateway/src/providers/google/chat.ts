/**
 * The Gemini chat operation, parameterised by where a model lives: the Gemini API and Vertex AI
 * serve the same bodies and streams under different paths.
 */
import type { StreamingOperation, TargetContext } from '../adapter.ts'
import type { ChatChunk, ChatRequest, ChatResponse } from '../canonical.ts'
import { usageFromOpenAI } from '../canonical.ts'
import { toGeminiRequest } from './request.ts'
import { fromGeminiResponse } from './response.ts'
import { geminiStream } from './stream.ts'

/** Path of a model resource, without the `:method` suffix, e.g. `/models/gemini-2.5-flash`. */
export type ModelPath = (target: TargetContext) => string

export function geminiChat(modelPath: ModelPath): StreamingOperation<ChatRequest, ChatResponse, ChatChunk> {
  return {
    framing: 'sse',
    toUpstream(request, target) {
      const { body, warnings } = toGeminiRequest(request)
      const method = request.stream ? 'streamGenerateContent?alt=sse' : 'generateContent'
      return { upstream: { method: 'POST', path: `${modelPath(target)}:${method}`, headers: {}, body }, warnings }
    },
    fromUpstream: fromGeminiResponse,
    usage: (response) => usageFromOpenAI(response.usage),
    stream: geminiStream,
  }
}
