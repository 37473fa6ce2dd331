/**
 * Ships usage batches to the control plane's ingest route with the gateway token (the same one
 * the snapshot stream uses). Anything but a 2xx is a failure the shipper answers by spooling,
 * except a 400 for a batch the control plane can never take, which would otherwise block the
 * spool forever: that one is reported and dropped.
 *
 * The body goes out in parts of about 32 KiB, never as one string or buffer: a batch is a few
 * hundred KB, and a string that size is a large object to V8 (a buffer one to malloc), mapped
 * fresh and released for each batch. On a VM where first-touch page faults are dear (this
 * project's bench machine), joining a 500-record batch into one string and sending it cost about
 * 10 µs of CPU per record; the parts reuse the heap's pages.
 */
import type { Readable } from 'node:stream'
import { Agent, request } from '../core/undici.ts'
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

const PART_CHARS = 32 * 1024
const OPEN = Buffer.from('{"records":[')
const CLOSE = Buffer.from(']}')

/**
 * `{"records":[...]}` in parts of about PART_CHARS characters, each encoded once here (undici would
 * measure a string part and the socket encode it: two passes over the text), and their bytes.
 */
export function batchParts(records: readonly string[]): { parts: Buffer[]; bytes: number } {
  const parts = [OPEN]
  let bytes = OPEN.length + CLOSE.length
  let start = 0
  let chars = 0
  for (let index = 0; index < records.length; index++) {
    chars += records[index]!.length + 1
    if (chars < PART_CHARS && index < records.length - 1) continue
    const joined = records.slice(start, index + 1).join(',')
    const part = Buffer.from(start === 0 ? joined : `,${joined}`)
    parts.push(part)
    bytes += part.length
    start = index + 1
    chars = 0
  }
  parts.push(CLOSE)
  return { parts, bytes }
}

export function httpUsageTransport(options: HttpUsageTransportOptions): { transport: UsageTransport; close(): Promise<void> } {
  const url = `${options.controlPlaneUrl.replace(/\/$/, '')}${options.path ?? USAGE_INGEST_PATH}`
  const timeoutMs = options.timeoutMs ?? 10_000
  const dispatcher = new Agent({ connections: 2, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, ...(options.connect ? { connect: options.connect } : {}) })
  const token = options.token
  const transport: UsageTransport = async (records) => {
    const body = batchParts(records)
    const response = await request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${typeof token === 'string' ? token : await token()}`, 'content-type': 'application/json', 'content-length': String(body.bytes) },
      // undici sends any iterable of buffers as a body (lib/core/request.js); its types name only streams.
      body: body.parts as unknown as Readable,
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
