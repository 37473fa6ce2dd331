/**
 * Starts OpenTelemetry tracing for a process, configured by the standard `OTEL_*` variables:
 *
 *   OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT   where spans go (either turns tracing on)
 *   OTEL_EXPORTER_OTLP_PROTOCOL / _TRACES_PROTOCOL   http/protobuf (default), http/json or grpc
 *   OTEL_TRACES_EXPORTER          otlp (default), console, zipkin, none
 *   OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG     e.g. parentbased_traceidratio and 0.1
 *   OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_PROPAGATORS (tracecontext,baggage by default)
 *   OTEL_BSP_*                    batch span processor queue and delays; Gatehouse exports
 *                                 128 spans a batch unless OTEL_BSP_MAX_EXPORT_BATCH_SIZE says otherwise
 *   OTEL_SDK_DISABLED=true        off whatever else is set
 *
 * When nothing asks for traces (no endpoint, no OTEL_TRACES_EXPORTER), the SDK is not even
 * imported: the request path then costs one boolean test per would-be span (core/tracing.ts).
 * The SDK reads `process.env` itself, so the decision here reads it too.
 *
 * Only traces are set up: metrics are Prometheus (telemetry/metrics.ts) and logs are pino, so the
 * SDK's OTLP metric and log pipelines are explicitly left empty.
 */
