/**
 * Output guardrails on a streamed answer. Text is assembled as chunks arrive; checks whose
 * failure on a prefix is final (`failsEarly`: a banned word, a maximum passed) run on every batch
 * of denying guardrails, every check runs on the whole answer at the end. How much reaches the
 * client before a verdict is the guardrails' hold-back (the strictest of them wins):
 *
 * - none: chunks go out as they arrive; a deny ends the stream after what was already sent;
 * - window N: the last N characters are held (chunks go out once N newer characters arrived);
 * - all: nothing goes out until every check passed.
 *
 * Held chunks are never released after a deny: the stream ends with an error event (thrown here,
 * written by the route's writer). The answer's verdicts follow as a last `hook_results` event, or,
 * in a Responses API stream, on its terminal event (held until the verdict; responses-events.ts).
 */
import { chunkValue } from '../core/raw-json.ts'
import { eventChunks } from '../core/relayed-events.ts'
import type { HookResult } from '../core/exchange-types.ts'
import { GuardrailBlockedError, hookResultsView, judge } from './blocked.ts'
import type { CompiledGuardrail } from './compile.ts'
import type { GuardrailMetrics } from './metrics.ts'
import { isTerminalResponseEvent, withResponseVerdicts } from './responses-events.ts'
import { runAll, runInline, type RunInput } from './run.ts'
import { chunkText } from './text.ts'

/** The stream formats guardrails read: OpenAI chunks, Anthropic events, the Responses API's named events. */
export type GuardedStreamFormat = 'openai' | 'anthropic' | 'responses'

export type HoldBack = CompiledGuardrail['holdBack']

const STRICTNESS = { none: 0, window: 1, all: 2 } as const

export function strictestHoldBack(guardrails: readonly CompiledGuardrail[]): HoldBack {
  let chosen: HoldBack = { mode: 'none', windowChars: 0 }
  for (const { holdBack } of guardrails) {
    if (STRICTNESS[holdBack.mode] > STRICTNESS[chosen.mode] || (holdBack.mode === 'window' && chosen.mode === 'window' && holdBack.windowChars > chosen.windowChars)) chosen = holdBack
  }
  return chosen
}

/** The early-failing checks of denying guardrails, as guardrails of their own, judged inline per batch. */
function earlyChecks(guardrails: readonly CompiledGuardrail[]): CompiledGuardrail[] {
  return guardrails.flatMap((guardrail) => {
    const checks = guardrail.checks.filter((c) => c.check.failsEarly && c.check.timeoutMs === null)
    return guardrail.deny && checks.length > 0 ? [{ ...guardrail, checks, inline: true }] : []
  })
}

/** The event carrying the verdicts, in the stream's own format. */
export function hookResultsEvent(format: 'openai' | 'anthropic', first: unknown, results: readonly HookResult[]): unknown {
  const hook_results = hookResultsView(results)
  if (format === 'anthropic') return { event: 'hook_results', data: { type: 'hook_results', hook_results } }
  const value = chunkValue(first)
  const head = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
  return { id: head.id, object: head.object, created: head.created, model: head.model, choices: [], hook_results }
}

/** The last chunks of a passed stream with its verdicts: a `hook_results` event after them, or on a Responses stream's terminal event. */
export function withVerdicts(format: GuardedStreamFormat, tail: readonly unknown[], first: unknown, results: readonly HookResult[]): unknown[] {
  // Only async verdicts so far (they are never shown): nothing to attach, as on JSON answers.
  if (!results.some((result) => !result.async)) return [...tail]
  if (format === 'responses') return tail.map((chunk) => withResponseVerdicts(chunk, results))
  return [...tail, hookResultsEvent(format, first, results)]
}

/** Where a guarded stream records its verdicts and what it sent (the exchange's facts). */
export interface StreamFacts {
  readonly hookResults: HookResult[]
  readonly annotations: Record<string, unknown>
}

export interface StreamGuardOptions {
  readonly facts: StreamFacts
  readonly format: GuardedStreamFormat
  readonly guardrails: readonly CompiledGuardrail[]
  readonly input: Omit<RunInput, 'text'>
  readonly signal: AbortSignal
  readonly metrics?: GuardrailMetrics
  readonly now?: () => number
  /** The whole text of a stream that passed, once it ended (async guardrails run on it). */
  readonly onPassed?: (text: string) => void
}

export function guardStream(source: AsyncIterable<readonly unknown[]>, options: StreamGuardOptions): AsyncIterable<readonly unknown[]> {
  const { facts, format, guardrails, input, signal, metrics } = options
  const now = options.now ?? (() => performance.now())
  const holdBack = strictestHoldBack(guardrails)
  const early = earlyChecks(guardrails)
  // Known from the start (streams that are not read end with their verdicts from elsewhere), finished in `finally`.
  facts.annotations.guardrailStream = { holdBack: holdBack.mode, sentChars: 0, withheldChars: 0 }
  return (async function* guarded() {
    // `final`: released only once every check passed (a Responses stream's terminal event).
    const held: Array<{ chunk: unknown; end: number; final: boolean }> = []
    let text = ''
    let sentChars = 0
    let maxHeld = 0
    let firstReceivedAt: number | null = null
    let firstReleasedAt: number | null = null
    let first: unknown = undefined
    const release = (upTo: number): unknown[] => {
      const out: unknown[] = []
      while (held.length > 0 && held[0]!.end <= upTo && (!held[0]!.final || upTo === Infinity)) {
        const { chunk, end } = held.shift()!
        out.push(chunk)
        sentChars = end
      }
      if (out.length > 0 && firstReleasedAt === null) firstReleasedAt = now()
      return out
    }
    const deny = (results: HookResult[]): never => {
      facts.hookResults.push(...results)
      throw new GuardrailBlockedError(facts.hookResults, 'afterRequestHook')
    }
    try {
      for await (const batch of source) {
        if (firstReceivedAt === null) firstReceivedAt = now()
        let grew = false
        // Held back and released event by event: relayed bytes are split into their events here.
        for (const chunk of eventChunks(batch)) {
          if (first === undefined) first = chunk
          const added = chunkText(chunk)
          if (added) {
            text += added
            grew = true
          }
          held.push({ chunk, end: text.length, final: format === 'responses' && isTerminalResponseEvent(chunk) })
        }
        if (grew && early.length > 0) {
          for (const guardrail of early) {
            const run = runInline(guardrail, 'afterRequestHook', { ...input, text }, signal)
            if (!run.result.verdict) deny([run.result])
          }
        }
        const limit = holdBack.mode === 'none' ? text.length : holdBack.mode === 'window' ? text.length - holdBack.windowChars : -1
        const out = release(limit)
        maxHeld = Math.max(maxHeld, text.length - sentChars)
        if (out.length > 0) yield out
      }
      const runs = await runAll(guardrails, 'afterRequestHook', { ...input, text }, signal)
      const results = runs.map((run) => run.result)
      if (judge(results).denied) deny(results)
      facts.hookResults.push(...results)
      const tail = withVerdicts(format, release(Infinity), first, facts.hookResults)
      options.onPassed?.(text)
      yield tail
    } finally {
      facts.annotations.guardrailStream = { holdBack: holdBack.mode, sentChars, withheldChars: text.length - sentChars }
      metrics?.observeHoldBack(holdBack.mode, maxHeld, firstReceivedAt !== null && firstReleasedAt !== null ? (firstReleasedAt - firstReceivedAt) / 1000 : null)
    }
  })()
}
