/**
 * The innermost step: send the request. A direct route makes one attempt at its target; a config
 * runs its plan (strategies, retries, fallbacks, breakers) over the route's attempt function.
 * Either way the exchange learns which target answered (or failed last) and how many attempts it
 * took, and the answer carries `x-gateway-provider` and, under a config, the target path and retry
 * count, on success and error alike.
 */
import { GatewayError, type ErrorCode } from '../../core/errors.ts'
import { failureOf } from '../../routing/execute.ts'
import { ConfiguredRoute } from '../../routing/run.ts'
import type { CompiledProvider, RouteTarget } from '../../routing/target.ts'
import type { TargetHealthRegistry } from '../../routing/target-health.ts'
import { describeUpstreamFailure } from '../../upstream/describe-failure.ts'
import { tracedAttempt } from '../attempt-span.ts'
import type { RouteSpec } from '../route-spec.ts'
import { wrapAttempt, type Answer, type Exchange, type Terminal } from '../stage.ts'

/** The codes `upstream/transport.ts` and the SSRF connector give a provider that could not be reached. */
const UNREACHED: ReadonlySet<ErrorCode> = new Set(['upstream_unavailable', 'upstream_timeout', 'request_timeout', 'upstream_address_blocked'])

/**
 * Gives a failure to reach the provider its log line's detail (provider, host, cause, trace id):
 * the client's message stays generic, the operator's line says refused, DNS, TLS, timeout or blocked.
 * A request the client cancelled itself is no provider failure.
 */
function describeUnreached(error: unknown, exchange: Exchange, target: RouteTarget | null): void {
  // A provider that answered (a 504, say) already has its own detail (upstream/provider-errors.ts).
  if (!(error instanceof GatewayError) || error.logDetail !== undefined || !UNREACHED.has(error.code) || target === null || exchange.context.signal.aborted) return
  const blocked = error.code === 'upstream_address_blocked'
  const upstream = describeUpstreamFailure(blocked ? error : (error.cause ?? error), {
    provider: target.provider.record.slug,
    url: target.provider.endpoint.baseUrl,
    traceId: exchange.context.trace.traceId,
    blocked,
  })
  error.logDetail = { upstream }
}

/** Runs one upstream attempt and notes it in the facts (provider, status it ended with, time until it answered). */
async function notedAttempt(exchange: Exchange, provider: CompiledProvider, targetKey: string, run: () => Promise<Answer>): Promise<Answer> {
  const startedAt = performance.now()
  const note = (status: number | null): void => {
    exchange.facts.upstreamAttempts.push({ provider, targetKey, status, durationMs: performance.now() - startedAt })
  }
  let answer: Answer
  try {
    answer = await run()
  } catch (error) {
    note(failureOf(error)?.status ?? null)
    throw error
  }
  note(answer.status)
  return answer
}

export function dispatchTerminal(spec: RouteSpec, health: TargetHealthRegistry): Terminal {
  return async (exchange) => {
    const route = exchange.route
    if (route === null) {
      if (spec.answerUnrouted) return spec.answerUnrouted(exchange)
      throw new GatewayError('internal_error', 'The request reached dispatch without a route')
    }
    if (route.kind === 'direct') {
      exchange.facts.attempts = 1
      exchange.responseHeaders['x-gateway-provider'] = route.target.provider.record.slug
      const provider = route.target.provider
      const target = { route: route.target, forwardedHeaders: null, healthKey: provider.record.id }
      // A direct route neither retries nor consults a breaker, but counts as load on its target:
      // the in-flight and breaker gauges then cover providers only ever called directly.
      const retryBudget = health.get(target.healthKey).retryBudget
      retryBudget.enter()
      try {
        return await notedAttempt(exchange, provider, provider.record.id, () =>
          tracedAttempt(exchange, target, () => spec.attempt(exchange, target, exchange.body, exchange.context.signal)))
      } catch (error) {
        describeUnreached(error, exchange, route.target)
        throw error
      } finally {
        retryBudget.leave(false)
      }
    }
    return runConfigured(spec, health, exchange, route.plan)
  }
}

async function runConfigured(spec: RouteSpec, health: TargetHealthRegistry, exchange: Exchange, plan: Parameters<ConfiguredRoute<never, never>['run']>[0]): Promise<Answer> {
  const { context, facts } = exchange
  const body = exchange.body
  const configured = new ConfiguredRoute<Record<string, unknown>, Answer>(
    health,
    { providers: context.runtime, workspaceId: context.workspaceId, metadata: context.metadata, signal: context.signal },
    body ?? {},
    (target, payload, signal, leaf) => {
      // Overrides come from a config, not the client, but must meet the same limits before they go out.
      if (payload !== body && body !== null) spec.validate?.(payload, exchange)
      const sent = body === null ? null : payload
      // Only a call that goes upstream is an attempt (a client span, a noted attempt): a target's cache hit or limit refusal is not.
      const attempt = (): Promise<Answer> =>
        notedAttempt(exchange, target.route.provider, target.healthKey, () => tracedAttempt(exchange, target, () => spec.attempt(exchange, target, sent, signal)))
      return wrapAttempt(exchange, { target: target.route, leaf, body: sent }, attempt)
    },
  )
  try {
    return await configured.run(plan, exchange.headers, facts.requestedModel ?? undefined)
  } catch (error) {
    describeUnreached(error, exchange, configured.trace.leaf?.target.route ?? null)
    throw error
  } finally {
    const { leaf, retries, attempts } = configured.trace
    facts.attempts = attempts
    facts.retries = retries
    if (leaf !== null) {
      facts.provider = leaf.target.route.provider
      facts.upstreamModel = leaf.target.route.upstreamModel
      facts.targetPath = leaf.path
    }
    Object.assign(exchange.responseHeaders, configured.headers())
  }
}
