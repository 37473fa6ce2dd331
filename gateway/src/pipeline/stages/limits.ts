/**
 * The limits stage: every rate limit and budget that applies to the request (snapshot.limits,
 * matched by workspace, key, user, metadata, endpoint type, model and provider) is checked and
 * reserved in ONE limiter call, then settled to the actual usage when the answer ends: a JSON
 * answer at once, a stream or a relayed body (audio, images) once its last byte went out or the
 * client left, a realtime session when it closes.
 *
 * - What is reserved is the request's worst case: a textual request's body bytes (a bound of its
 *   input tokens) and its `max_tokens` (else 4,096); a relayed route's own worst case where its
 *   body says enough (`Operation.worstCase`: images by count, quality and size; speech by its
 *   input); an upload, whose model is read only as it streams through, reserves the least amount
 *   and is charged what it cost at the end. A budget reservation is never less than one unit, so a
 *   spent budget refuses every request, even one expected to cost nothing.
 *
 * - Rate limits refuse with 429, `retry-after` and an error naming the limit; budgets with 412
 *   `budget_exhausted`. A budget stays exhausted (every request refused) until its credit limit is
 *   raised (the snapshot carries the new limit; the counter keeps what was spent) or its period
 *   resets (a new period is a new counter).
 * - `x-ratelimit-limit-*`, `-remaining-*` and `-reset-*` (requests and tokens) go on every answer,
 *   from the tightest enforced rate limit of each type.
 * - Shadow limits are counted and reported (`x-gateway-limits-shadow`, a metric, the usage record's
 *   annotations) and never refuse.
 * - Streams are metered as they go: past the output reserved up front the stage reserves more, and
 *   when the budget or token rate has no more, the stream ends with a `budget_exhausted` (or
 *   `rate_limited`) error event.
 * - Counters unreachable: each limit's failure mode decides. Closed (the default for budgets and
 *   token rates) answers 503 with Retry-After; open (the default for request rates) admits under a
 *   per-replica in-process limit of the same size. A metric and a log line say which happened.
 */
import { Counter as PromCounter, Registry } from 'prom-client'
import { GatewayError, dependencyUnavailable } from '../../core/errors.ts'
import { DEFAULT_OUTPUT_RESERVE_TOKENS, generatedChars, inputTokenBound, relayedContentChars, statedOutputCap, tokensOfChars } from '../../limits/estimate.ts'
import { RawJson } from '../../core/raw-json.ts'
import { eventChunks } from '../../core/relayed-events.ts'
import { LimiterUnavailableError, usdToNano, type Counter, type CounterState, type Limiter, type ReserveResult, type SettleCounter } from '../../limits/limiter.ts'
import { matchLimits, type LimitSubject, type MatchedLimit } from '../../limits/match.ts'
import { MemoryLimiter } from '../../limits/memory-limiter.ts'
import { newReservationId } from '../../limits/reservation-id.ts'
import type { Usage } from '../../providers/canonical.ts'
import { LimitCounterKeys, limitPeriod } from '../../snapshot/limit-keys.ts'
import { RATE_UNIT_MS, type SnapshotLimit } from '../../snapshot/policies.ts'
import { parseModelReference } from '../../routing/target.ts'
import type { Answer, Exchange, Operation, RelayAnswer, Stage, StageFactory, StreamAnswer } from '../stage.ts'

/** Prices usage for cost budgets (the pricing table). Null: the model has no price. */
export interface CostEstimator {
  costOf(target: { providerId: string | null; providerKind: string | null; model: string | null; workspaceId: string | null }, usage: Usage): number | null
}

export interface LimitsLog {
  warn(fields: Record<string, unknown>, message: string): void
}

export interface LimitsStageOptions {
  limiter: Limiter
  /** Prices for cost budgets; without it a cost budget reserves and charges nothing (and says so in annotations). */
  costs?: CostEstimator
  /** Prefix of every counter key (the Redis ACL user is allowed only these keys). */
  keyPrefix?: string
  /** How long a reservation outlives a silent holder (a dead gateway's stream). */
  reservationTtlMs?: number
  log?: LimitsLog
  registry?: Registry
  now?: () => number
}

