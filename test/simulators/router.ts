/** A tiny method + path-pattern router shared by the provider simulators. */
import type { Exchange } from './base.ts'

export interface Route {
  method: string
  /** Matched against the request path (no query string); capture groups reach the handler. */
  pattern: RegExp
  handle(exchange: Exchange, params: string[]): void | Promise<void>
}

/** Runs the first matching route; false when none matched (the caller answers its own 404). */
export async function dispatch(exchange: Exchange, routes: readonly Route[]): Promise<boolean> {
  const { method, path } = exchange.request
  for (const route of routes) {
    if (route.method !== method) continue
    const match = route.pattern.exec(path)
    if (!match) continue
    await route.handle(exchange, match.slice(1).map((part) => decodeURIComponent(part ?? '')))
    return true
  }
  return false
}

/** The request body as a JSON object, or null when it is not one. */
export function jsonObject(body: unknown): Record<string, unknown> | null {
  return body !== null && typeof body === 'object' && !Array.isArray(body) && !Buffer.isBuffer(body)
    ? (body as Record<string, unknown>)
    : null
}
