/**
 * The measure stage: at the end of every exchange (refusals before authentication included) it
 * sums the exchange's facts into one `ExchangeOutcome` and hands it to the metrics and the access
 * log. It sits outside every other stage but tracing, so it sees the final status, the account
 * stage's usage and cost (filled into the facts before this stage's end runs), the cache status
 * and every upstream attempt. It reads facts only: no stage calls metrics itself.
 *
 * When the end is: a JSON answer or an error at once; a stream in `onEnd` (however it ended); a
 * relayed body when its bytes end; a realtime session when it closes.
 */
import { priceFor, tableModelFamily } from '../../pricing/index.ts'
import type { Usage } from '../../providers/canonical.ts'
import type { AccessLog } from '../../telemetry/access-log.ts'
import type { ExchangeOutcome, UpstreamAttemptOutcome } from '../../telemetry/outcome.ts'
import { ExchangeContext } from '../context.ts'
import { observeStream, type Answer, type Exchange, type StageFactory } from '../stage.ts'
import { statusOf } from './account.ts'
import { exchangePrice } from './exchange-price.ts'

export interface MeasureStageOptions {
  /** Where outcomes go: the server's metrics (`GatewayMetrics.observeExchange`). */
  observe: (outcome: ExchangeOutcome) => void
  accessLog?: AccessLog | null
  now?: () => number
}

function bodyModel(body: Record<string, unknown> | null): string | null {
  const model = body?.model
  return typeof model === 'string' ? model : null
}

function upstreamOutcomes(exchange: Exchange): UpstreamAttemptOutcome[] {
  let previousKey: string | null = null
  return exchange.facts.upstreamAttempts.map((attempt) => {
    const fallback = previousKey !== null && previousKey !== attempt.targetKey
    previousKey = attempt.targetKey
    return { providerKind: attempt.provider.record.kind, providerSlug: attempt.provider.record.slug, status: attempt.status, durationSeconds: attempt.durationMs / 1000, fallback }
  })
}

/** The exchange's facts as one outcome; `status`/`errorCode` are what the client got. */
/** `answered`: the usage the answer carried (JSON) or its stream ended with, when the facts have none. */
export function exchangeOutcome(exchange: Exchange, status: number, errorCode: string | null, endedAtMs: number, answered: Usage | null): ExchangeOutcome {
  const { facts, context } = exchange
  // Refused before authentication (a bad key): no principal to read.
  const authenticated = !(context instanceof ExchangeContext) || context.isAuthenticated
  const principal = authenticated ? context.principal : null
  const workspaceId = principal?.workspaceId ?? null
  const provider = facts.provider
  // The account stage writes usage into the facts only when it counted it itself.
  const usage = facts.usage ?? answered
  const cost = facts.annotations.costUsd
  const queryAt = exchange.url.indexOf('?')
  return {
    requestId: facts.requestId,
    traceId: context.trace.traceId,
    spanId: context.trace.spanId,
    operation: exchange.operation.name,
    path: queryAt === -1 ? exchange.url : exchange.url.slice(0, queryAt),
    workspaceId,
    workspaceSlug: workspaceId === null ? null : (context.runtime.workspaces.get(workspaceId)?.slug ?? null),
    keyId: principal?.key?.record.id ?? null,
    principalKind: principal?.kind ?? null,
    configId: facts.configId,
    targetPath: facts.targetPath,
    providerKind: provider?.record.kind ?? null,
    providerSlug: provider?.record.slug ?? null,
    providerId: provider?.record.id ?? null,
    requestedModel: facts.requestedModel ?? bodyModel(exchange.body),
    servedModel: facts.servedModel ?? facts.upstreamModel,
    status,
    errorCode,
    streamed: facts.streamed,
    cacheStatus: facts.cacheStatus,
    inputTokens: usage?.inputTokens ?? null,
    outputTokens: usage?.outputTokens ?? null,
    usageEstimated: facts.usageEstimated,
    costUsd: typeof cost === 'number' ? cost : null,
    attempts: facts.attempts,
    retries: facts.retries,
    upstream: upstreamOutcomes(exchange),
    durationSeconds: Math.max(0, endedAtMs - context.startedAtMs) / 1000,
    // A JSON answer's first byte leaves with its end; a stream's is noted by the writer.
    timeToFirstByteSeconds: Math.max(0, (facts.firstByteAtMs ?? endedAtMs) - context.startedAtMs) / 1000,
    finishReason: facts.finishReason?.unified ?? null,
    modelFamily: (model) => (provider === null ? null : tableModelFamily(provider.record.kind, model)),
    knownModel: (model) =>
      provider !== null &&
      (provider.record.models.includes(model) || priceFor(provider.record.kind, provider.record.id, model, workspaceId, context.runtime.prices) !== null),
    // Priced as the usage record is: the same lookup (exchange-price.ts), so the metric and the records agree.
    priced: () => exchangePrice(exchange, facts.servedModel ?? facts.upstreamModel) !== null,
  }
}

export function measureStage(options: MeasureStageOptions): StageFactory {
  const now = options.now ?? Date.now
  const accessLog = options.accessLog ?? null
  const end = (exchange: Exchange, status: number, errorCode: string | null, usage: Usage | null = null): void => {
    const outcome = exchangeOutcome(exchange, status, errorCode, exchange.facts.endedAtMs ?? now(), usage)
    options.observe(outcome)
    accessLog?.write(outcome)
  }
  return {
    name: 'measure',
    forOperation: () => ({
      name: 'measure',
      async run(exchange, next) {
        let answer: Answer
        try {
          answer = await next()
        } catch (error) {
          const { status, code } = statusOf(error, exchange)
          end(exchange, status, code)
          throw error
        }
        return measured(exchange, answer, end)
      },
    }),
  }
}

function measured(exchange: Exchange, answer: Answer, end: (exchange: Exchange, status: number, errorCode: string | null, usage?: Usage | null) => void): Answer {
  switch (answer.kind) {
    case 'json':
      end(exchange, answer.status, null, answer.usage)
      return answer
    case 'stream':
      exchange.facts.streamed = true
      return observeStream(answer, {
        onEnd({ completed, error }) {
          const aborted = !completed && (error === null || exchange.context.signal.aborted)
          const failure = error === null ? null : statusOf(error, exchange)
          // A stream already answered with its status; a cut one says why in its error code.
          end(exchange, aborted ? 499 : answer.status, aborted ? 'request_cancelled' : (failure?.code ?? null), answer.result()?.usage ?? null)
        },
      })
    case 'relay': {
      const source = answer.body
      async function* relayed(): AsyncGenerator<Uint8Array> {
        let completed = false
        let failed = false
        try {
          for await (const chunk of source) yield chunk
          completed = true
        } catch (error) {
          failed = true
          throw error
        } finally {
          const aborted = !completed && (!failed || exchange.context.signal.aborted)
          end(exchange, aborted ? 499 : answer.status, aborted ? 'request_cancelled' : failed ? 'upstream_error' : null)
        }
      }
      return { ...answer, body: relayed() }
    }
    case 'session':
      answer.ended.then(
        () => end(exchange, 101, null),
        () => end(exchange, 101, 'upstream_error'),
      )
      return answer
  }
}