const DEFAULT_TTL_MS = 120_000
/** A stream past its reservation asks for at least this many more tokens at a time. */
const EXTEND_STEP_TOKENS = 1_024
/** The least a budget reservation holds (a token, a nano-USD): a budget with nothing left refuses. */
const MIN_BUDGET_RESERVE = 1
/** A request whose worst case is not known before the call. */
const UNKNOWN_WORST_CASE: Usage = { inputTokens: 0, outputTokens: 0 }
const LOG_INTERVAL_MS = 10_000

interface Planned {
  readonly matched: MatchedLimit
  readonly counter: Counter
  /** How to turn usage into this counter's units. */
  readonly measure: (usage: Usage | null) => number
  /** Grows with the stream's output (tokens and cost counters). */
  readonly perOutputToken: number
}

const oneRequest = (): number => 1
const tokensOf = (usage: Usage | null): number => (usage === null ? 0 : usage.inputTokens + usage.outputTokens)

type FailureMode = 'open' | 'closed'

function failureModeOf(limit: SnapshotLimit): FailureMode {
  return limit.failureMode ?? (limit.kind === 'rate' && limit.type === 'requests' ? 'open' : 'closed')
}

/** The limit's match or its counter depends on which provider serves the request. */
function refersToProvider(limit: SnapshotLimit): boolean {
  return limit.groupBy.includes('provider') || limit.conditions.some((condition) => condition.key === 'provider')
}

function describe(limit: SnapshotLimit): string {
  const name = limit.name ?? limit.ownerId
  return limit.source === 'policy' ? `policy '${name}' (${limit.ownerId})` : `the ${limit.source.replace('_', ' ')} '${name}' limit`
}

const UNIT_WORDS: Record<string, string> = { rps: 'second', rpm: 'minute', rph: 'hour', rpd: 'day', rpw: 'week' }

function durationText(ms: number): string {
  return `${Math.max(1, Math.ceil(ms / 1000))}s`
}

const REQUEST_HEADERS = { limit: 'x-ratelimit-limit-requests', remaining: 'x-ratelimit-remaining-requests', reset: 'x-ratelimit-reset-requests' } as const
const TOKEN_HEADERS = { limit: 'x-ratelimit-limit-tokens', remaining: 'x-ratelimit-remaining-tokens', reset: 'x-ratelimit-reset-tokens' } as const

function setRateHeaders(headers: Record<string, string>, names: typeof REQUEST_HEADERS | typeof TOKEN_HEADERS, state: CounterState): void {
  headers[names.limit] = String(state.limit)
  headers[names.remaining] = String(state.remaining)
  headers[names.reset] = durationText(state.ok ? state.resetMs : state.retryAfterMs)
}

/**
 * The request as limits see it, after route resolution: the provider is known for a direct route
 * (headers or `@slug/model`); under a config it is known per attempted target (see `run`).
 */
function subjectOf(exchange: Exchange): LimitSubject {
  const { context, facts } = exchange
  const runtime = context.runtime
  const principal = context.principal
  const provider = facts.provider
  const requested = facts.requestedModel
  return {
    organizationId: runtime.organizationId,
    workspaceId: context.workspaceId,
    workspaceSlug: runtime.workspaces.get(context.workspaceId)?.slug ?? null,
    apiKeyId: principal.key?.record.id ?? principal.id,
    userId: principal.userId,
    endpointType: exchange.operation.endpointType,
    model: requested === null ? facts.upstreamModel : parseModelReference(requested).model,
    providerId: provider?.record.id ?? null,
    providerSlug: provider?.record.slug ?? null,
    metadata: context.metadata,
  }
}

type ResolvedOptions = Required<Pick<LimitsStageOptions, 'limiter' | 'keyPrefix' | 'reservationTtlMs' | 'now'>> & LimitsStageOptions
type Metrics = { decisions: PromCounter<'outcome'>; storeFailures: PromCounter<'mode'> }

class LimitsStage implements Stage {
  readonly name = 'limits'
  readonly #options: ResolvedOptions
  readonly #operation: Operation
  readonly #fallback: MemoryLimiter
  readonly #metrics: Metrics
  readonly #keys: LimitCounterKeys
  readonly #lastLogMs = new Map<string, number>()

  constructor(operation: Operation, options: ResolvedOptions, shared: { fallback: MemoryLimiter; metrics: Metrics; keys: LimitCounterKeys }) {
    this.#operation = operation
    this.#options = options
    this.#fallback = shared.fallback
    this.#metrics = shared.metrics
    this.#keys = shared.keys
  }

