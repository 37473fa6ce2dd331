/**
 * The innermost step: send the request. A direct route makes one attempt at its target; a config
 * runs its plan (strategies, retries, fallbacks, breakers) over the route's attempt function.
 * Either way the exchange learns which target answered (or failed last) and how many attempts it
 * took, and the answer carries `x-gateway-provider` and, under a config, the target path and retry
 * count, on success and error alike.
 */
import { GatewayError } from '../../core/errors.ts'
import { failureOf } from '../../routing/execute.ts'
import { ConfiguredRoute } from '../../routing/run.ts'
import type { CompiledProvider } from '../../routing/target.ts'
import type { TargetHealthRegistry } from '../../routing/target-health.ts'
import type { RouteSpec } from '../route-spec.ts'
import type { Answer, Exchange, Terminal } from '../stage.ts'

/** Runs one upstream attempt and notes it in the facts (provider, status it ended with, time until it answered). */
async function attempt(exchange: Exchange, provider: CompiledProvider, targetKey: string, run: () => Promise<Answer>): Promise<Answer> {
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
  return (exchange) => {
    const route = exchange.route
    if (route === null) {
      if (spec.answerUnrouted) return spec.answerUnrouted(exchange)
      throw new GatewayError('internal_error', 'The request reached dispatch without a route')
    }
    if (route.kind === 'direct') {
      exchange.facts.attempts = 1
      exchange.responseHeaders['x-gateway-provider'] = route.target.provider.record.slug
      const provider = route.target.provider
      return attempt(exchange, provider, provider.record.id, () =>
        spec.attempt(exchange, { route: route.target, forwardedHeaders: null, healthKey: provider.record.id }, exchange.body, exchange.context.signal),
      )
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
    (target, payload, signal) => {
      // Overrides come from a config, not the client, but must meet the same limits before they go out.
      if (payload !== body && body !== null) spec.validate?.(payload, exchange)
      return attempt(exchange, target.route.provider, target.healthKey, () => spec.attempt(exchange, target, body === null ? null : payload, signal))
    },
  )
  try {
    return await configured.run(plan, exchange.headers, facts.requestedModel ?? undefined)
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
