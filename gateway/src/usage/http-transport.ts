/**
 * Ships usage batches to the control plane's ingest route with the gateway token (the same one
 * the snapshot stream uses). Anything but a 2xx is a failure the shipper answers by spooling,
 * except a 400 for a batch the control plane can never take, which would otherwise block the
 * spool forever: that one is reported and dropped.
 *
 * The body goes out as the batch's own chunks of bytes (record-batch.ts), never as one string or
 * buffer: a batch is a few hundred KB, and a string that size is a large object to V8 (a buffer one
 * to malloc), mapped fresh and released for each batch. On a VM where first-touch page faults are
 * dear (this project's bench machine), joining a 500-record batch into one string and sending it
 * cost about 10 µs of CPU per record; the chunks are pooled and reused.
 */
import type { Readable } from 'node:stream'
import { Client, request } from '../core/undici.ts'
import { USAGE_INGEST_PATH } from '../snapshot/usage-record.ts'
import type { UsageBatch } from './record-batch.ts'
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

const OPEN = Buffer.from('{"records":[')
const CLOSE = Buffer.from(']}')

/** `{"records":[...]}`: the batch's bytes between the framing, as parts, and how many bytes they make. */
export function batchParts(batch: UsageBatch): { parts: Buffer[]; bytes: number } {
  const records = batch.parts()
  return { parts: [OPEN, ...records.parts, CLOSE], bytes: OPEN.length + records.bytes + CLOSE.length }
}

export function httpUsageTransport(options: HttpUsageTransportOptions): { transport: UsageTransport; close(): Promise<void> } {
  const url = `${options.controlPlaneUrl.replace(/\/$/, '')}${options.path ?? USAGE_INGEST_PATH}`
  const timeoutMs = options.timeoutMs ?? 10_000
  // One connection (a Client, not an Agent): the shipper sends one batch at a time. An Agent's
  // Pool made the Pool code the upstream requests run through see a second kind of pool client,
  // and its client scan (undici pool.js, once per upstream request) turned megamorphic: 6,300
  // instructions a request under callgrind (instructions.ts --variant metering), 10,000 in all.
  const dispatcher = new Client(new URL(url).origin, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs, ...(options.connect ? { connect: options.connect } : {}) })
  const token = options.token
  const transport: UsageTransport = async (batch) => {
    const body = batchParts(batch)
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