  #warn(kind: string, fields: Record<string, unknown>, message: string): void {
    const nowMs = this.#options.now()
    if (nowMs - (this.#lastLogMs.get(kind) ?? 0) < LOG_INTERVAL_MS) return
    this.#lastLogMs.set(kind, nowMs)
    this.#options.log?.warn(fields, message)
  }

  #plan(exchange: Exchange, matched: readonly MatchedLimit[], subject: LimitSubject, worst: Usage): Planned[] {
    const nowMs = this.#options.now()
    const organizationId = exchange.context.runtime.organizationId
    const worstTokens = worst.inputTokens + worst.outputTokens
    const outputTokens = worst.outputTokens
    return matched.map((entry) => {
      const { limit } = entry
      const key = this.#keys.keyOf(organizationId, limit, entry.group, nowMs)
      const enforce = !limit.shadow
      if (limit.kind === 'rate') {
        const windowMs = RATE_UNIT_MS[limit.unit!]
        if (limit.type === 'requests') return { matched: entry, counter: { kind: 'rate', key, windowMs, limit: limit.value!, amount: 1, enforce }, measure: oneRequest, perOutputToken: 0 }
        return { matched: entry, counter: { kind: 'rate', key, windowMs, limit: limit.value!, amount: worstTokens, enforce }, measure: tokensOf, perOutputToken: 1 }
      }
      if (limit.type === 'tokens') {
        return { matched: entry, counter: { kind: 'budget', key, limit: limit.creditLimit!, amount: Math.max(MIN_BUDGET_RESERVE, worstTokens), enforce }, measure: tokensOf, perOutputToken: 1 }
      }
      const price = this.#pricer(exchange, subject)
      const worstUsd = price(worst) ?? 0
      const perOutputUsd = outputTokens > 0 ? (worstUsd - (price({ ...worst, outputTokens: 0 }) ?? 0)) / outputTokens : 0
      if (this.#options.costs === undefined || price({ inputTokens: 1, outputTokens: 1 }) === null) exchange.facts.annotations.limitsUnpriced = true
      return {
        matched: entry,
        counter: { kind: 'budget', key, limit: usdToNano(limit.creditLimit!), amount: Math.max(MIN_BUDGET_RESERVE, usdToNano(worstUsd)), enforce },
        measure: (usage) => (usage === null ? 0 : usdToNano(price(usage) ?? 0)),
        perOutputToken: Math.max(0, usdToNano(perOutputUsd)),
      }
    })
  }

  /** Prices usage of this request's model on its provider, for cost budgets (null: no price). */
  #pricer(exchange: Exchange, subject: LimitSubject): (usage: Usage) => number | null {
    const provider = exchange.facts.provider ?? (subject.providerId === null ? null : exchange.context.runtime.providers.byId(subject.providerId) ?? null)
    const { facts } = exchange
    const target = { providerId: subject.providerId, providerKind: provider?.record.kind ?? null, model: subject.model || null, workspaceId: subject.workspaceId }
    // An upload names its model only inside its form: by the time it is settled, the form was read.
    return (usage) => this.#options.costs?.costOf(target.model === null ? { ...target, model: facts.upstreamModel } : target, usage) ?? null
  }

  async run(exchange: Exchange, next: () => Promise<Answer>): Promise<Answer> {
    const limits = exchange.context.runtime.limits
    if (limits.length === 0) return next()
    const subject = subjectOf(exchange)
    let requestLimits = limits
    if (exchange.route?.kind === 'config') {
      // Limits that depend on the provider (declared on a provider or an integration, or a policy
      // naming or grouping by provider) are checked at each target the config's plan attempts.
      const perTarget = limits.filter(refersToProvider)
      if (perTarget.length > 0) {
        requestLimits = limits.filter((limit) => !refersToProvider(limit))
        ;(exchange.attemptWrappers ??= []).push(({ target }, attempt) => {
          const targetSubject: LimitSubject = { ...subject, providerId: target.provider.record.id, providerSlug: target.provider.record.slug }
          const matched = matchLimits(perTarget, targetSubject)
          return matched.length === 0 ? attempt() : this.#enforce(exchange, targetSubject, matched, attempt)
        })
      }
    }
    const matched = matchLimits(requestLimits, subject)
    if (matched.length === 0) return next()
    return this.#enforce(exchange, subject, matched, next)
  }

