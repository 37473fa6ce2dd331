/**
 * Request validation for chat and text completions, exactly as the spec's body tables and Limits
 * table say, plus the design's decisions on its open points (best_of, max_tokens on reasoning
 * models). A violated bound is a 400 naming the `param`; no upstream call is made.
 */
import { invalidParameter } from '../core/errors.ts'
import {
  type Body,
  checkNumber,
  optionalBoolean,
  optionalLogitBias,
  optionalN,
  optionalNumber,
  optionalObject,
  optionalSeed,
  optionalStop,
  optionalString,
  penalties,
  requireString,
  sampling,
  streamOptionsOnlyWithStream,
} from './checks.ts'

const MESSAGE_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function'])
const TOOL_CHOICE_WORDS = new Set(['none', 'auto', 'required'])
const FUNCTION_CALL_WORDS = new Set(['none', 'auto'])

/** Reasoning-series models refuse `max_tokens` (o1, o3, o4-mini, gpt-5 ...). */
export function isReasoningModel(model: string): boolean {
  const bare = model.startsWith('@') ? model.slice(model.indexOf('/') + 1) : model
  return /^(o\d+)(-|$)/.test(bare) || /^gpt-5(\b|-|\.)/.test(bare)
}

function messages(body: Body): void {
  const value = body.messages
  if (value === undefined || value === null) throw invalidParameter('messages', `'messages' is required`)
  if (!Array.isArray(value)) throw invalidParameter('messages', `'messages' must be an array`)
  if (value.length < 1) throw invalidParameter('messages', `'messages' must contain at least 1 message`)
  value.forEach((message: unknown, index) => {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      throw invalidParameter(`messages.${index}`, `each message must be an object`)
    }
    const role = (message as Body).role
    if (typeof role !== 'string' || !MESSAGE_ROLES.has(role)) {
      throw invalidParameter(`messages.${index}.role`, `message role must be one of system, developer, user, assistant, tool, function`)
    }
  })
}

function functionTools(body: Body, name: 'tools' | 'functions', min: number): void {
  const value = body[name]
  if (value === undefined || value === null) return
  if (!Array.isArray(value)) throw invalidParameter(name, `'${name}' must be an array`)
  if (value.length < min) throw invalidParameter(name, `'${name}' must contain at least ${min} item`)
  if (value.length > 128) throw invalidParameter(name, `'${name}' takes at most 128 items, got ${value.length}`)
  if (name === 'tools') {
    value.forEach((tool: unknown, index) => {
      if (typeof tool !== 'object' || tool === null || (tool as Body).type !== 'function') {
        throw invalidParameter(`tools.${index}.type`, `only function tools are supported`)
      }
    })
  }
}

function namedFunctionChoice(value: unknown, param: string, words: Set<string>, shape: 'tool' | 'function'): void {
  if (typeof value === 'string') {
    if (!words.has(value)) throw invalidParameter(param, `'${param}' must be one of ${[...words].join(', ')} or an object naming a function`)
    return
  }
  const named = shape === 'tool' ? (value as { function?: { name?: unknown } } | null)?.function?.name : (value as { name?: unknown } | null)?.name
  if (typeof value !== 'object' || value === null || typeof named !== 'string') {
    throw invalidParameter(param, `'${param}' must be one of ${[...words].join(', ')} or an object naming a function`)
  }
}

export function validateChatRequest(body: Body): void {
  const model = requireString(body, 'model')
  messages(body)
  penalties(body)
  sampling(body)
  optionalLogitBias(body)
  optionalBoolean(body, 'logprobs')
  optionalNumber(body, 'top_logprobs', { integer: true, min: 0, max: 20 })
  if (body.top_logprobs !== undefined && body.top_logprobs !== null && body.logprobs !== true) {
    throw invalidParameter('top_logprobs', `'top_logprobs' requires 'logprobs' to be true`)
  }
  optionalNumber(body, 'max_tokens', { integer: true, min: 1 })
  if (body.max_tokens !== undefined && body.max_tokens !== null && isReasoningModel(model)) {
    throw invalidParameter('max_tokens', `'max_tokens' is not supported with reasoning model '${model}'; use 'max_completion_tokens' instead`)
  }
  optionalNumber(body, 'max_completion_tokens', { integer: true, min: 1 })
  optionalN(body)
  optionalObject(body, 'response_format')
  optionalSeed(body)
  optionalStop(body)
  streamOptionsOnlyWithStream(body)
  optionalObject(body, 'thinking')
  if (body.thinking) optionalNumber(body.thinking as Body, 'budget_tokens', { integer: true, min: 0 })
  functionTools(body, 'tools', 0)
  if (body.tool_choice !== undefined && body.tool_choice !== null) namedFunctionChoice(body.tool_choice, 'tool_choice', TOOL_CHOICE_WORDS, 'tool')
  optionalBoolean(body, 'parallel_tool_calls')
  optionalString(body, 'user')
  functionTools(body, 'functions', 1)
  if (body.function_call !== undefined && body.function_call !== null) namedFunctionChoice(body.function_call, 'function_call', FUNCTION_CALL_WORDS, 'function')
}

function prompt(body: Body): void {
  const value = body.prompt
  if (value === undefined || value === null || typeof value === 'string') return
  const isTokens = (item: unknown): boolean => Array.isArray(item) && item.every((token) => Number.isInteger(token))
  if (Array.isArray(value) && (value.every((item) => typeof item === 'string') || isTokens(value) || value.every(isTokens))) return
  throw invalidParameter('prompt', `'prompt' must be a string, an array of strings, an array of tokens, or an array of token arrays`)
}

export function validateCompletionRequest(body: Body): void {
  requireString(body, 'model')
  prompt(body)
  optionalBoolean(body, 'echo')
  penalties(body)
  sampling(body)
  optionalLogitBias(body)
  optionalNumber(body, 'logprobs', { integer: true, min: 0, max: 5 })
  optionalNumber(body, 'max_tokens', { integer: true, min: 0 })
  optionalN(body)
  optionalSeed(body)
  optionalStop(body)
  streamOptionsOnlyWithStream(body)
  optionalString(body, 'suffix')
  optionalString(body, 'user')
  const bestOf = body.best_of
  if (bestOf !== undefined && bestOf !== null) {
    checkNumber(bestOf, 'best_of', { integer: true, min: 0, max: 20 })
    const n = typeof body.n === 'number' ? body.n : 1
    // The spec says "greater than n"; OpenAI accepts equal, and so do we (DESIGN decision).
    if (body.n !== undefined && body.n !== null && (bestOf as number) < n) {
      throw invalidParameter('best_of', `'best_of' must be at least 'n' (${n}), got ${String(bestOf)}`)
    }
    if (body.stream === true) throw invalidParameter('best_of', `'best_of' cannot be used with 'stream'`)
  }
}

export function validateEmbeddingsRequest(body: Body): void {
  requireString(body, 'model')
  optionalNumber(body, 'dimensions', { integer: true, min: 1 })
  const format = body.encoding_format
  if (format !== undefined && format !== 'float' && format !== 'base64') throw invalidParameter('encoding_format', `'encoding_format' must be 'float' or 'base64'`)
  const input = body.input
  if (input === undefined || input === null) throw invalidParameter('input', `'input' is required`)
  if (typeof input !== 'string' && (!Array.isArray(input) || input.length === 0)) {
    throw invalidParameter('input', `'input' must be a string or a non-empty array`)
  }
}
