/**
 * `fetch` through the SSRF-checked connector, for clients that take a fetch function (the MCP SDK's
 * transports, token endpoints): every address the call connects to passes the same checks as a
 * provider pool (upstream/ssrf.ts), with private networks reachable only where allowed.
 */
import { fetch as undiciFetch } from '../core/undici.ts'
import { ssrfSafeDispatcher } from './ssrf.ts'

export type FetchFunction = typeof globalThis.fetch

export function ssrfSafeFetch(allowPrivateNetwork: boolean): FetchFunction {
  // The shared dispatcher is looked up per call: closing the dispatchers (shutdown, tests) must not leave a closed one captured here.
  return (input, init) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher: ssrfSafeDispatcher(allowPrivateNetwork) }) as unknown as Promise<Response>
}
