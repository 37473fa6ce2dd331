/** Gemini `GenerateContentResponse` -> OpenAI chat completion, plus the pieces the stream reuses. */
import type { ResponseContext } from '../adapter.ts'
import { MalformedResponseError } from '../adapter.ts'
import type { ChatChoice, ChatResponse, FinishReason, TokenLogprob, ToolCall, Usage } from '../canonical.ts'
import { usageToOpenAI } from '../canonical.ts'
import { isRecord } from '../shared/errors.ts'
import { finishReasonFromTable, toOpenAIFinishReason, type FinishReasonTable } from '../shared/finish-reasons.ts'
import { syntheticToolCallId } from '../shared/tool-call-ids.ts'
import type { GoogleToolCallExtra } from './request.ts'
import type { GeminiCandidate, GeminiPart, GeminiResponse, GeminiUsageMetadata } from './types.ts'

export const geminiFinishReasons: FinishReasonTable = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  MALFORMED_FUNCTION_CALL: 'error',
  UNEXPECTED_TOOL_CALL: 'error',
  LANGUAGE: 'other',
  OTHER: 'other',
}

/** A finished candidate that called functions ended "for tool calls" in OpenAI terms; Gemini says STOP. */
export function geminiFinishReason(raw: string | undefined, calledTools: boolean): FinishReason {
  const reason = finishReasonFromTable(geminiFinishReasons, raw)
  return calledTools && reason.unified === 'stop' ? { unified: 'tool_calls', raw: reason.raw ?? 'STOP' } : reason
}

/** Output tokens include thinking tokens: Gemini bills them as output but counts them apart. */
export function usageFromGemini(metadata: GeminiUsageMetadata | undefined): Usage {
  const thoughts = metadata?.thoughtsTokenCount
  const usage: Usage = {
    inputTokens: (metadata?.promptTokenCount ?? 0) + (metadata?.toolUsePromptTokenCount ?? 0),
    outputTokens: (metadata?.candidatesTokenCount ?? 0) + (thoughts ?? 0),
  }
  if (metadata?.cachedContentTokenCount !== undefined) usage.cachedInputTokens = metadata.cachedContentTokenCount
  if (thoughts !== undefined) usage.reasoningTokens = thoughts
  return usage
}

export function toolCallFromPart(part: GeminiPart, id: string): ToolCall & GoogleToolCallExtra {
  const call = part.functionCall!
  const toolCall: ToolCall & GoogleToolCallExtra = {
    id: call.id ?? id,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
  }
  if (part.thoughtSignature) toolCall.extra_content = { google: { thought_signature: part.thoughtSignature } }
  return toolCall
}

const encoder = new TextEncoder()

export function logprobsFromGemini(result: GeminiCandidate['logprobsResult']): TokenLogprob[] | null {
  if (!result?.chosenCandidates) return null
  return result.chosenCandidates.map((chosen, position) => {
    const token = chosen.token ?? ''
    return {
      token,
      logprob: chosen.logProbability ?? 0,
      bytes: [...encoder.encode(token)],
      top_logprobs: (result.topCandidates?.[position]?.candidates ?? []).map((top) => ({
        token: top.token ?? '',
        logprob: top.logProbability ?? 0,
        bytes: [...encoder.encode(top.token ?? '')],
      })),
    }
  })
}

/** The text, reasoning and calls of a candidate's parts, in order. */
export interface SplitParts {
  text: string
  reasoning: string
  calls: GeminiPart[]
}

export function splitParts(parts: GeminiPart[] | undefined): SplitParts {
  const split: SplitParts = { text: '', reasoning: '', calls: [] }
  for (const part of parts ?? []) {
    if (part.functionCall) split.calls.push(part)
    else if (typeof part.text === 'string') {
      if (part.thought) split.reasoning += part.text
      else split.text += part.text
    }
  }
  return split
}

function choiceFromCandidate(candidate: GeminiCandidate, position: number, responseId: string): ChatChoice {
  const index = candidate.index ?? position
  const { text, reasoning, calls } = splitParts(candidate.content?.parts)
  const toolCalls = calls.map((part, callIndex) => toolCallFromPart(part, syntheticToolCallId(responseId, callIndex, index)))
  const message: ChatChoice['message'] = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text }
  if (reasoning !== '') message.reasoning_content = reasoning
  if (toolCalls.length > 0) message.tool_calls = toolCalls
  const choice: ChatChoice = {
    index,
    message,
    finish_reason: toOpenAIFinishReason(geminiFinishReason(candidate.finishReason, toolCalls.length > 0)),
  }
  const logprobs = logprobsFromGemini(candidate.logprobsResult)
  if (logprobs) choice.logprobs = { content: logprobs }
  return choice
}

/** Vertex AI stamps its responses; the Gemini API does not, and the context's time stands in. */
export function createdAt(response: GeminiResponse, context: ResponseContext): number {
  const stamped = response.createTime === undefined ? Number.NaN : Date.parse(response.createTime)
  return Number.isNaN(stamped) ? context.createdAt : Math.floor(stamped / 1000)
}

export function fromGeminiResponse(body: unknown, context: ResponseContext): ChatResponse {
  if (!isRecord(body) || (body.candidates !== undefined && !Array.isArray(body.candidates))) {
    throw new MalformedResponseError('expected a Gemini GenerateContentResponse')
  }
  const response = body as GeminiResponse
  const id = response.responseId ?? context.responseId
  const candidates = response.candidates ?? []
  // A prompt blocked before generation has no candidates, only the reason: one filtered choice.
  const choices: ChatChoice[] = candidates.length > 0
    ? candidates.map((candidate, position) => choiceFromCandidate(candidate, position, id))
    : [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: response.promptFeedback?.blockReason ? 'content_filter' : 'stop' }]
  return {
    id,
    object: 'chat.completion',
    created: createdAt(response, context),
    model: response.modelVersion ?? context.requestModel,
    choices,
    usage: usageToOpenAI(usageFromGemini(response.usageMetadata)),
  }
}
