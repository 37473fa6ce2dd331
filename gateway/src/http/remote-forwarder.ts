/**
 * Cluster mode: admin routes reach the control plane over HTTP. The caller's own credentials go
 * along (the control plane authenticates them); the client address travels in x-forwarded-for so
 * audit records name the real caller. A control plane that cannot be reached is a 503 with
 * Retry-After, never a 401.
 */
import { Pool } from '../core/undici.ts'
import { dependencyUnavailable } from '../core/errors.ts'
import type { AdminForwarder } from './routes/admin-forward.ts'

const DROPPED_REQUEST_HEADERS = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade'])

export function remoteAdminForwarder(controlPlaneUrl: string, options: { timeoutMs?: number } = {}): { forward: AdminForwarder; close(): Promise<void> } {
  const origin = new URL(controlPlaneUrl)
  const prefix = origin.pathname.replace(/\/$/, '')
  const pool = new Pool(origin.origin, { connections: 32, headersTimeout: options.timeoutMs ?? 30_000, bodyTimeout: options.timeoutMs ?? 30_000 })
  const forward: AdminForwarder = async (request) => {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined && !DROPPED_REQUEST_HEADERS.has(name)) headers[name] = Array.isArray(value) ? value.join(', ') : value
    }
    if (request.remoteAddress) headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${headers['x-forwarded-for']}, ${request.remoteAddress}` : request.remoteAddress
    try {
      const response = await pool.request({
        path: prefix + request.url,
        method: request.method as 'GET',
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
      })
      const body = Buffer.from(await response.body.arrayBuffer())
      return { status: response.statusCode, headers: response.headers, body }
    } catch (error) {
      throw dependencyUnavailable('The control plane', 2, error)
    }
  }
  return { forward, close: () => pool.close() }
}
