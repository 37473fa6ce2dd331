/** The route's own checks of the request (a 400 naming the parameter), before anything is routed. */
import type { RouteSpec } from '../route-spec.ts'
import type { Stage } from '../stage.ts'

export function validateStage(spec: RouteSpec): Stage | null {
  const validate = spec.validate
  if (!validate) return null
  return {
    name: 'validate',
    run(exchange, next) {
      validate(exchange.body, exchange)
      return next()
    },
  }
}
