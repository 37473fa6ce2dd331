import { context, trace, TraceFlags } from '@opentelemetry/api'
import { ExportResultCode, type ExportResult } from '@opentelemetry/core'
import type { IOtlpExportDelegate } from '@opentelemetry/otlp-exporter-base'
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import { describe, expect, it } from 'vitest'
import { batchSettingsFromEnv, EncodedSpanProcessor } from './encoded-span-processor.ts'

/** A delegate that records each request's span count and answers when told to. */
function fakeDelegate(): { delegate: IOtlpExportDelegate<{ bytes: Uint8Array; spans: number }>; sent: number[]; answer: () => void } {
  const sent: number[] = []
  const waiting: Array<(result: ExportResult) => void> = []
  return {
    sent,
    answer: () => waiting.shift()?.({ code: ExportResultCode.SUCCESS }),
    delegate: {
      export(request, done) {
        sent.push(request.spans)
        waiting.push(done)
      },
      forceFlush: async () => {},
      setMetrics: () => {},
      shutdown: async () => {},
    },
  }
}

function tracerWith(processor: EncodedSpanProcessor) {
  return new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('test')
}

describe('EncodedSpanProcessor', () => {
  it('sends a batch when full, gathers spans while it is in flight, and sends those after', async () => {
    const { delegate, sent, answer } = fakeDelegate()
    const tracer = tracerWith(new EncodedSpanProcessor(delegate, { maxExportBatchSpans: 3, maxQueueSpans: 5, scheduleDelayMs: 600_000 }))
    for (let i = 0; i < 3; i++) tracer.startSpan(`span ${i}`).end()
    await Promise.resolve()
    expect(sent).toEqual([3])
    // In flight: four more gather, the queue holds five, the sixth and seventh are dropped.
    for (let i = 0; i < 7; i++) tracer.startSpan(`more ${i}`).end()
    answer()
    await new Promise((resolve) => setImmediate(resolve))
    expect(sent).toEqual([3, 5])
  })

  it('skips unsampled spans and sends a partial batch on forceFlush', async () => {
    const { delegate, sent, answer } = fakeDelegate()
    const processor = new EncodedSpanProcessor(delegate, { maxExportBatchSpans: 10, maxQueueSpans: 10, scheduleDelayMs: 600_000 })
    const tracer = tracerWith(processor)
    const unsampled = trace.setSpanContext(context.active(), { traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: TraceFlags.NONE, isRemote: true })
    tracer.startSpan('dropped', {}, unsampled).end()
    tracer.startSpan('kept').end()
    const flushed = processor.forceFlush()
    await Promise.resolve()
    answer()
    await flushed
    expect(sent).toEqual([1])
  })

  it('reads the OTEL_BSP_* variables, with the specification defaults', () => {
    expect(batchSettingsFromEnv({})).toEqual({ maxExportBatchSpans: 512, maxQueueSpans: 2048, scheduleDelayMs: 5000 })
    expect(batchSettingsFromEnv({ OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '128', OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_SCHEDULE_DELAY: '200' }))
      .toEqual({ maxExportBatchSpans: 100, maxQueueSpans: 100, scheduleDelayMs: 200 })
  })
})
