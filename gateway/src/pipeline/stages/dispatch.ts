/**
 * The innermost step: send the request. A direct route makes one attempt at its target; a config
 * runs its plan (strategies, retries, fallbacks, breakers) over the route's attempt function.
 * Either way the exchange learns which target answered (or failed last) and how many attempts it
 * took, and the answer carries `x-gateway-provider` and, under a config, the target path and retry
 * count, on success and error alike.
 */
import { GatewayError } from '../../core/errors.ts'
import { ConfiguredRoute } from '../../routing/run.ts'
import type { TargetHealthRegistry } from '../../routing/target-health.ts'
import { tracedAttempt } from '../attempt-span.ts'
import type { RouteSpec } from '../route-spec.ts'
import type { Answer, Exchange, Terminal } from '../stage.ts'

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
      const target = { route: route.target, forwardedHeaders: null, healthKey: route.target.provider.record.id }
      return tracedAttempt(exchange, target, () => spec.attempt(exchange, target, exchange.body, exchange.context.signal))
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
      return tracedAttempt(exchange, target, () => spec.attempt(exchange, target, body === null ? null : payload, signal))
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
