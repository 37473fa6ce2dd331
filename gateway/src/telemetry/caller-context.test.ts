import { createHash } from 'node:crypto'
import { propagation, trace, type Context, type TextMapPropagator } from '@opentelemetry/api'
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core'
import { afterEach, describe, expect, it } from 'vitest'
import { setTracingEnabled, spanlessRoots, spanlessRootsAllowed, upstreamTraceparentOf } from '../core/tracing.ts'
import { CallerIdGenerator, callerParent, toSpanId, toTraceId, unsampledRootContext, withRootTraceId } from './caller-context.ts'

const sha = (value: string, digits: number): string => createHash('sha256').update(value).digest('hex').slice(0, digits)
const none = { spanId: null, parentSpanId: null }

describe('caller ids to W3C ids', () => {
  it('keeps ids that already are W3C-shaped (lowercased), strips a UUID, hashes anything else', () => {
    expect(toTraceId('4BF92F3577B34DA6A3CE929D0E0E4736')).toBe('4bf92f3577b34da6a3ce929d0e0e4736')
    expect(toTraceId('0af7651c-4e3b-4f2a-9c1d-2b3c4d5e6f70')).toBe('0af7651c4e3b4f2a9c1d2b3c4d5e6f70')
    expect(toTraceId('order-42')).toBe(sha('order-42', 32))
    expect(toTraceId('0'.repeat(32))).toBe(sha('0'.repeat(32), 32))
    expect(toSpanId('00F067AA0BA902B7')).toBe('00f067aa0ba902b7')
    expect(toSpanId('plan-step')).toBe(sha('plan-step', 16))
    expect(toSpanId('0'.repeat(16))).toMatch(/^(?!0{16})[0-9a-f]{16}$/)
  })
})

describe('callerParent', () => {
  // The W3C propagator is only registered by the SDK; without it, extract finds nothing, so these
  // tests cover the x-gateway-* mapping (the traceparent case is covered end to end).
  it('a caller span id becomes a sampled remote parent in the mapped trace', () => {
    const choice = callerParent({}, { traceId: 'order-42', spanId: 'plan-step', parentSpanId: 'agent' })
    expect(choice.rootTraceId).toBeNull()
    expect(trace.getSpanContext(choice.context)).toEqual({ traceId: sha('order-42', 32), spanId: sha('plan-step', 16), traceFlags: 1, isRemote: true })
  })

  it('falls back to the parent span id, and to a root span in the mapped trace without either', () => {
    expect(trace.getSpanContext(callerParent({}, { traceId: 't', spanId: null, parentSpanId: 'abcdefabcdefabcd' }).context)?.spanId).toBe('abcdefabcdefabcd')
    const root = callerParent({}, { traceId: '0af7651c-4e3b-4f2a-9c1d-2b3c4d5e6f70', ...none })
    expect(root.rootTraceId).toBe('0af7651c4e3b4f2a9c1d2b3c4d5e6f70')
    expect(trace.getSpanContext(root.context)).toBeUndefined()
  })
})

describe('callerParent with propagators registered', () => {
  afterEach(() => {
    setTracingEnabled(false)
    propagation.disable()
  })

  /** Reads a trace from a header of its own (as B3 or Jaeger would), and counts how often it was asked. */
  class HeaderPropagator implements TextMapPropagator {
    extractions = 0
    inject(): void {}
    extract(context: Context, carrier: unknown): Context {
      this.extractions++
      const value = (carrier as Record<string, string | undefined>)['x-own-trace']
      if (value === undefined) return context
      return trace.setSpanContext(context, { traceId: value, spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true })
    }
    fields(): string[] {
      return ['X-Own-Trace']
    }
  }

  it('extracts from whichever header a registered propagator names, and asks none when the request carries none', () => {
    const own = new HeaderPropagator()
    propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), own] }))
    setTracingEnabled(true)
    const w3c = callerParent({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }, { traceId: 'ignored', ...none })
    expect(trace.getSpanContext(w3c.context)?.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736')
    const mine = callerParent({ 'x-own-trace': '0af7651c4e3b4f2a9c1d2b3c4d5e6f70' }, { traceId: 'ignored', ...none })
    expect(trace.getSpanContext(mine.context)?.traceId).toBe('0af7651c4e3b4f2a9c1d2b3c4d5e6f70')
    expect(own.extractions).toBe(2)
    const bare = callerParent({ 'content-type': 'application/json' }, { traceId: 'order-42', ...none })
    expect(own.extractions).toBe(2)
    expect(bare.rootTraceId).toBe(sha('order-42', 32))
    expect(trace.getSpanContext(bare.context)).toBeUndefined()
  })
})