  /** The most the request can use: its route's own worst case, else the bounds of a textual request's tokens. */
  #worstCase(body: Record<string, unknown> | null): Usage {
    const operation = this.#operation
    if (operation.worstCase) return operation.worstCase(body) ?? UNKNOWN_WORST_CASE
    const inputTokens = operation.textual || operation.endpointType === 'embed' ? inputTokenBound(body) : 0
    const outputTokens = operation.textual ? statedOutputCap(body) ?? DEFAULT_OUTPUT_RESERVE_TOKENS : 0
    return { inputTokens, outputTokens }
  }

  /** Checks and reserves `matched` in one limiter call, runs `next`, and settles (or meters its stream). */
  async #enforce(exchange: Exchange, subject: LimitSubject, matched: readonly MatchedLimit[], next: () => Promise<Answer>): Promise<Answer> {
    const worst = this.#worstCase(exchange.body)
    const { inputTokens, outputTokens } = worst
    const planned = this.#plan(exchange, matched, subject, worst)
    const reservationId = newReservationId()
    const ids = matched.map((m) => m.limit.id)
    const previous = exchange.facts.annotations.limits
    exchange.facts.annotations.limits = Array.isArray(previous) ? [...new Set([...(previous as string[]), ...ids])] : ids

    let result: ReserveResult
    let shared = true
    try {
      result = await this.#options.limiter.reserve(reservationId, planned.map((p) => p.counter), this.#options.reservationTtlMs)
    } catch (error) {
      if (!(error instanceof LimiterUnavailableError)) throw error
      result = await this.#degraded(exchange, planned, reservationId, error)
      shared = false
    }
    this.#report(exchange, planned, result)
    if (!result.admitted) throw this.#refusal(exchange, planned, result)
    this.#metrics.decisions.inc({ outcome: 'admitted' })
    if (!shared) return next()

    let answer: Answer
    try {
      answer = await next()
    } catch (error) {
      this.#settle(reservationId, planned, null)
      throw error
    }
    switch (answer.kind) {
      case 'stream':
        return this.#meter(answer, planned, reservationId, outputTokens, inputTokens)
      case 'relay':
        return this.#settleRelay(exchange, answer, planned, reservationId)
      case 'session': {
        // The provider's usage over the whole session (realtime: its response.done events).
        const settle = (): void => this.#settle(reservationId, planned, answer.usage?.() ?? null)
        answer.ended.then(settle, settle)
        return answer
      }
      case 'json':
        this.#settle(reservationId, planned, answer.usage ?? exchange.facts.usage)
        return answer
    }
  }

  /**
   * A relayed body: settled once it ended (its last byte went out, it failed, or the client left),
   * with the usage its route's metering put on the facts by then (it wraps the body inside this).
   */
  #settleRelay(exchange: Exchange, answer: RelayAnswer, planned: readonly Planned[], reservationId: string): RelayAnswer {
    const source = answer.body
    const options = this.#options
    const settle = (): void => this.#settle(reservationId, planned, exchange.facts.usage)
    const refresh = (): Promise<unknown> => this.#refresh(reservationId, planned)
    async function* settled(): AsyncGenerator<Uint8Array> {
      let beatAtMs = options.now()
      try {
        for await (const chunk of source) {
          yield chunk
          if (options.now() - beatAtMs > options.reservationTtlMs / 3) {
            beatAtMs = options.now()
            await refresh()
          }
        }
      } finally {
        settle()
      }
    }
    return { ...answer, body: settled() }
  }

  /** Keeps a long answer's reservation alive: a zero, never-refusing extension refreshes its expiry. */
  #refresh(reservationId: string, planned: readonly Planned[]): Promise<unknown> {
    return this.#options.limiter.reserve(reservationId, planned.map((p) => ({ ...p.counter, amount: 0, enforce: false })), this.#options.reservationTtlMs).catch(() => null)
  }

  /** The counter store is down: each enforced limit's failure mode decides. */
  async #degraded(exchange: Exchange, planned: readonly Planned[], reservationId: string, error: LimiterUnavailableError): Promise<ReserveResult> {
    const enforced = planned.filter((p) => p.counter.enforce)
    const closed = enforced.filter((p) => failureModeOf(p.matched.limit) === 'closed')
    exchange.facts.annotations.limitsStore = closed.length > 0 ? 'unavailable-closed' : 'unavailable-open'
    if (closed.length > 0) {
      this.#metrics.storeFailures.inc({ mode: 'closed' })
      this.#warn('closed', { limits: closed.map((p) => p.matched.limit.id), error: error.message }, 'limit counters unavailable: refusing requests under fail-closed limits')
      throw dependencyUnavailable('The rate-limit and budget counter store', 1, error)
    }
    this.#metrics.storeFailures.inc({ mode: 'open' })
    this.#warn('open', { limits: enforced.map((p) => p.matched.limit.id), error: error.message }, 'limit counters unavailable: admitting under per-replica request limits (fail-open)')
    // Fail-open request rates still hold per replica; other fail-open limits are not counted.
    const local = enforced.filter((p) => p.counter.kind === 'rate' && p.matched.limit.type === 'requests').map((p) => p.counter)
    const outcome = await this.#fallback.reserve(reservationId, local, this.#options.reservationTtlMs)
    const byKey = new Map(outcome.states.map((s) => [s.key, s]))
    const states = planned.map((p) => byKey.get(p.counter.key) ?? { key: p.counter.key, limit: p.counter.limit, used: 0, remaining: p.counter.limit, ok: true, retryAfterMs: 0, resetMs: 0 })
    return { admitted: outcome.admitted, states }
  }

  /** Rate-limit headers (from the tightest enforced rate of each type) and shadow reports, in one pass. */
  #report(exchange: Exchange, planned: readonly Planned[], result: ReserveResult): void {
    let requests: CounterState | null = null
    let tokens: CounterState | null = null
    let shadowExceeded: string[] | null = null
    for (let index = 0; index < planned.length; index++) {
      const { counter, matched } = planned[index]!
      const state = result.states[index]!
      if (!counter.enforce) {
        if (!state.ok) (shadowExceeded ??= []).push(matched.limit.id)
      } else if (counter.kind === 'rate') {
        if (matched.limit.type === 'requests') {
          if (requests === null || state.remaining < requests.remaining) requests = state
        } else if (tokens === null || state.remaining < tokens.remaining) {
          tokens = state
        }
      }
    }
    if (requests !== null) setRateHeaders(exchange.responseHeaders, REQUEST_HEADERS, requests)
    if (tokens !== null) setRateHeaders(exchange.responseHeaders, TOKEN_HEADERS, tokens)
    if (shadowExceeded !== null) {
      exchange.responseHeaders['x-gateway-limits-shadow'] = shadowExceeded.join(',')
      exchange.facts.annotations.limitsShadowExceeded = shadowExceeded
      this.#metrics.decisions.inc({ outcome: 'shadow_exceeded' }, shadowExceeded.length)
    }
  }

  #refusal(exchange: Exchange, planned: readonly Planned[], result: ReserveResult): GatewayError {
    const index = planned.findIndex((p, i) => p.counter.enforce && !result.states[i]!.ok)
    const { limit } = planned[index]!.matched
    const state = result.states[index]!
    exchange.facts.annotations.limitRefused = limit.id
    const headers = { ...exchange.responseHeaders }
    if (limit.kind === 'usage') {
      this.#metrics.decisions.inc({ outcome: 'budget_exhausted' })
      const endsAtMs = limitPeriod(limit, this.#options.now()).endsAtMs
      const amount = limit.type === 'cost' ? `${limit.creditLimit} USD` : `${limit.creditLimit} tokens`
      const until = endsAtMs === null ? 'until its credit limit is raised' : `until its credit limit is raised or the period resets at ${new Date(endsAtMs).toISOString()}`
      return new GatewayError('budget_exhausted', `Usage limit reached: ${describe(limit)} allows ${amount}; requests under it are refused ${until}`, { headers })
    }
    this.#metrics.decisions.inc({ outcome: 'rate_limited' })
    const retryAfterS = Math.max(1, Math.ceil(state.retryAfterMs / 1000))
    const never = planned[index]!.counter.amount > state.limit
    const message = never
      ? `Rate limit: ${describe(limit)} allows ${limit.value} ${limit.type} per ${UNIT_WORDS[limit.unit!]}, and this request alone needs ${planned[index]!.counter.amount}`
      : `Rate limit exceeded: ${describe(limit)} allows ${limit.value} ${limit.type} per ${UNIT_WORDS[limit.unit!]}; retry in ${retryAfterS}s`
    return new GatewayError('rate_limited', message, { headers: { ...headers, 'retry-after': String(retryAfterS) } })
  }

  #settle(reservationId: string, planned: readonly Planned[], usage: Usage | null): void {
    // A request counter reserved its 1 and settles to 1 whatever happened: settling it would read
    // and rewrite the same value in Redis, so it is left out (its entry ages out of the window).
    const counters: SettleCounter[] = []
    for (const p of planned) if (p.measure !== oneRequest) counters.push({ kind: p.counter.kind, key: p.counter.key, actual: p.measure(usage) })
    this.#options.limiter.settle(reservationId, counters).catch((error: unknown) => {
      // The reservation expires on its own; the spend of this request goes uncounted.
      this.#metrics.storeFailures.inc({ mode: 'settle' })
      this.#warn('settle', { error: (error as Error).message }, 'could not settle a limit reservation; it will expire')
    })
  }

  /** Meters a stream: reserves more past the estimate, cuts it when no more can be had, settles at the end. */
  #meter(answer: StreamAnswer, planned: readonly Planned[], reservationId: string, reservedOutput: number, inputTokens: number): StreamAnswer {
    const source = answer.batches
    const growing = planned.filter((p) => p.perOutputToken > 0)
    const options = this.#options
    const refusal = (p: Planned): GatewayError => p.matched.limit.kind === 'usage'
      ? new GatewayError('budget_exhausted', `Usage limit reached mid-stream: ${describe(p.matched.limit)}; the answer was cut`)
      : new GatewayError('rate_limited', `Rate limit reached mid-stream: ${describe(p.matched.limit)}; the answer was cut`)
    const settle = (usage: Usage | null) => this.#settle(reservationId, planned, usage)
    const refresh = (): Promise<unknown> => this.#refresh(reservationId, planned)
    async function* metered(): AsyncGenerator<readonly unknown[]> {
      let chars = 0
      let reserved = reservedOutput
      let beatAtMs = options.now()
      let finished = false
      try {
        for await (const batch of source) {
          // Relayed chunks (no stage parses them) are measured on their JSON text, still unparsed.
          if (growing.length > 0) for (const chunk of eventChunks(batch)) chars += chunk instanceof RawJson ? relayedContentChars(chunk.text) : generatedChars(chunk)
          const produced = tokensOfChars(chars)
          if (produced > reserved && growing.length > 0) {
            const step = Math.max(EXTEND_STEP_TOKENS, produced - reserved)
            const extra: Counter[] = growing.map((p) => ({ ...p.counter, amount: p.perOutputToken * step }))
            const grown = await options.limiter.reserve(reservationId, extra, options.reservationTtlMs).catch(() => null)
            if (grown && !grown.admitted) throw refusal(growing[grown.states.findIndex((s, i) => extra[i]!.enforce && !s.ok)]!)
            reserved += step
            beatAtMs = options.now()
          } else if (options.now() - beatAtMs > options.reservationTtlMs / 3) {
            beatAtMs = options.now()
            await refresh()
          }
          yield batch
        }
        finished = true
      } finally {
        const usage = answer.result()?.usage ?? null
        settle(usage ?? (finished ? null : { inputTokens, outputTokens: tokensOfChars(chars) }))
      }
    }
    answer.batches = metered()
    return answer
  }
}

