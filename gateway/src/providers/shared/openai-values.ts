/**
 * OpenAI fields that many providers lack but that clients often send at their default value
 * (`n: 1`, `presence_penalty: 0`...). Set to the default they ask for nothing and need no warning;
 * any other value is a warning. Adapters list these fields as handled and call this instead.
 */
import { invalidParameter } from '../../core/errors.ts'
import type { ChatRequest, Warning } from '../canonical.ts'
import { unsupportedParameter } from './warnings.ts'

export const defaultValuedFields: readonly string[] = ['n', 'logprobs', 'presence_penalty', 'frequency_penalty', 'store']

export function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value)
}

/** OpenAI `stop` (a string or a list) as a list; null when it asks for nothing. */
export function stopList(stop: ChatRequest['stop']): string[] | null {
  const list = typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop : []
  const nonEmpty = list.filter((sequence) => typeof sequence === 'string' && sequence !== '')
  return nonEmpty.length > 0 ? nonEmpty : null
}

/**
 * For providers that answer one choice per request: `n` above 1 is refused (400 naming `n`) before
 * any upstream call, since answering fewer choices than asked would silently break the caller.
 */
export function requireSingleChoice(request: { n?: unknown }, provider: string): void {
  if (isNumber(request.n) && request.n !== 1) {
    throw invalidParameter('n', `${provider} returns one choice per request; send 'n: 1' or route to a provider that returns several`)
  }
}

export function nonDefaultValueWarnings(request: ChatRequest, provider: string): Warning[] {
  const warnings: Warning[] = []
  requireSingleChoice(request, provider)
  if (request.logprobs === true) warnings.push(unsupportedParameter('logprobs', `${provider} returns no log probabilities`))
  for (const penalty of ['presence_penalty', 'frequency_penalty'] as const) {
    const value = request[penalty]
    if (isNumber(value) && value !== 0) warnings.push(unsupportedParameter(penalty, `${provider} has no repetition penalties`))
  }
  if (request.store === true) warnings.push(unsupportedParameter('store', `${provider} does not store completions`))
  return warnings
}
