import { context, SpanKind, SpanStatusCode, trace, TraceFlags, type Span, type Tracer } from '@opentelemetry/api'
import { AlwaysOffSampler, BasicTracerProvider, ParentBasedSampler, type ReadableSpan, type SpanLimits, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { describe, expect, it } from 'vitest'
import { LeanSpan, LeanTracer, leanTracer } from './lean-span.ts'

/** An SDK provider whose processor collects what starts and ends; its tracer, and a lean tracer made from it. */
function tracers(options: { spanLimits?: SpanLimits; sampler?: ConstructorParameters<typeof BasicTracerProvider>[0] extends infer C ? C extends { sampler?: infer S } ? S : never : never } = {}) {
  const started: Span[] = []
  const ended: ReadableSpan[] = []
  const collect: SpanProcessor = { onStart: (span) => void started.push(span), onEnd: (span) => void ended.push(span), forceFlush: async () => {}, shutdown: async () => {} }
  const provider = new BasicTracerProvider({ spanProcessors: [collect], ...options })
  const sdk = provider.getTracer('gatehouse-gateway', '1.2.3')
  return { sdk, lean: leanTracer(sdk)!, started, ended }
}

/** What a processor or exporter reads of a finished span, times and ids aside. */
function readable(span: ReadableSpan) {
  return {
    name: span.name,
    kind: span.kind,
    traceFlags: span.spanContext().traceFlags,
    traceState: span.spanContext().traceState?.serialize(),
    parent: span.parentSpanContext,
    status: span.status,
    attributes: span.attributes,
    droppedAttributesCount: span.droppedAttributesCount,
    events: span.events.map(({ name, attributes, droppedAttributesCount }) => ({ name, attributes, droppedAttributesCount })),
    droppedEventsCount: span.droppedEventsCount,
    links: span.links,
    droppedLinksCount: span.droppedLinksCount,
    ended: span.ended,
    scope: span.instrumentationScope,
    resource: span.resource.attributes,
  }
}

/** Runs `script` on a span of each tracer; returns what each finished span reads as. */
function both(script: (tracer: Tracer) => void, options: Parameters<typeof tracers>[0] = {}) {
  const { sdk, lean, ended } = tracers(options)
  script(sdk)
  const fromSdk = ended.splice(0).map(readable)
  script(lean)
  const fromLean = ended.splice(0).map(readable)
  return { fromSdk, fromLean }
}

describe('LeanSpan', () => {
  it('is made from the SDK tracer as it is configured; a release that renames its fields makes none', () => {
    const { sdk, lean } = tracers()
    expect(lean).toBeInstanceOf(LeanTracer)
    expect(leanTracer({ startSpan: sdk.startSpan, startActiveSpan: sdk.startActiveSpan } as Tracer)).toBeNull()
  })

  it('finishes as the SDK span does: attributes (set again, invalid, arrays), name, status, events, links, exceptions', () => {
    const { fromSdk, fromLean } = both((tracer) => {
      const span = tracer.startSpan('chat', { kind: SpanKind.SERVER, attributes: { 'at.start': 1, 'bad.value': { nested: true } as never } })
      span.setAttributes({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.max_tokens': 64, 'gatehouse.usage.estimated': true })
      const reasons = ['stop']
      span.setAttribute('gen_ai.response.finish_reasons', reasons)
      reasons.push('changed afterwards')
      span.setAttribute('gen_ai.request.max_tokens', 128)
      span.setAttribute('', 'empty key')
      span.setAttribute('mixed', [1, 'two'] as never)
      span.setAttribute('null.value', null as never)
      span.updateName('chat gpt-4o-mini')
      span.addEvent('gen_ai.content', { 'gen_ai.input.messages': '[]' })
      span.addEvent('no attributes')
      span.addLink({ context: { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: TraceFlags.SAMPLED }, attributes: { why: 'retry' } })
      span.recordException(Object.assign(new Error('boom'), { stack: 'Error: boom\n    at here' }))
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'provider_error' })
      span.setStatus({ code: SpanStatusCode.UNSET })
      span.end()
      // After the end nothing changes, and a second end is refused.
      span.setAttribute('late', 1)
      span.end()
    })
    expect(fromLean).toEqual(fromSdk)
    expect(fromLean[0]!.attributes['gen_ai.request.max_tokens']).toBe(128)
    expect(fromLean[0]!.attributes['gen_ai.response.finish_reasons']).toEqual(['stop'])
  })

  it('keeps the span limits as the SDK does', () => {
    const spanLimits: SpanLimits = { attributeCountLimit: 3, attributeValueLengthLimit: 4, eventCountLimit: 1, linkCountLimit: 1, attributePerEventCountLimit: 1, attributePerLinkCountLimit: 1 }
    const { fromSdk, fromLean } = both((tracer) => {
      const span = tracer.startSpan('limited')
      span.setAttributes({ a: 'abcdefgh', b: ['abcdefgh', 'ab'], c: 3, d: 'dropped' })
      span.setAttribute('a', 'replaced, not counted again')
      span.addEvent('first', { x: 'abcdefgh', y: 2 })
      span.addEvent('second replaces it')
      span.addLink({ context: { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: TraceFlags.SAMPLED }, attributes: { p: 1, q: 2 } })
      span.addLink({ context: { traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: TraceFlags.SAMPLED } })
      span.end()
    }, { spanLimits })
    expect(fromLean).toEqual(fromSdk)
    expect(fromLean[0]!.droppedAttributesCount).toBe(1)
    expect(fromLean[0]!.attributes.a).toBe('repl')
  })

  it('takes its parent, trace id and sampling decision as the SDK tracer does', () => {
    const { lean, started } = tracers({ sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }) })
    // A root under an always-off root sampler is not recorded.
    const root = lean.startSpan('root')
    expect(root).not.toBeInstanceOf(LeanSpan)
    expect(root.isRecording()).toBe(false)
    // A sampled remote parent: the child joins its trace, keeps its tracestate, and is recorded.
    const remote = trace.setSpanContext(context.active(), { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true })
    const child = lean.startSpan('child', { kind: SpanKind.CLIENT }, remote) as LeanSpan
    expect(child).toBeInstanceOf(LeanSpan)
    expect(child.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c')
    expect(child.parentSpanContext?.spanId).toBe('b7ad6b7169203331')
    expect(child.spanContext().traceFlags).toBe(TraceFlags.SAMPLED)
    // Its own child (a lean parent) stays in the trace; `root: true` starts a new one.
    const grandchild = lean.startSpan('grandchild', {}, trace.setSpan(context.active(), child)) as LeanSpan
    expect(grandchild.parentSpanContext?.spanId).toBe(child.spanContext().spanId)
    expect(grandchild.spanContext().traceId).toBe(child.spanContext().traceId)
    expect(lean.startSpan('new root', { root: true }, trace.setSpan(context.active(), child)).isRecording()).toBe(false)
    // An invalid parent is no parent: a new trace (dropped by the root sampler here).
    const invalid = trace.setSpanContext(context.active(), { traceId: 'not-hex', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED })
    expect(lean.startSpan('orphan', {}, invalid).isRecording()).toBe(false)
    // The processor saw each recorded span start.
    expect(started).toEqual([child, grandchild])
  })

  it('times a span from the wall clock at its start and the monotonic clock after', async () => {
    const { lean, ended } = tracers()
    const before = Date.now()
    const span = lean.startSpan('timed')
    await new Promise((resolve) => setTimeout(resolve, 20))
    span.end()
    const [finished] = ended
    const startMs = finished!.startTime[0] * 1000 + finished!.startTime[1] / 1e6
    const durationMs = finished!.duration[0] * 1000 + finished!.duration[1] / 1e6
    expect(startMs).toBeGreaterThanOrEqual(before)
    expect(durationMs).toBeGreaterThanOrEqual(15)
    expect(durationMs).toBeLessThan(1000)
    // Given times are kept as given.
    const given = lean.startSpan('given', { startTime: [1_764_300_000, 5] })
    given.end([1_764_300_001, 7])
    expect(ended[1]!.duration).toEqual([1, 2])
  })

  it('runs a function with its new span, started with the options and parent given (startActiveSpan)', () => {
    const { lean } = tracers()
    const remote = trace.setSpanContext(context.active(), { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true })
    const seen = lean.startActiveSpan('active', { kind: SpanKind.CLIENT }, remote, (span) => {
      expect(span).toBeInstanceOf(LeanSpan)
      expect((span as LeanSpan).kind).toBe(SpanKind.CLIENT)
      expect((span as LeanSpan).parentSpanContext?.spanId).toBe('b7ad6b7169203331')
      span.end()
      return 42
    })
    expect(seen).toBe(42)
    expect(lean.startActiveSpan('plain', (span) => span instanceof LeanSpan)).toBe(true)
  })
})
