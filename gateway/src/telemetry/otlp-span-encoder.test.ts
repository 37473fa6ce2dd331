import { SpanKind, SpanStatusCode, TraceFlags, context, trace, type Tracer } from '@opentelemetry/api'
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { beforeEach, describe, expect, it } from 'vitest'
import { leanTracer } from './lean-span.ts'
import { encodeRequest, encodeSpan, ProtoBuffer, type ScopeSpanBytes } from './otlp-span-encoder.ts'

/** Which spans the encoder is given: the SDK's, or the gateway's lean ones (lean-span.ts). */
let tracerKind: 'sdk' | 'lean' = 'sdk'

/** Finished spans of one scope, as the tracer hands them to a processor. */
function finishedSpans(make: (tracer: Tracer) => void): ReadableSpan[] {
  const ended: ReadableSpan[] = []
  const collect: SpanProcessor = { onStart() {}, onEnd: (span) => void ended.push(span), forceFlush: async () => {}, shutdown: async () => {} }
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'encoder-test', 'service.instance.id': 'é-instance', 'process.pid': 4242 }),
    spanProcessors: [collect],
  })
  const tracer = provider.getTracer('gatehouse-gateway', '1.2.3')
  make(tracerKind === 'lean' ? leanTracer(tracer)! : tracer)
  return ended
}

function encoded(spans: ReadableSpan[]): Buffer {
  const spanBytes = new ProtoBuffer(16)
  for (const span of spans) encodeSpan(spanBytes, span)
  const scopes: ScopeSpanBytes[] = [{ scope: spans[0]!.instrumentationScope, bytes: spanBytes.bytes, start: 0, end: spanBytes.pos }]
  const out = new ProtoBuffer(16)
  encodeRequest(out, spans[0]!.resource, scopes)
  return out.written()
}