describe('unsampledRootContext', () => {
  afterEach(() => {
    setTracingEnabled(false)
    propagation.disable()
  })

  const w3c = (): CompositePropagator => new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] })

  it('is allowed only when roots are never sampled and the propagators are W3C\'s, traceparent among them', () => {
    expect(spanlessRootsAllowed(['traceparent', 'tracestate', 'baggage'], true)).toBe(true)
    expect(spanlessRootsAllowed(['traceparent', 'tracestate'], true)).toBe(true)
    expect(spanlessRootsAllowed(['traceparent', 'tracestate', 'baggage'], false)).toBe(false)
    // B3 would write headers of its own for the unsampled span; baggage alone writes no traceparent.
    expect(spanlessRootsAllowed(['traceparent', 'tracestate', 'b3'], true)).toBe(false)
    expect(spanlessRootsAllowed(['baggage'], true)).toBe(false)
    expect(spanlessRootsAllowed([], true)).toBe(false)
  })

  it('gives a root the unsampled span the SDK would start, and the traceparent W3C\'s propagator writes for it', () => {
    propagation.setGlobalPropagator(w3c())
    setTracingEnabled(true, { rootsNeverSampled: true })
    expect(spanlessRoots()).toBe(true)
    const root = unsampledRootContext(callerParent({ 'content-type': 'application/json' }, { traceId: 'order-42', ...none }))!
    const spanContext = trace.getSpanContext(root)!
    expect(spanContext).toMatchObject({ traceId: sha('order-42', 32), traceFlags: 0 })
    expect(spanContext.spanId).toMatch(/^(?!0{16})[0-9a-f]{16}$/)
    expect(trace.getSpan(root)?.isRecording()).toBe(false)
    expect(upstreamTraceparentOf(root)).toBe(`00-${sha('order-42', 32)}-${spanContext.spanId}-00`)
    // What the propagators themselves write for that context: the same header, nothing else.
    const propagated: Record<string, string> = {}
    propagation.inject(root, propagated)
    expect(propagated).toEqual({ traceparent: upstreamTraceparentOf(root) })
  })

  it('leaves a request with a parent, or with baggage to pass on, to the SDK', () => {
    propagation.setGlobalPropagator(w3c())
    setTracingEnabled(true, { rootsNeverSampled: true })
    expect(unsampledRootContext(callerParent({}, { traceId: 't', spanId: 'caller-span', parentSpanId: null }))).toBeNull()
    expect(unsampledRootContext(callerParent({}, { traceId: 't', spanId: null, parentSpanId: 'caller-parent' }))).toBeNull()
    expect(unsampledRootContext(callerParent({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }, { traceId: 't', ...none }))).toBeNull()
    expect(unsampledRootContext(callerParent({ baggage: 'tenant=acme' }, { traceId: 't', ...none }))).toBeNull()
  })

  it('takes a request whose traceparent is not valid as the root it is, as the SDK would start it', () => {
    propagation.setGlobalPropagator(w3c())
    setTracingEnabled(true, { rootsNeverSampled: true })
    const root = unsampledRootContext(callerParent({ traceparent: 'not-a-traceparent' }, { traceId: 'order-42', ...none }))
    expect(trace.getSpanContext(root!)).toMatchObject({ traceId: sha('order-42', 32), traceFlags: 0 })
  })

  it('is off when roots may be sampled, or when another propagator is registered', () => {
    propagation.setGlobalPropagator(w3c())
    setTracingEnabled(true)
    expect(unsampledRootContext(callerParent({}, { traceId: 't', ...none }))).toBeNull()
    propagation.disable()
    propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new (class implements TextMapPropagator {
      inject(): void {}
      extract(context: Context): Context {
        return context
      }
      fields(): string[] {
        return ['b3']
      }
    })()] }))
    setTracingEnabled(true, { rootsNeverSampled: true })
    expect(unsampledRootContext(callerParent({}, { traceId: 't', ...none }))).toBeNull()
  })
})

describe('CallerIdGenerator', () => {
  it('hands the pending trace id to the one root span started inside withRootTraceId, random ids otherwise', () => {
    const ids = new CallerIdGenerator()
    const pinned = 'abcdef0123456789abcdef0123456789'
    expect(withRootTraceId(pinned, () => [ids.generateTraceId(), ids.generateTraceId()])).toEqual([pinned, expect.not.stringMatching(pinned)])
    expect(ids.generateTraceId()).not.toBe(pinned)
    expect(ids.generateSpanId()).toMatch(/^[0-9a-f]{16}$/)
    expect(withRootTraceId(null, () => ids.generateTraceId())).toMatch(/^[0-9a-f]{32}$/)
  })
})