/**
 * The limits stage for every route; cheap when no limit applies (no limiter call). Its metrics go
 * to `options.registry`, else to a registry of its own (`registry`, for the server's /metrics).
 */
export function limitsStage(options: LimitsStageOptions): StageFactory & { readonly registry: Registry } {
  const resolved = { keyPrefix: 'gh:', reservationTtlMs: DEFAULT_TTL_MS, now: Date.now, ...options }
  const fallback = new MemoryLimiter(resolved.now)
  const registry = options.registry ?? new Registry()
  const metrics = {
    decisions: new PromCounter({ name: 'gatehouse_limit_decisions_total', help: 'Limit decisions: admitted, rate_limited, budget_exhausted, shadow_exceeded (per shadow limit).', labelNames: ['outcome'] as const, registers: [registry] }),
    storeFailures: new PromCounter({ name: 'gatehouse_limit_store_failures_total', help: 'Requests that found the counter store unreachable, by what happened: closed (503), open (per-replica fallback), settle (usage uncounted).', labelNames: ['mode'] as const, registers: [registry] }),
  }
  const shared = { fallback, metrics, keys: new LimitCounterKeys(resolved.keyPrefix) }
  return {
    name: 'limits',
    registry,
    forOperation: (operation) => new LimitsStage(operation, resolved, shared),
  }
}
