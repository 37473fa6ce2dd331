/**
 * Gatehouse's own per-exchange metrics (RED per route, upstream attempts, retries, fallbacks, cache,
 * limit refusals, tokens, cost, answers no price covers), all fed from one `ExchangeOutcome` at the
 * end of each exchange. Labels are bounded: workspace (the snapshot's slugs), provider (the
 * snapshot's slugs), model (the pricing table's family, else a known model; capped: labels.ts),
 * status class, error codes from the catalog. No key ids, no raw caller strings.
 */
import type { Registry } from 'prom-client'
import { NONE, errorCodeLabel, statusClass, type BoundedLabels } from './labels.ts'
import type { ExchangeOutcome } from './outcome.ts'
import { SeriesCounter as Counter, SeriesHistogram as Histogram } from './series.ts'

export const REQUEST_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

/** An answer served from the response cache (it spent no provider tokens). */
function cacheHit(status: string | null): boolean {
  return status === 'HIT' || status === 'SEMANTIC HIT'
}

/** Cache statuses as label values (`SEMANTIC HIT` -> `semantic_hit`). */
function cacheResult(status: string): string {
  return status.toLowerCase().replace(' ', '_')
}

export interface ExchangeMetrics {
  observe(outcome: ExchangeOutcome, labels: BoundedLabels): void
}

export function createExchangeMetrics(registry: Registry): ExchangeMetrics {
  const registers = [registry]
  const requests = new Counter({
    name: 'gatehouse_requests_total',
    help: 'Data-plane exchanges by operation (route), workspace, provider, model and status class (2xx..5xx, cancelled).',
    labelNames: ['operation', 'workspace', 'provider', 'model', 'status_class'],
    registers,
  })
  const errors = new Counter({
    name: 'gatehouse_request_errors_total',
    help: 'Data-plane exchanges that ended in an error (refused, failed upstream, or a stream cut), by operation, workspace, provider and error code.',
    labelNames: ['operation', 'workspace', 'provider', 'error_code'],
    registers,
  })
  const duration = new Histogram({
    name: 'gatehouse_request_duration_seconds',
    help: 'Data-plane exchange duration, start to the end of the answer (whole stream), by operation, workspace, provider and status class.',
    labelNames: ['operation', 'workspace', 'provider', 'status_class'],
    buckets: REQUEST_DURATION_BUCKETS,
    registers,
  })
  const attempts = new Counter({
    name: 'gatehouse_upstream_attempts_total',
    help: 'Upstream attempts (first tries, retries and fallbacks) by provider and the status class they ended with (cancelled: the client left).',
    labelNames: ['provider', 'provider_kind', 'status_class'],
    registers,
  })
  const attemptDuration = new Histogram({
    name: 'gatehouse_upstream_attempt_duration_seconds',
    help: 'Upstream attempt duration until the answer started (JSON answer, or a stream\'s first event), by provider.',
    labelNames: ['provider'],
    buckets: REQUEST_DURATION_BUCKETS,
    registers,
  })
  const retries = new Counter({
    name: 'gatehouse_upstream_retries_total',
    help: 'Retries at the target that answered (or failed last), by provider.',
    labelNames: ['provider'],
    registers,
  })
  const fallbacks = new Counter({
    name: 'gatehouse_upstream_fallbacks_total',
    help: 'Moves to another target after a failure, by the provider fallen back from and the one fallen back to.',
    labelNames: ['from_provider', 'to_provider'],
    registers,
  })
  const cache = new Counter({
    name: 'gatehouse_cache_requests_total',
    help: 'Response cache lookups by workspace and result (hit, miss, refresh, semantic_hit, semantic_miss).',
    labelNames: ['workspace', 'result'],
    registers,
  })
  const refusals = new Counter({
    name: 'gatehouse_limit_refusals_total',
    help: 'Requests refused by a rate limit (rate_limited, 429) or an exhausted budget (budget_exhausted, 412), by workspace.',
    labelNames: ['workspace', 'reason'],
    registers,
  })
  const tokens = new Counter({
    name: 'gatehouse_tokens_total',
    help: 'Tokens by workspace, provider, model and type (input, output); provider-reported, else counted by Gatehouse.',
    labelNames: ['workspace', 'provider', 'model', 'type'],
    registers,
  })
  const unpriced = new Counter({
    name: 'gatehouse_unpriced_requests_total',
    help: 'Answered exchanges that used tokens of a model without a price (no row in the pricing table, no override): their cost is unknown and budgets in USD do not count them. By workspace, provider and model.',
    labelNames: ['workspace', 'provider', 'model'],
    registers,
  })
  const cost = new Counter({
    name: 'gatehouse_cost_usd_total',
    help: 'Cost in US dollars of answered exchanges (pricing table and the snapshot\'s price overrides), by workspace, provider and model.',
    labelNames: ['workspace', 'provider', 'model'],
    registers,
  })

  return {
    observe(outcome, labels) {
      const workspace = labels.workspaces.label(outcome.workspaceSlug)
      const provider = outcome.providerSlug ?? NONE
      // The model family where the pricing table knows one (dated and versioned ids share it), else the model as served.
      const served = outcome.servedModel ?? outcome.requestedModel
      const model = labels.models.label(served === null ? null : (outcome.modelFamily(served) ?? served), outcome.knownModel)
      const status = statusClass(outcome.status)
      requests.inc([outcome.operation, workspace, provider, model, status])
      duration.observe([outcome.operation, workspace, provider, status], outcome.durationSeconds)
      if (outcome.errorCode !== null || outcome.status >= 400) {
        errors.inc([outcome.operation, workspace, provider, outcome.errorCode === null ? statusClass(outcome.status) : errorCodeLabel(outcome.errorCode)])
      }
      if (outcome.errorCode === 'rate_limited' || outcome.errorCode === 'budget_exhausted') refusals.inc([workspace, outcome.errorCode])
      let previous: string | null = null
      for (const attempt of outcome.upstream) {
        attempts.inc([attempt.providerSlug, attempt.providerKind, attempt.status === null ? 'cancelled' : statusClass(attempt.status)])
        attemptDuration.observe([attempt.providerSlug], attempt.durationSeconds)
        if (attempt.fallback && previous !== null) fallbacks.inc([previous, attempt.providerSlug])
        previous = attempt.providerSlug
      }
      if (outcome.retries > 0) retries.inc([provider], outcome.retries)
      if (outcome.cacheStatus !== null && outcome.cacheStatus !== 'DISABLED') cache.inc([workspace, cacheResult(outcome.cacheStatus)])
      if (outcome.inputTokens !== null && outcome.inputTokens > 0) tokens.inc([workspace, provider, model, 'input'], outcome.inputTokens)
      if (outcome.outputTokens !== null && outcome.outputTokens > 0) tokens.inc([workspace, provider, model, 'output'], outcome.outputTokens)
      if (outcome.costUsd !== null && outcome.costUsd > 0) cost.inc([workspace, provider, model], outcome.costUsd)
      // Only answers that spent a provider's tokens count (a cache hit costs nothing whatever the
      // price). A cost the account stage found means a price: no second lookup then.
      const spentTokens = (outcome.inputTokens ?? 0) > 0 || (outcome.outputTokens ?? 0) > 0
      if (spentTokens && outcome.status < 400 && !cacheHit(outcome.cacheStatus) && outcome.costUsd === null && !outcome.priced()) unpriced.inc([workspace, provider, model])
    },
  }
}
