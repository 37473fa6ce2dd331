/**
 * The span processor for OTLP http/protobuf export: the batch span processor's job (batch, send one
 * export at a time, drop past the queue's size), except that a span is encoded to protobuf the
 * moment it ends (otlp-span-encoder.ts) and only its bytes wait for the batch. The SDK's processor
 * keeps every finished span object until its batch leaves; at 100 % sampling those objects outlived
 * young collections and were promoted to the old generation, and its exporter then walked each
 * batch twice (a size estimate, then the write) into a fresh buffer. Here a batch is one reused
 * buffer per instrumentation scope, wrapped in its resource when sent.
 *
 * Sending is the OTLP exporter's own HTTP delegate, so OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT,
 * _HEADERS, _TIMEOUT, _COMPRESSION and the retries behave as with the stock exporter. The batch
 * settings are the standard OTEL_BSP_* variables (telemetry/tracing.ts sets the batch size).
 */
import { diag, TraceFlags } from '@opentelemetry/api'
import { ExportResultCode, type ExportResult } from '@opentelemetry/core'
import type { IOtlpExportDelegate } from '@opentelemetry/otlp-exporter-base'
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http'
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { encodeRequest, encodeSpan, ProtoBuffer, type EncodedScope, type ScopeSpanBytes } from './otlp-span-encoder.ts'

export interface EncodedBatchSettings {
  /** Spans per export (OTEL_BSP_MAX_EXPORT_BATCH_SIZE). */
  readonly maxExportBatchSpans: number
  /** Spans held at most while an export is in flight; more are dropped (OTEL_BSP_MAX_QUEUE_SIZE). */
  readonly maxQueueSpans: number
  /** How long a partial batch waits before it is sent (OTEL_BSP_SCHEDULE_DELAY). */
  readonly scheduleDelayMs: number
}

function envNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name])
  return env[name] !== undefined && env[name]!.trim() !== '' && Number.isFinite(value) && value > 0 ? value : fallback
}

/** The OTEL_BSP_* settings, with the specification's defaults. */
export function batchSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): EncodedBatchSettings {
  const maxQueueSpans = envNumber(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048)
  return {
    maxQueueSpans,
    maxExportBatchSpans: Math.min(envNumber(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512), maxQueueSpans),
    scheduleDelayMs: envNumber(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000),
  }
}

/** An export request already encoded; the delegate's serializer passes it through. */
interface EncodedRequest {
  readonly bytes: Uint8Array
  readonly spans: number
}

const PASS_THROUGH = {
  serializeRequest: (request: EncodedRequest): Uint8Array => request.bytes,
  deserializeResponse: ProtobufTraceSerializer.deserializeResponse,
}

/** The stock OTLP http/protobuf exporter's transport, configured from the environment as it is. */
export function otlpHttpDelegate(): IOtlpExportDelegate<EncodedRequest> {
  return createOtlpHttpExportDelegate(
    convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
    PASS_THROUGH,
    'otlp_http_span_exporter',
    { name: 'span', countItems: (request: EncodedRequest) => request.spans },
    undefined,
  )
}

/** Room for what wraps a batch's spans (resource attributes, scopes): more only makes the buffer grow once. */
const REQUEST_WRAPPER_BYTES = 4096

/** One instrumentation scope's spans waiting for the next export. */
interface ScopeBatch {
  readonly scope: EncodedScope
  readonly buffer: ProtoBuffer
}

export class EncodedSpanProcessor implements SpanProcessor {
  readonly #delegate: IOtlpExportDelegate<EncodedRequest>
  readonly #settings: EncodedBatchSettings
  /** Keyed by the SDK's scope object: one per tracer. */
  readonly #batches = new Map<object, ScopeBatch>()
  #resource: ReadableSpan['resource'] | null = null
  #pendingSpans = 0
  #droppedSpans = 0
  #inFlight: Promise<void> | null = null
  #timer: NodeJS.Timeout | null = null
  #shutdown = false

  constructor(delegate: IOtlpExportDelegate<EncodedRequest>, settings: EncodedBatchSettings) {
    this.#delegate = delegate
    this.#settings = settings
  }

  onStart(_span: Span): void {}

  onEnd(span: ReadableSpan): void {
    if (this.#shutdown || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return
    if (this.#pendingSpans >= this.#settings.maxQueueSpans) {
      if (this.#droppedSpans++ === 0) diag.warn('Dropped spans: the export queue is full (OTEL_BSP_MAX_QUEUE_SIZE)')
      return
    }
    this.#resource ??= span.resource
    const scope = span.instrumentationScope
    let batch = this.#batches.get(scope)
    if (batch === undefined) {
      batch = { scope, buffer: new ProtoBuffer() }
      this.#batches.set(scope, batch)
    }
    encodeSpan(batch.buffer, span)
    this.#pendingSpans++
    if (this.#pendingSpans >= this.#settings.maxExportBatchSpans) this.#send()
    else if (this.#timer === null) {
      this.#timer = setTimeout(() => this.#send(), this.#settings.scheduleDelayMs)
      this.#timer.unref()
    }
  }

  /** Sends what is pending unless an export is in flight (its end sends what gathered meanwhile). */
  #send(): void {
    if (this.#timer !== null) {
      clearTimeout(this.#timer)
      this.#timer = null
    }
    if (this.#inFlight !== null || this.#pendingSpans === 0 || this.#resource === null) return
    this.#inFlight = this.#export(this.#resource).finally(() => {
      this.#inFlight = null
      if (this.#pendingSpans >= this.#settings.maxExportBatchSpans) this.#send()
      else if (this.#pendingSpans > 0 && this.#timer === null) {
        this.#timer = setTimeout(() => this.#send(), this.#settings.scheduleDelayMs)
        this.#timer.unref()
      }
    })
  }

  /** Encodes the pending spans as one request (copied out: the buffers are reused) and empties the batches. */
  #take(resource: ReadableSpan['resource']): EncodedRequest {
    const scopes: ScopeSpanBytes[] = []
    let spanBytes = 0
    for (const { scope, buffer } of this.#batches.values()) {
      if (buffer.pos > 0) scopes.push({ scope, bytes: buffer.bytes, start: 0, end: buffer.pos })
      spanBytes += buffer.pos
    }
    // A buffer of its own (not zero-filled): it stays with the export while the batches fill again.
    const out = new ProtoBuffer(spanBytes + REQUEST_WRAPPER_BYTES)
    encodeRequest(out, { attributes: resource.attributes, schemaUrl: resource.schemaUrl }, scopes)
    const request = { bytes: out.written(), spans: this.#pendingSpans }
    for (const { buffer } of this.#batches.values()) buffer.reset()
    this.#pendingSpans = 0
    return request
  }

  async #export(resource: ReadableSpan['resource']): Promise<void> {
    // A resource detector still running (the first export only): spans gather meanwhile and go in this request.
    if (resource.asyncAttributesPending && resource.waitForAsyncAttributes) await resource.waitForAsyncAttributes()
    const request = this.#take(resource)
    const result = await new Promise<ExportResult>((resolve) => this.#delegate.export(request, resolve))
    if (result.code !== ExportResultCode.SUCCESS) diag.error('Span export failed', result.error)
  }

  async forceFlush(): Promise<void> {
    this.#send()
    while (this.#inFlight !== null) {
      await this.#inFlight
      this.#send()
    }
  }

  async shutdown(): Promise<void> {
    if (this.#shutdown) return
    await this.forceFlush()
    this.#shutdown = true
    await this.#delegate.shutdown()
  }
}
