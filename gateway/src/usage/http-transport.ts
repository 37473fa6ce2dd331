/**
 * Ships usage batches to the control plane's ingest route with the gateway token (the same one
 * the snapshot stream uses). Anything but a 2xx is a failure the shipper answers by spooling,
 * except a 400 for a batch the control plane can never take, which would otherwise block the
 * spool forever: that one is reported and dropped.
 */
import { Agent, request } from 'undici'
import { USAGE_INGEST_PATH } from '../snapshot/usage-record.ts'
import type { UsageTransport } from './shipper.ts'

export interface HttpUsageTransportOptions {
  controlPlaneUrl: string
  /** The gateway token; or, for a sidecar, a function reading its current ServiceAccount token. */
  token: string | (() => Promise<string>)
  /** The ingest route and its query (default USAGE_INGEST_PATH; sidecars use SIDECAR_USAGE_PATH). */
  path?: string
  /** TLS settings for the control plane (its CA): connections are made with these. */
  connect?: { ca?: string }
  timeoutMs?: number
  onRefused?: (status: number, body: string) => void
}

export function httpUsageTransport(options: HttpUsageTransportOptions): { transport: UsageTransport; close(): Promise<void> } {
  const url = `${options.controlPlaneUrl.replace(/\/$/, '')}${options.path ?? USAGE_INGEST_PATH}`
  const timeoutMs = options.timeoutMs ?? 10_000
  const dispatcher = new Agent({ connections: 2, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, ...(options.connect ? { connect: options.connect } : {}) })
  const token = options.token
  const transport: UsageTransport = async (body) => {
    const response = await request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${typeof token === 'string' ? token : await token()}`, 'content-type': 'application/json' },
      body,
      dispatcher,
      signal: AbortSignal.timeout(timeoutMs),
    })
    const text = await response.body.text()
    if (response.statusCode === 400) {
      options.onRefused?.(response.statusCode, text.slice(0, 500))
      return
    }
    if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`the control plane answered HTTP ${response.statusCode} to a usage batch`)
  }
  return { transport, close: () => dispatcher.close() }
}
