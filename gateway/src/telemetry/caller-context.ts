/**
 * Where a request's server span hangs: the caller's trace, however the caller named it.
 *
 *  1. W3C `traceparent` (+ `tracestate`, `baggage`): the caller's span is the parent, its sampling
 *     decision is honoured (parent-based samplers).
 *  2. Otherwise the spec's `x-gateway-*` headers: `x-gateway-trace-id` becomes the trace id, and the
 *     caller's span named by `x-gateway-span-id` (else `x-gateway-parent-span-id`) becomes the parent,
 *     so spans the caller reports under those ids nest with the gateway's. A caller that names its
 *     span asks for it to be traced: the parent is marked sampled.
 *  3. Neither: a new trace whose id is the request's gateway trace id (generated in W3C form,
 *     core/random-id.ts), so the `x-gateway-trace-id` response header finds the trace in the backend.
 *
 * The spec lets these ids be any string of up to 256 characters; W3C ids are hex of fixed length.
 * An id that already is one (32 or 16 hex digits, or a UUID for trace ids) is used as it is; any
 * other is hashed (SHA-256, truncated), so the same caller id always maps to the same trace or span.
 */
import { createHash } from 'node:crypto'
import { propagation, trace, TraceFlags, type Context } from '@opentelemetry/api'
import type { IdGenerator } from '@opentelemetry/sdk-trace-base'
import { isTraceIdForm, randomSpanId, randomTraceId } from '../core/random-id.ts'
import { carriesPropagation, spanlessRoots, withUpstreamTraceparent } from '../core/tracing.ts'
import type { RequestHeaders } from '../core/headers.ts'
import { ChainedContext } from './chained-context.ts'

/** The caller's ids as the gateway read them (`pipeline/context.ts` Trace). */
export interface CallerIds {
  readonly traceId: string
  readonly spanId: string | null
  readonly parentSpanId: string | null
}

const HEX32 = /^[0-9a-f]{32}$/i
const HEX16 = /^[0-9a-f]{16}$/i
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const ZEROS = /^0+$/

function hashed(value: string, hexDigits: number): string {
  return createHash('sha256').update(value).digest('hex').slice(0, hexDigits)
}

/** A W3C trace id (32 lowercase hex, not all zeros) for a caller's trace id. */
export function toTraceId(value: string): string {
  // Most requests carry the id the gateway made, already in this form: one scan, no regular expression.
  if (isTraceIdForm(value)) return value
  const hex = UUID.test(value) ? value.replaceAll('-', '') : value
  if (HEX32.test(hex) && !ZEROS.test(hex)) return hex.toLowerCase()
  return hashed(value, 32)
}

/** A W3C span id (16 lowercase hex, not all zeros) for a caller's span id. */
export function toSpanId(value: string): string {
  if (HEX16.test(value) && !ZEROS.test(value)) return value.toLowerCase()
  return hashed(value, 16)
}

export interface ParentChoice {
  /** The context to start the server span in (the caller's span, and its baggage). */
  readonly context: Context
  /** The trace id a new root span must take (case 3 and a trace id alone); null when there is a parent. */
  readonly rootTraceId: string | null
}

export function callerParent(headers: RequestHeaders, ids: CallerIds): ParentChoice {
  const extracted = carriesPropagation(headers) ? propagation.extract(ChainedContext.ROOT, headers) : ChainedContext.ROOT
  if (trace.getSpanContext(extracted) !== undefined) return { context: extracted, rootTraceId: null }
  const traceId = toTraceId(ids.traceId)
  const parent = ids.spanId ?? ids.parentSpanId
  if (parent === null) return { context: extracted, rootTraceId: traceId }
  return {
    context: trace.setSpanContext(extracted, { traceId, spanId: toSpanId(parent), traceFlags: TraceFlags.SAMPLED, isRemote: true }),
    rootTraceId: null,
  }
}

/**
 * The context of a request `callerParent` found to start its trace (case 3, or a trace id alone),
 * with nothing propagated to carry on (no baggage), when roots go without a span (core/tracing.ts
 * `spanlessRoots`): the span the SDK would have started, unsampled (the trace id the request takes,
 * a new span id, flags 00), and the `traceparent` W3C's propagator would write for it, written
 * once. Null when the request has a parent or brought baggage, or when roots get their span.
 */
export function unsampledRootContext(parent: ParentChoice): Context | null {
  const traceId = parent.rootTraceId
  if (traceId === null || parent.context !== ChainedContext.ROOT || !spanlessRoots()) return null
  const spanId = randomSpanId()
  return withUpstreamTraceparent(trace.setSpanContext(ChainedContext.ROOT, { traceId, spanId, traceFlags: TraceFlags.NONE }))
}

let pendingTraceId: string | null = null

/**
 * Runs `start` (which starts a root span synchronously) so that the span takes `traceId`. The SDK
 * asks its id generator for a trace id only for a span without a parent, within that call.
 */
export function withRootTraceId<T>(traceId: string | null, start: () => T): T {
  if (traceId === null) return start()
  pendingTraceId = traceId
  try {
    return start()
  } finally {
    pendingTraceId = null
  }
}

/** Random ids (core/random-id.ts), except that a root span started by `withRootTraceId` takes the given trace id. */
export class CallerIdGenerator implements IdGenerator {
  generateTraceId(): string {
    const pending = pendingTraceId
    if (pending !== null) {
      pendingTraceId = null
      return pending
    }
    return randomTraceId()
  }

  generateSpanId(): string {
    return randomSpanId()
  }
}
