/**
 * The answers guardrail verdicts produce: 446 (`guardrail_blocked`) with every verdict so far in
 * `hook_results`, and the `hook_results` object attached to answers that passed (status 246 when
 * a non-denying guardrail failed).
 */
import { GatewayError } from '../core/errors.ts'
import type { HookResult } from '../core/exchange-types.ts'

export interface HookResultsView {
  before_request_hooks: unknown[]
  after_request_hooks: unknown[]
}

function view(result: HookResult): Record<string, unknown> {
  return {
    id: result.guardrailId,
    verdict: result.verdict,
    deny: result.deny,
    async: result.async,
    checks: result.checks.map((check) => ({ id: check.id, verdict: check.verdict, ...(check.explanation === undefined ? {} : { explanation: check.explanation }), ...(check.error === undefined ? {} : { error: check.error }) })),
    feedback: result.feedback ?? null,
    execution_time: result.executionTimeMs,
  }
}

export function hookResultsView(results: readonly HookResult[]): HookResultsView {
  const shown = results.filter((result) => !result.async)
  return {
    before_request_hooks: shown.filter((r) => r.hook === 'beforeRequestHook').map(view),
    after_request_hooks: shown.filter((r) => r.hook === 'afterRequestHook').map(view),
  }
}

export class GuardrailBlockedError extends GatewayError {
  readonly hookResults: HookResultsView

  constructor(results: readonly HookResult[], hook: HookResult['hook']) {
    const denied = results.filter((r) => r.hook === hook && r.deny && !r.verdict).map((r) => r.guardrailId)
    super('guardrail_blocked', `The ${hook === 'beforeRequestHook' ? 'request' : 'answer'} was blocked by guardrail ${denied.join(', ')}; see hook_results.`)
    this.hookResults = hookResultsView(results)
  }

  override toBody(): ReturnType<GatewayError['toBody']> & { hook_results: HookResultsView } {
    return { ...super.toBody(), hook_results: this.hookResults }
  }
}

/** Did a guardrail that denies fail? Did any fail? */
export function judge(results: readonly HookResult[]): { denied: boolean; flagged: boolean } {
  let denied = false
  let flagged = false
  for (const result of results) {
    if (result.verdict || result.async) continue
    if (result.deny) denied = true
    else flagged = true
  }
  return { denied, flagged }
}
