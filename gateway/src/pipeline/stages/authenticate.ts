/**
 * The first stage of every route: who is calling. A workspace API key from the headers (or where
 * the route takes one); the caller's metadata is read once the caller is known, so a bad key is a
 * 401 whatever else is wrong with the request.
 */
import type { RuntimeConfig } from '../../runtime/compile.ts'
import type { CompiledKey } from '../../runtime/compile.ts'
import { authenticateKey, presentedKey, requireDataPlaneKey } from '../authenticate.ts'
import { readMetadata, type ExchangeContext, type Principal } from '../context.ts'
import type { RouteSpec } from '../route-spec.ts'
import type { Stage } from '../stage.ts'

export interface AuthenticateDeps {
  pepper: string
  now: () => number
}

/** One principal per key and runtime: a key object belongs to one runtime, so it can carry its own. */
const principals = new WeakMap<CompiledKey, Principal>()

function keyPrincipal(key: CompiledKey, runtime: RuntimeConfig): Principal {
  const cached = principals.get(key)
  if (cached) return cached
  const workspaceId = requireDataPlaneKey(key, runtime)
  const principal: Principal = {
    kind: 'api_key',
    id: key.record.id,
    workspaceId,
    userId: key.record.userId,
    scopes: key.record.scopes,
    defaultConfig: key.defaultConfig,
    key,
    attributes: {},
  }
  principals.set(key, principal)
  return principal
}

export function authenticateStage(spec: RouteSpec, deps: AuthenticateDeps): Stage {
  return {
    name: 'authenticate',
    run(exchange, next) {
      const context = exchange.context as ExchangeContext
      const raw = presentedKey(exchange.headers) ?? spec.presentedKey?.(exchange.headers, exchange)
      const key = authenticateKey(context.runtime, raw, deps.pepper, deps.now())
      context.authenticated(keyPrincipal(key, context.runtime), readMetadata(exchange.headers))
      return next()
    },
  }
}