describe.each(['sdk', 'lean'] as const)('OTLP span encoding of %s spans', (kind) => {
  beforeEach(() => {
    tracerKind = kind
  })

  it('writes the same bytes as the SDK exporter for the values spans carry', () => {
    const spans = finishedSpans((tracer) => {
      const server = tracer.startSpan('chat gpt-4o-mini', { kind: SpanKind.SERVER })
      server.setAttributes({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.max_tokens': 64,
        'gen_ai.request.temperature': 0.25,
        'gatehouse.cost_usd': 0.000125,
        'gatehouse.usage.estimated': true,
        'gen_ai.response.finish_reasons': ['stop', 'length'],
        'big.int': 2 ** 40,
        'negative.int': -7,
        'unicode.short': 'héllo ✓',
        // Long enough that its length needs two varint bytes, and multi-byte characters in it.
        'unicode.long': 'ü'.repeat(90) + 'x'.repeat(200),
        // The longest string written byte by byte, and one as long whose last character is not ASCII.
        'ascii.longest': 'x'.repeat(127),
        'ascii.until.last': `${'x'.repeat(126)}é`,
        'ascii.too.long': 'y'.repeat(128),
      })
      // Set again: written where it was first set, with this value.
      server.setAttribute('gen_ai.request.max_tokens', 128)
      server.addEvent('gen_ai.content', { 'gen_ai.input.messages': '[{"role":"user"}]' })
      const parent = trace.setSpan(context.active(), server)
      const attempt = tracer.startSpan('chat gpt-4o-mini', { kind: SpanKind.CLIENT, links: [
        { context: { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: TraceFlags.SAMPLED, isRemote: true } },
        // Upper-case hex, which ids read from a caller's headers may be in.
        { context: { traceId: '0123456789ABCDEF'.repeat(2), spanId: 'FEDCBA9876543210', traceFlags: TraceFlags.SAMPLED, isRemote: true } },
      ] }, parent)
      attempt.setAttribute('error.type', 'provider_error')
      attempt.setStatus({ code: SpanStatusCode.ERROR, message: 'provider_error' })
      attempt.end()
      server.end()
      const remote = trace.setSpanContext(context.active(), { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true })
      tracer.startSpan('remote child', {}, remote).end()
    })
    const sdk = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!)
    expect(encoded(spans).equals(sdk)).toBe(true)
  })

  it('writes the same bytes when attribute values repeat, change and come back from span to span', () => {
    // Encoded pairs are copied once a value came three times in a row: every span here after the
    // third copies some, writes others afresh, and the long value's pair needs a two-byte length.
    // The model changes after runs of two (never copied), four and five.
    const models = ['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o', 'gpt-4o', 'gpt-4o', 'gpt-4o', 'gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini']
    const spans = finishedSpans((tracer) => {
      models.forEach((model, index) => {
        tracer.startSpan(`chat ${model}`, { kind: SpanKind.SERVER, attributes: {
          'gen_ai.request.model': model,
          'gen_ai.operation.name': 'chat',
          'http.response.status_code': index === 3 ? 500 : 200,
          'gatehouse.usage.estimated': index % 3 === 0,
          'gatehouse.cost_usd': 0.000125,
          'gen_ai.usage.input_tokens': 10 + index,
          'long.value': 'ü'.repeat(index < 5 ? 90 : 91),
        } }).end()
      })
    })
    expect(encoded(spans).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!))).toBe(true)
  })

  it('writes the same bytes when spans share ids (a request trace id, the parent of its attempts), whether remembered or forgotten since', () => {
    const spans = finishedSpans((tracer) => {
      for (let request = 0; request < 3; request++) {
        const server = tracer.startSpan('chat', { kind: SpanKind.SERVER })
        const parent = trace.setSpan(context.active(), server)
        for (let attempt = 0; attempt < request + 1; attempt++) tracer.startSpan('attempt', { kind: SpanKind.CLIENT }, parent).end()
        server.end()
      }
    })
    expect(encoded(spans).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!))).toBe(true)
  })

  it('writes the same bytes when spans come in several shapes, their values changing anywhere', () => {
    // Lean spans of a name written the same way are encoded from the last one's bytes, a run of
    // unchanged KeyValues at a time (SpanShape): values change first, last, in the middle, two
    // in a row; a name set twice; arrays equal and not; more shapes that start alike than are kept.
    const values = [
      { a: 'one', b: 1, c: true, d: ['stop'], e: 'x' },
      { a: 'one', b: 1, c: true, d: ['stop'], e: 'x' },
      { a: 'two', b: 1, c: true, d: ['stop'], e: 'x' },
      { a: 'two', b: 2, c: false, d: ['stop'], e: 'x' },
      { a: 'two', b: 2, c: false, d: ['length'], e: 'y'.repeat(300) },
      { a: 'two', b: 2, c: false, d: ['length', 'stop'], e: 'y'.repeat(300) },
      { a: 'two', b: 2 ** 40, c: false, d: ['length', 'stop'], e: 'ü'.repeat(60) },
      { a: 'two', b: 2 ** 40, c: false, d: ['length', 'stop'], e: 'ü'.repeat(60) },
    ]
    const spans = finishedSpans((tracer) => {
      for (let round = 0; round < 2; round++) {
        values.forEach((value, index) => {
          const span = tracer.startSpan('chat gpt-4o-mini', { kind: SpanKind.SERVER })
          span.setAttributes({ 'gen_ai.operation.name': 'chat', ...value })
          // The first four in two shapes (a name set twice or not); then by how many names were written.
          for (let extra = 0; extra < (index < 4 ? 0 : (index + round) % 4); extra++) span.setAttribute(`extra.${extra}`, extra)
          // Set again: where first written, with the last value.
          if (index % 2 === 1) span.setAttribute('b', index * 10)
          span.end()
        })
        // Shapes are kept by their first name: nine in turn that start alike, one more than are kept.
        for (let shape = 0; shape < 18; shape++) {
          const span = tracer.startSpan('attempt', { kind: SpanKind.CLIENT })
          for (let name = 0; name <= shape % 9; name++) span.setAttribute(`n${name}`, round)
          span.end()
        }
      }
    })
    expect(encoded(spans).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!))).toBe(true)
  })

  it('grows its buffer as a batch outgrows it', () => {
    const spans = finishedSpans((tracer) => {
      for (let i = 0; i < 50; i++) tracer.startSpan(`span ${i}`, { attributes: { index: i, text: 'x'.repeat(i * 10) } }).end()
    })
    expect(encoded(spans).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!))).toBe(true)
  })
})

describe('ProtoBuffer.time', () => {
  it('writes nanoseconds since the epoch exactly', () => {
    const times = [[0, 0], [1, 999_999_999], [1_764_300_000, 123_456_789], [0xffffffff, 999_999_999], [0xffffffff, 0], [1_764_300_000, 0], [1_764_300_000, 999_999_999], [4_294_967, 296_000_000], [4_294_967, 295_999_999]] as const
    // One buffer for all: times within the same second reuse that second's part, and its low half carries at 2³².
    const out = new ProtoBuffer(16)
    for (const time of times) {
      const at = out.pos
      out.time(1, [time[0], time[1]])
      expect(out.bytes.readBigUInt64LE(at + 1)).toBe(BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]))
    }
  })
})
