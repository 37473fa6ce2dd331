import { context, trace, TraceFlags } from '@opentelemetry/api'
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import { describe, expect, it } from 'vitest'
import { injectTraceContext, spanlessRoots, tracingEnabled } from '../core/tracing.ts'
import { callerParent, unsampledRootContext } from './caller-context.ts'
import { LeanSpan, LeanTracer } from './lean-span.ts'
import { boundaryRatioSampler, encodesSpansAtEnd, NOT_COUNTED, rootsNeverSampled, startTracing, tracingRequested, withoutSpanCounting } from './tracing.ts'

describe('tracingRequested', () => {
  it('is on with an OTLP endpoint or an explicit exporter, off otherwise or when the SDK is disabled', () => {
    expect(tracingRequested({})).toBe(false)
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true)
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true)
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false)
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true)
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false)
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false)
  })
})

describe('encodesSpansAtEnd', () => {
  it('is on for OTLP over http/protobuf only, the default protocol', () => {
    expect(encodesSpansAtEnd({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true)
    expect(encodesSpansAtEnd({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })).toBe(true)
    expect(encodesSpansAtEnd({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toBe(true)
    expect(encodesSpansAtEnd({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe(false)
    expect(encodesSpansAtEnd({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toBe(false)
    expect(encodesSpansAtEnd({ OTEL_TRACES_EXPORTER: 'otlp,console' })).toBe(false)
    expect(encodesSpansAtEnd({ OTEL_TRACES_EXPORTER: 'zipkin' })).toBe(false)
  })
})

/** Runs `body` with no OTEL_* variables but `otel`, and puts the environment back as it was. */
async function withOtelEnv(otel: Record<string, string>, body: () => Promise<void>): Promise<void> {
  const saved = { ...process.env }
  const clear = (): void => {
    for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name]
  }
  clear()
  Object.assign(process.env, otel)
  try {
    await body()
  } finally {
    clear()
    Object.assign(process.env, saved)
  }
}

describe('startTracing', () => {
  it('loads nothing and leaves spans off when the environment does not ask for traces', async () => {
    await withOtelEnv({}, async () => {
      expect(await startTracing({ serviceName: 'test' })).toBeNull()
      expect(tracingEnabled()).toBe(false)
    })
  })
})

describe('the tracers startTracing registers', () => {
  it('are lean tracers (lean-span.ts) that record spans', async () => {
    // Nothing listens there, and no span ends: nothing is exported.
    await withOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }, async () => {
      const tracing = await startTracing({ serviceName: 'test' })
      try {
        const tracer = trace.getTracer('gatehouse-test')
        expect(tracer).toBeInstanceOf(LeanTracer)
        // One per name: the lean tracer is made once.
        expect(trace.getTracer('gatehouse-test')).toBe(tracer)
        const span = tracer.startSpan('lean')
        expect(span).toBeInstanceOf(LeanSpan)
        expect(span.isRecording()).toBe(true)
        expect(span.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/)
      } finally {
        await tracing?.shutdown()
      }
    })
  })

  it('fall back to the SDK tracer, counting no spans on its no-op meter, where no lean one can be made', () => {
    const tracer = new BasicTracerProvider().getTracer('gatehouse-test')
    // The SDK's private counter is replaced: a release that renames the field fails here.
    expect((withoutSpanCounting(tracer) as unknown as { _tracerMetrics: unknown })._tracerMetrics).toBe(NOT_COUNTED)
  })
})

describe('boundaryRatioSampler', () => {
  it('stands in for a trace-id ratio of exactly 0 or 1 (blank is 1), and leaves every other sampler to the SDK', async () => {
    const named = async (env: NodeJS.ProcessEnv): Promise<string | null> => (await boundaryRatioSampler(env))?.toString() ?? null
    expect(await named({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' })).toMatch(/^ParentBased\{root=AlwaysOnSampler,/)
    expect(await named({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ' 0 ' })).toMatch(/^ParentBased\{root=AlwaysOffSampler,/)
    expect(await named({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.0' })).toBe('AlwaysOnSampler')
    expect(await named({ OTEL_TRACES_SAMPLER: 'traceidratio' })).toBe('AlwaysOnSampler')
    expect(await named({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toBeNull()
    expect(await named({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).toBeNull()
    expect(await named({ OTEL_TRACES_SAMPLER: 'always_off' })).toBeNull()
    // A name the SDK would not know (it does not trim) stays the SDK's to report.
    expect(await named({ OTEL_TRACES_SAMPLER: ' traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' })).toBeNull()
    expect(await named({})).toBeNull()
  })

  it('samples as the ratio says in the tracers startTracing registers, a remote parent deciding for its children', async () => {
    for (const [ratio, rootSampled] of [['0', false], ['1', true]] as const) {
      await withOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio }, async () => {
        const tracing = await startTracing({ serviceName: 'test' })
        try {
          const tracer = trace.getTracer('gatehouse-test')
          expect(tracer.startSpan('root').isRecording()).toBe(rootSampled)
          const sampledParent = trace.setSpanContext(context.active(), { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true })
          expect(tracer.startSpan('child', {}, sampledParent).isRecording()).toBe(true)
          const unsampledParent = trace.setSpanContext(context.active(), { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.NONE, isRemote: true })
          expect(tracer.startSpan('child', {}, unsampledParent).isRecording()).toBe(false)
        } finally {
          await tracing?.shutdown()
        }
      })
    }
  })
})

describe('rootsNeverSampled', () => {
  it('is true for the samplers that drop every root and every child of an unsampled parent', () => {
    expect(rootsNeverSampled({ OTEL_TRACES_SAMPLER: 'always_off' })).toBe(true)
    expect(rootsNeverSampled({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })).toBe(true)
    expect(rootsNeverSampled({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })).toBe(true)
    expect(rootsNeverSampled({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.0' })).toBe(true)
    expect(rootsNeverSampled({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.001' })).toBe(false)
    // Blank is the SDK's default ratio, 1.
    expect(rootsNeverSampled({ OTEL_TRACES_SAMPLER: 'traceidratio' })).toBe(false)
    expect(rootsNeverSampled({ OTEL_TRACES_SAMPLER: 'parentbased_always_on' })).toBe(false)
    // Unset is parentbased_always_on; a name the SDK does not know falls back to it.
    expect(rootsNeverSampled({})).toBe(false)
    expect(rootsNeverSampled({ OTEL_TRACES_SAMPLER: ' always_off' })).toBe(false)
  })
})

describe('spanless roots in the tracing startTracing registers', () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }

  it('are on at a ratio of 0 with the default propagators: a root sends the traceparent of an unsampled span', async () => {
    await withOtelEnv({ ...endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, async () => {
      const tracing = await startTracing({ serviceName: 'test' })
      try {
        expect(spanlessRoots()).toBe(true)
        const root = unsampledRootContext(callerParent({}, { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: null, parentSpanId: null }))!
        const headers: Record<string, string> = {}
        context.with(root, () => injectTraceContext(headers))
        expect(headers).toEqual({ traceparent: `00-0af7651916cd43dd8448eb211c80319c-${trace.getSpanContext(root)!.spanId}-00` })
      } finally {
        await tracing?.shutdown()
      }
      expect(spanlessRoots()).toBe(false)
    })
  })

  it('are off when roots may be sampled, or when a propagator other than W3C\'s is configured', async () => {
    const otels: Record<string, string>[] = [
      { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' },
      { OTEL_TRACES_SAMPLER: 'parentbased_always_off', OTEL_PROPAGATORS: 'tracecontext,baggage,b3' },
      {},
    ]
    for (const otel of otels) {
      await withOtelEnv({ ...endpoint, ...otel }, async () => {
        const tracing = await startTracing({ serviceName: 'test' })
        try {
          expect(tracingEnabled()).toBe(true)
          expect(spanlessRoots()).toBe(false)
        } finally {
          await tracing?.shutdown()
        }
      })
    }
  })
})
