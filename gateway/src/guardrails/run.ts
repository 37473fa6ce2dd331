/**
 * Runs one guardrail on one hook: mutating checks first, in order, each seeing the body the one
 * before produced; then the others, network checks concurrently, each under its own timeout. A
 * guardrail of inline checks only is judged synchronously (no promise, microseconds). A check
 * that errs (timeout, unreachable service, malformed answer) passes unless it sets `failOnError`,
 * and its error is reported with the verdict.
 */
import type { HookResult } from '../core/exchange-types.ts'
import type { CheckInput, CheckOutcome, CompiledCheck, Hook } from './checks/check.ts'
import type { CompiledGuardrail } from './compile.ts'

export type RunInput = Omit<CheckInput, 'signal' | 'hook'>

export interface GuardrailRun {
  readonly result: HookResult
  /** The request body after mutating checks; the input body when none changed it. */
  readonly body: Readonly<Record<string, unknown>> | null
}

type CheckResult = HookResult['checks'][number]

function errorMessage(error: unknown, check: CompiledCheck, signal: AbortSignal): string {
  if (signal.aborted && check.timeoutMs !== null) return `timed out after ${check.timeoutMs} ms`
  return error instanceof Error ? error.message : String(error)
}

function fromError(id: string, check: CompiledCheck, error: unknown, signal: AbortSignal): CheckResult {
  return { id, verdict: !check.failOnError, error: errorMessage(error, check, signal) }
}

function fromOutcome(id: string, outcome: CheckOutcome): CheckResult {
  return { id, verdict: outcome.verdict, explanation: outcome.explanation }
}

function finish(guardrail: CompiledGuardrail, hook: Hook, checks: CheckResult[], body: Readonly<Record<string, unknown>> | null, startedAt: number): GuardrailRun {
  const verdict = checks.every((check) => check.verdict)
  const feedback = verdict ? guardrail.onSuccess : guardrail.onFail
  return {
    body,
    result: {
      guardrailId: guardrail.id,
      hook,
      verdict,
      deny: guardrail.deny,
      async: guardrail.async,
      checks,
      feedback: feedback ? { value: feedback.value, weight: feedback.weight, metadata: feedback.metadata === '' ? {} : { text: feedback.metadata } } : null,
      executionTimeMs: Math.round((performance.now() - startedAt) * 1000) / 1000,
    },
  }
}

/** Inline guardrails only: judged on the spot. */
export function runInline(guardrail: CompiledGuardrail, hook: Hook, input: RunInput, signal: AbortSignal): GuardrailRun {
  const startedAt = performance.now()
  let body = input.body
  const checks: CheckResult[] = []
  for (const { id, check } of guardrail.checks) {
    try {
      const outcome = check.run({ ...input, body, hook, signal }) as CheckOutcome
      if (outcome.body) body = outcome.body
      checks.push(fromOutcome(id, outcome))
    } catch (error) {
      checks.push(fromError(id, check, error, signal))
    }
  }
  return finish(guardrail, hook, checks, body, startedAt)
}

async function runCheck(id: string, check: CompiledCheck, input: CheckInput, parent: AbortSignal): Promise<{ result: CheckResult; body?: Record<string, unknown> }> {
  const signal = check.timeoutMs === null ? parent : AbortSignal.any([parent, AbortSignal.timeout(check.timeoutMs)])
  try {
    const outcome = await check.run({ ...input, signal })
    return { result: fromOutcome(id, outcome), ...(outcome.body ? { body: outcome.body } : {}) }
  } catch (error) {
    return { result: fromError(id, check, error, signal) }
  }
}

export function runGuardrail(guardrail: CompiledGuardrail, hook: Hook, input: RunInput, signal: AbortSignal): GuardrailRun | Promise<GuardrailRun> {
  if (guardrail.inline) return runInline(guardrail, hook, input, signal)
  return (async () => {
    const startedAt = performance.now()
    let body = input.body
    const checks: CheckResult[] = []
    const rest: Array<Promise<{ result: CheckResult }>> = []
    for (const { id, check } of guardrail.checks) {
      if (check.mutates) {
        const ran = await runCheck(id, check, { ...input, body, hook, signal }, signal)
        if (ran.body) body = ran.body
        checks.push(ran.result)
      } else {
        rest.push(runCheck(id, check, { ...input, body, hook, signal }, signal))
      }
    }
    for (const ran of await Promise.all(rest)) checks.push(ran.result)
    return finish(guardrail, hook, checks, body, startedAt)
  })()
}

/**
 * Several guardrails at once, results in attachment order; the last run's body is the request
 * body to send. Mutations chain (each guardrail sees the body the previous one produced), so a
 * mix of mutating and network guardrails runs one after another; otherwise network guardrails run
 * concurrently and inline ones on the spot.
 */
export function runAll(guardrails: readonly CompiledGuardrail[], hook: Hook, input: RunInput, signal: AbortSignal): GuardrailRun[] | Promise<GuardrailRun[]> {
  const mutating = guardrails.some((guardrail) => guardrail.checks.some((c) => c.check.mutates))
  if (mutating && guardrails.some((guardrail) => !guardrail.inline)) return sequential(guardrails, hook, input, signal)
  const runs: Array<GuardrailRun | Promise<GuardrailRun>> = []
  let body = input.body
  let pending = false
  for (const guardrail of guardrails) {
    const run = runGuardrail(guardrail, hook, { ...input, body }, signal)
    if (run instanceof Promise) pending = true
    else body = run.body
    runs.push(run)
  }
  return pending ? Promise.all(runs) : (runs as GuardrailRun[])
}

async function sequential(guardrails: readonly CompiledGuardrail[], hook: Hook, input: RunInput, signal: AbortSignal): Promise<GuardrailRun[]> {
  const runs: GuardrailRun[] = []
  let body = input.body
  for (const guardrail of guardrails) {
    const run = await runGuardrail(guardrail, hook, { ...input, body }, signal)
    body = run.body
    runs.push(run)
  }
  return runs
}