import { context, propagation, trace, type Tracer, type TracerProvider } from '@opentelemetry/api'
import type { Sampler, SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { setTracingEnabled } from '../core/tracing.ts'
import { CallerIdGenerator } from './caller-context.ts'
import type { LeanTracer } from './lean-span.ts'

export interface Tracing {
  /** Exports what is queued (tests, and before a process exits). */
  forceFlush(): Promise<void>
  /** Flushes and stops; spans made afterwards are not recorded. */
  shutdown(): Promise<void>
}

function set(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== ''
}

/** OTEL_TRACES_EXPORTER's names; none when it is unset (the SDK then exports OTLP). */
function exporterNames(env: NodeJS.ProcessEnv): string[] {
  return (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '')
}

/** Whether the environment asks for traces: an OTLP endpoint or an explicit exporter, and the SDK not disabled. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false
  const exporters = exporterNames(env)
  if (exporters.length > 0) return !exporters.every((name) => name === 'none')
  return set(env.OTEL_EXPORTER_OTLP_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
}

/** Whether the traces go to OTLP over http/protobuf only: then encoded-span-processor.ts batches and sends them. */
export function encodesSpansAtEnd(env: NodeJS.ProcessEnv = process.env): boolean {
  const exporters = exporterNames(env)
  if (exporters.length > 0 && !(exporters.length === 1 && exporters[0] === 'otlp')) return false
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? '').trim() || (env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim() || 'http/protobuf'
  return protocol === 'http/protobuf'
}

async function encodedSpanProcessor(): Promise<SpanProcessor> {
  const { batchSettingsFromEnv, EncodedSpanProcessor, otlpHttpDelegate } = await import('./encoded-span-processor.ts')
  return new EncodedSpanProcessor(otlpHttpDelegate(), batchSettingsFromEnv(process.env))
}

let running: Tracing | null = null

/** The SDK's provider behind the API's global proxy: the one whose tracers make spans and whose processors flush. */
function registeredProvider(): TracerProvider & { forceFlush?: () => Promise<void> } {
  const registered = trace.getTracerProvider() as TracerProvider & { getDelegate?: () => TracerProvider }
  return registered.getDelegate?.() ?? registered
}

/** What the SDK's tracer calls as each span starts; the returned function as it ends (sdk-trace's TracerMetrics). */
interface SpanCounter {
  startSpan(parentSpanContext: unknown, samplingDecision: unknown): () => void
}

const NOT_COUNTED_END = (): void => {}
/** A counter that counts nothing: what the SDK's own does when its meter is the no-op one, minus the work. */
export const NOT_COUNTED: SpanCounter = { startSpan: () => NOT_COUNTED_END }

/**
 * Makes an SDK tracer count no spans. The SDK's tracer counts every span it starts on an
 * OpenTelemetry meter (its experimental self-metrics, `otel.sdk.span.started` and `.live`, on only
 * with OTEL_NODE_EXPERIMENTAL_SDK_METRICS and an OpenTelemetry meter provider). Gatehouse gives
 * the SDK no meter provider (its metrics are Prometheus), so the counts go to a no-op meter; yet
 * each start still builds one or two attribute objects with computed keys, which V8 defines
 * through a runtime call: about 3,300 instructions a span under callgrind, a tenth of what tracing
 * an unsampled request cost (2026-11-29). The counter is a private field of the SDK's tracer: when
 * a release renames it, nothing here changes the tracer and the test beside this module fails.
 * Only for the SDK's own tracer, used where a lean one cannot be made (lean-span.ts).
 */
export function withoutSpanCounting(tracer: Tracer): Tracer {
  const fields = tracer as Tracer & { _tracerMetrics?: SpanCounter }
  if (typeof fields._tracerMetrics?.startSpan === 'function') fields._tracerMetrics = NOT_COUNTED
  return tracer
}

/**
 * Makes `provider` hand out lean tracers (lean-span.ts): the same sampling, ids, limits and
 * processors as its own, with spans that keep their attributes without the SDK's per-attribute
 * work. One lean tracer per SDK tracer (the SDK keeps one per name and version).
 */
function leanTracers(provider: TracerProvider, leanTracer: (tracer: Tracer) => LeanTracer | null): void {
  const getTracer = provider.getTracer.bind(provider)
  const made = new WeakMap<Tracer, Tracer>()
  provider.getTracer = (name, version, options) => {
    const tracer = getTracer(name, version, options)
    let lean = made.get(tracer)
    if (lean === undefined) {
      lean = leanTracer(tracer) ?? withoutSpanCounting(tracer)
      made.set(tracer, lean)
    }
    return lean
  }
}

/** What OTEL_TRACES_SAMPLER_ARG asks of a trace-id ratio sampler when it is 0 or 1 (blank is 1, the SDK's default); null for any other ratio. */
function boundaryRatio(env: NodeJS.ProcessEnv): 0 | 1 | null {
  const raw = (env.OTEL_TRACES_SAMPLER_ARG ?? '').trim()
  if (raw === '') return 1
  const ratio = Number(raw)
  return ratio === 0 || ratio === 1 ? ratio : null
}

/**
 * The sampler the environment names, built here when it is a trace-id ratio of exactly 0 or 1:
 * the always-off or always-on sampler, under the parent-based one when the name says so. These
 * decide as the SDK's ratio sampler does at its bounds, without its work on every root span (it
 * checks the trace id's 32 hex digits and then hashes them: about 2,600 instructions a request
 * under callgrind, instructions.ts --variant trace100). Null for anything else: the SDK reads the
 * environment itself.
 */
export async function boundaryRatioSampler(env: NodeJS.ProcessEnv = process.env): Promise<Sampler | null> {
  // Compared as the SDK reads it (untrimmed): a name it would not know stays its to report.
  const name = env.OTEL_TRACES_SAMPLER
  if (name !== 'traceidratio' && name !== 'parentbased_traceidratio') return null
  const ratio = boundaryRatio(env)
  if (ratio === null) return null
  const { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler } = await import('@opentelemetry/sdk-trace-base')
  const root = ratio === 1 ? new AlwaysOnSampler() : new AlwaysOffSampler()
  return name === 'traceidratio' ? root : new ParentBasedSampler({ root })
}

/**
 * Whether the sampler the environment names drops every span without a parent, and every child of
 * an unsampled local parent: always off, alone or under the parent-based sampler (whose default
 * for such children is always off), or a trace-id ratio of 0. Requests that start their trace then
 * go without a span (core/tracing.ts `spanlessRoots`).
 */
export function rootsNeverSampled(env: NodeJS.ProcessEnv = process.env): boolean {
  const name = env.OTEL_TRACES_SAMPLER
  if (name === 'always_off' || name === 'parentbased_always_off') return true
  return (name === 'traceidratio' || name === 'parentbased_traceidratio') && boundaryRatio(env) === 0
}

/**
 * Spans per OTLP export when OTEL_BSP_MAX_EXPORT_BATCH_SIZE is not set, instead of the SDK's 512.
 * Spans wait in the processor's queue until a batch is full, and a span that waits through two
 * young-generation collections is promoted and collected later at a higher price; a 512-span
 * export is also one buffer of about 180 KB, past V8's large-object size, mapped afresh each time.
 * In test/bench/trace-cpu.ts (two runs of three repetitions) tracing at 100 % added 15-19 µs of
 * CPU a request at the minimum, 20-21 µs at the median, with 128; 26-27 and 29-30 µs with 512.
 * One export is in flight at a time, so a collector far away (tens of ms) caps the spans a second
 * a process can export at 128 per round trip: raise the variable in that case.
 */
export const DEFAULT_EXPORT_BATCH_SPANS = 128

/**
 * Registers the SDK globally (once per process: the OpenTelemetry API holds one tracer provider)
 * and turns the gateway's spans on. Returns null, loading nothing, when tracing is not requested.
 * `serviceName` is the default `service.name`; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
 */
export async function startTracing(options: { serviceName: string }): Promise<Tracing | null> {
  if (running) return running
  if (!tracingRequested(process.env)) return null
  const { NodeSDK } = await import('@opentelemetry/sdk-node')
  // The SDK reads its batch settings from the environment only.
  if (!set(process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE)) process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE = String(DEFAULT_EXPORT_BATCH_SPANS)
  const sampler = await boundaryRatioSampler(process.env)
  const sdk = new NodeSDK({
    ...(sampler === null ? {} : { sampler }),
    // OTLP http/protobuf (the default) through the processor that encodes spans as they end; any other exporter as the SDK sets it up.
    ...(encodesSpansAtEnd(process.env) ? { spanProcessors: [await encodedSpanProcessor()] } : {}),
    // The environment's service name wins over the process's default.
    ...(set(process.env.OTEL_SERVICE_NAME) ? {} : { serviceName: options.serviceName }),
    idGenerator: new CallerIdGenerator(),
    // No automatic instrumentation of http/undici: the gateway makes its own spans, one per request
    // and one per upstream attempt, and auto-instrumented duplicates would cost on every call.
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
  })
  sdk.start()
  leanTracers(registeredProvider(), (await import('./lean-span.ts')).leanTracer)
  setTracingEnabled(true, { rootsNeverSampled: rootsNeverSampled(process.env) })
  const tracing: Tracing = {
    forceFlush: async () => {
      await registeredProvider().forceFlush?.()
    },
    shutdown: async () => {
      setTracingEnabled(false)
      running = null
      await sdk.shutdown()
      // Unregister the globals so a later start (tests) can register a fresh provider.
      trace.disable()
      propagation.disable()
      context.disable()
    },
  }
  running = tracing
  return tracing
}
