import { createContextKey, propagation, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api'
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core'
import { describe, expect, it } from 'vitest'
import { ChainedContext } from './chained-context.ts'

const first = createContextKey('first')
const second = createContextKey('second')

describe('ChainedContext', () => {
  it('sets and deletes as new contexts, leaving the one it started from as it was', () => {
    const one = ChainedContext.ROOT.setValue(first, 1)
    const two = one.setValue(second, 2).setValue(first, 'again')
    const deleted = two.deleteValue(first)
    expect([ChainedContext.ROOT.getValue(first), one.getValue(first), one.getValue(second)]).toEqual([undefined, 1, undefined])
    expect([two.getValue(first), two.getValue(second)]).toEqual(['again', 2])
    expect([deleted.getValue(first), deleted.getValue(second)]).toEqual([undefined, 2])
    expect(deleted.setValue(first, 3).getValue(first)).toBe(3)
    // A value set to undefined reads as undefined, as on the API's own contexts.
    expect(one.setValue(first, undefined).getValue(first)).toBeUndefined()
  })

  it('folds a long chain into one link per key and keeps each key\'s newest value', () => {
    const keys = Array.from({ length: 5 }, (_, index) => createContextKey(`key ${index}`))
    let current = ChainedContext.ROOT.setValue(second, 'kept').setValue(first, 'gone').deleteValue(first)
    for (let round = 0; round < 100; round++) current = current.setValue(keys[round % keys.length]!, round)
    expect(keys.map((key) => current.getValue(key))).toEqual([95, 96, 97, 98, 99])
    expect([current.getValue(second), current.getValue(first)]).toEqual(['kept', undefined])
  })

  it('reads the same as the API\'s contexts for what a traced request does with them', () => {
    const propagator = new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] })
    const headers = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', baggage: 'tenant=acme' }
    const getter = { get: (carrier: Record<string, string>, key: string) => carrier[key], keys: (carrier: Record<string, string>) => Object.keys(carrier) }
    const chained = propagator.extract(ChainedContext.ROOT, headers, getter)
    const stock = propagator.extract(ROOT_CONTEXT, headers, getter)
    expect(trace.getSpanContext(chained)).toEqual(trace.getSpanContext(stock))
    expect(propagation.getBaggage(chained)?.getEntry('tenant')).toEqual(propagation.getBaggage(stock)?.getEntry('tenant'))
    const child = trace.wrapSpanContext({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED })
    const outgoing: Record<string, string> = {}
    const setter = { set: (carrier: Record<string, string>, key: string, value: string) => { carrier[key] = value } }
    propagator.inject(trace.setSpan(chained, child), outgoing, setter)
    expect(outgoing).toEqual({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01', baggage: 'tenant=acme' })
  })
})
