/**
 * The one interface every guardrail check implements. A check is one module: its id, the schema
 * of its parameters (with the spec's defaults), and `compile`, which turns validated parameters
 * into a function run per request. Compiling happens once per snapshot, so regexes, JSON schemas
 * and word lists are built once, never on the request path.
 *
 * Checks that need no network return their outcome synchronously and cost microseconds; network
 * checks return a promise, run concurrently with the guardrail's other checks, and get an abort
 * signal that fires at their own timeout.
 */
import type { Dispatcher } from 'undici'
import type { z } from 'zod'
import type { EndpointType } from '../../core/exchange-types.ts'

export type Hook = 'beforeRequestHook' | 'afterRequestHook'

/** What a check reads. `text` is the request's user text (before) or the answer's text (after). */
export interface CheckInput {
  readonly hook: Hook
  readonly text: string
  /** The request body as the gateway will send it (after earlier mutating checks). */
  readonly body: Readonly<Record<string, unknown>> | null
  readonly metadata: Readonly<Record<string, unknown>>
  readonly endpointType: EndpointType
  /** The model the request names (its `model` field), when it names one. */
  readonly model: string | null
  /** The provider kind the request goes to, when known before dispatch (direct routes). */
  readonly providerKind: string | null
  /** Fires at the check's timeout or when the client leaves. */
  readonly signal: AbortSignal
}

export interface CheckOutcome {
  readonly verdict: boolean
  readonly explanation: string
  /** A mutating check's new request body (add prefix, inline image URLs). */
  readonly body?: Record<string, unknown>
}

export type CheckRun = (input: CheckInput) => CheckOutcome | Promise<CheckOutcome>

/** What checks that call out get from the gateway: the SSRF-safe dispatcher. */
export interface CheckDeps {
  readonly dispatcher: Dispatcher
}

export interface CompiledCheck {
  readonly run: CheckRun
  /** Milliseconds a network check may take; null: an inline check. */
  readonly timeoutMs: number | null
  /** An error (timeout, unreachable, malformed answer) fails the check instead of passing it. */
  readonly failOnError: boolean
  /** Rewrites the request body: runs before the guardrail's other checks, in order. */
  readonly mutates: boolean
  /**
   * A failure on a prefix of a streamed answer is final (a banned word seen, a maximum passed):
   * the check runs as the text arrives. Other checks run once, on the whole answer.
   */
  readonly failsEarly: boolean
}

export interface CheckDefinition<Parameters> {
  readonly id: string
  readonly parameters: z.ZodType<Parameters>
  compile(parameters: Parameters, deps: CheckDeps): CompiledCheck
}

/** An inline check's compiled form. */
export function inline(run: (input: CheckInput) => CheckOutcome, options: { failsEarly?: boolean; mutates?: boolean } = {}): CompiledCheck {
  return { run, timeoutMs: null, failOnError: false, mutates: options.mutates ?? false, failsEarly: options.failsEarly ?? false }
}

/** `not` flips a check: it passes when the condition does not hold. */
export function outcome(holds: boolean, not: boolean, when: string, whenNot: string): CheckOutcome {
  const verdict = not ? !holds : holds
  return { verdict, explanation: holds ? when : whenNot }
}

/** Type-erased, for the registry. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCheckDefinition = CheckDefinition<any>

export function defineCheck<Parameters>(definition: CheckDefinition<Parameters>): CheckDefinition<Parameters> {
  return definition
}
