/**
 * undici's dispatchers and its `request` API, without the rest of the package. undici's index
 * loads all it offers (fetch, WebSocket, EventSource, cache stores, mock agents...): 110 modules,
 * 1.3 MB of source, about 5 MB of an idle sidecar's 80 MB budget, where the gateway needs Agent,
 * Pool, `request` and the error classes. These are the same module instances the index exports
 * (one require cache), so `instanceof` and undici's global dispatcher agree with code importing
 * 'undici'. `fetch` (JWKS, guardrail image checks) loads the whole package with its first call.
 */
import { createRequire } from 'node:module'
import type * as Undici from 'undici'
import type { Dispatcher } from 'undici'
import { onDemand } from './on-demand.ts'

const require = createRequire(import.meta.url)

interface UndiciUtil {
  parseURL(url: Parameters<typeof Undici.request>[0]): URL
}

const DispatcherClass = require('undici/lib/dispatcher/dispatcher.js') as { prototype: object }
const requestApi = require('undici/lib/api/index.js') as { request: Dispatcher['request'] }
// As undici's index does: the request API (request, stream, pipeline...) as methods of every dispatcher.
Object.assign(DispatcherClass.prototype, requestApi)
const { getGlobalDispatcher } = require('undici/lib/global.js') as { getGlobalDispatcher: typeof Undici.getGlobalDispatcher }
const { parseURL } = require('undici/lib/core/util.js') as UndiciUtil

export const Agent = require('undici/lib/dispatcher/agent.js') as typeof Undici.Agent
export type Agent = Undici.Agent
export const Pool = require('undici/lib/dispatcher/pool.js') as typeof Undici.Pool
export type Pool = Undici.Pool
export const Client = require('undici/lib/dispatcher/client.js') as typeof Undici.Client
export type Client = Undici.Client
export const buildConnector = require('undici/lib/core/connect.js') as typeof Undici.buildConnector
export const errors = require('undici/lib/core/errors.js') as typeof Undici.errors

/** undici's top-level `request` (its index's `makeDispatcher`): the URL's origin and path, on the given dispatcher or the global one. */
function requestOnDispatcher(url: Parameters<typeof Undici.request>[0], options: Parameters<typeof Undici.request>[1] = {}): ReturnType<typeof Undici.request> {
  const target = parseURL(url)
  const { dispatcher = getGlobalDispatcher(), ...rest } = options
  return dispatcher.request({
    ...rest,
    origin: target.origin,
    path: target.search ? `${target.pathname}${target.search}` : target.pathname,
    method: rest.method || (rest.body ? 'PUT' : 'GET'),
  })
}
export const request = requestOnDispatcher as typeof Undici.request

const undiciIndex = onDemand<typeof Undici>('undici')
export const fetch: typeof Undici.fetch = (input, init) => undiciIndex().fetch(input, init)
