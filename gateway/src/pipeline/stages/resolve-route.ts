/**
 * Where the request goes, for every route alike: under a config (`x-gateway-config`, else the
 * caller's default config) the config's plan; otherwise the one target its headers or `@slug/model`
 * name. With no config in play this is one header read and two map lookups: the hot path.
 */
import { selectConfig } from '../../routing/select.ts'
import { parseModelReference, providerFromHeaders, resolveDirectTarget } from '../../routing/target.ts'
import type { RouteSpec } from '../route-spec.ts'
import type { Stage } from '../stage.ts'

export function resolveRouteStage(spec: RouteSpec): Stage {
  return {
    name: 'resolve-route',
    run(exchange, next) {
      const { context, facts } = exchange
      if (spec.providerless) {
        exchange.route = null
        return next()
      }
      const model = spec.model(exchange)
      facts.requestedModel = model ?? null
      const selected = selectConfig(context.runtime, context.workspaceId, exchange.headers, context.principal.defaultConfig)
      if (selected !== null) {
        facts.configId = selected.configId
        exchange.route = { kind: 'config', plan: selected.plan, configId: selected.configId, config: selected }
      } else if (spec.answerUnrouted && providerFromHeaders(exchange.headers) === null && (model === undefined || parseModelReference(model).slug === null)) {
        exchange.route = null
      } else {
        const target = resolveDirectTarget(context.runtime, context.workspaceId, exchange.headers, model)
        facts.provider = target.provider
        facts.upstreamModel = target.upstreamModel
        exchange.route = { kind: 'direct', target }
      }
      return next()
    },
  }
}
