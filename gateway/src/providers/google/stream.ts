/**
 * Gemini streams (`streamGenerateContent?alt=sse`) send one whole `GenerateContentResponse` per
 * event, each holding the next slice of every candidate. Each event becomes one chat chunk.
 * Function calls arrive complete, so each becomes one tool-call delta with its full arguments.
 */
import type { ResponseContext, StreamTransform, UpstreamEvent } from '../adapter.ts'
import { ProviderStreamError } from '../adapter.ts'
import type { ChatChunk, ChatChunkChoice, FinishReason, Usage } from '../canonical.ts'
import { emptyUsage, usageToOpenAI } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'
import { toOpenAIFinishReason } from '../shared/finish-reasons.ts'
import { syntheticToolCallId } from '../shared/tool-call-ids.ts'
import { parseGoogleError } from './errors.ts'
import { createdAt, geminiFinishReason, logprobsFromGemini, splitParts, toolCallFromPart, usageFromGemini } from './response.ts'
import type { GeminiCandidate, GeminiResponse } from './types.ts'

interface CandidateState {
  roleSent: boolean
  toolCalls: number
}

export interface GeminiStreamState {
  context: ResponseContext
  /** Gemini repeats its response id on every event; the first one seen names the stream. */
  id: string | null
  model: string | null
  created: number | null
  candidates: Map<number, CandidateState>
  usage: Usage
  finishReason: FinishReason
}

function candidateState(state: GeminiStreamState, index: number): CandidateState {
  let entry = state.candidates.get(index)
  if (!entry) {
    entry = { roleSent: false, toolCalls: 0 }
    state.candidates.set(index, entry)
  }
  return entry
}

function choiceDelta(state: GeminiStreamState, candidate: GeminiCandidate, position: number, id: string): ChatChunkChoice {
  const index = candidate.index ?? position
  const entry = candidateState(state, index)
  const { text, reasoning, calls } = splitParts(candidate.content?.parts)
  const delta: ChatChunkChoice['delta'] = {}
  if (!entry.roleSent) {
    delta.role = 'assistant'
    entry.roleSent = true
  }
  if (text !== '') delta.content = text
  if (reasoning !== '') delta.reasoning_content = reasoning
  if (calls.length > 0) {
    delta.tool_calls = calls.map((part) => {
      const callIndex = entry.toolCalls++
      return { index: callIndex, ...toolCallFromPart(part, syntheticToolCallId(id, callIndex, index)) }
    })
  }
  let finishReason: ChatChunkChoice['finish_reason'] = null
  if (candidate.finishReason) {
    const reason = geminiFinishReason(candidate.finishReason, entry.toolCalls > 0)
    if (index === 0) state.finishReason = reason
    finishReason = toOpenAIFinishReason(reason)
  }
  const choice: ChatChunkChoice = { index, delta, finish_reason: finishReason }
  const logprobs = logprobsFromGemini(candidate.logprobsResult)
  if (logprobs) choice.logprobs = { content: logprobs }
  return choice
}

export const geminiStream: StreamTransform<GeminiStreamState, ChatChunk> = {
  start: (context) => ({ context, id: null, model: null, created: null, candidates: new Map(), usage: emptyUsage(), finishReason: { unified: 'other' } }),

  step(state, event: UpstreamEvent) {
    if (!isRecord(event.data)) return []
    if (isRecord(event.data.error)) throw new ProviderStreamError(parseGoogleError(Number(event.data.error.code) || 500, {}, event.data))
    const response = event.data as GeminiResponse
    state.id ??= response.responseId ?? state.context.responseId
    state.model ??= response.modelVersion ?? state.context.requestModel
    state.created ??= createdAt(response, state.context)
    const choices = (response.candidates ?? []).map((candidate, position) => choiceDelta(state, candidate, position, state.id!))
    if (choices.length === 0 && response.promptFeedback?.blockReason) {
      state.finishReason = { unified: 'content_filter', raw: response.promptFeedback.blockReason }
      choices.push({ index: 0, delta: { role: 'assistant' }, finish_reason: 'content_filter' })
    }
    const chunk: ChatChunk = { id: state.id, object: 'chat.completion.chunk', created: state.created, model: state.model, choices }
    // Gemini reports cumulative usage; it rides on the chunk that ends the answer, as both arrive together.
    if (response.usageMetadata) {
      state.usage = usageFromGemini(response.usageMetadata)
      if (choices.some((choice) => choice.finish_reason !== null)) chunk.usage = usageToOpenAI(state.usage)
    }
    return choices.length > 0 || chunk.usage ? [chunk] : []
  },

  finish: (state) => ({ chunks: [], usage: state.usage, finishReason: state.finishReason }),
}
