import { Counter, Histogram, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { SeriesCounter, SeriesHistogram } from './series.ts'

const BUCKETS = [0.01, 0.1, 1]

/** The same updates on prom-client's metrics and on ours, in two registries. */
function both(): { ours: Registry; theirs: Registry; counter: SeriesCounter<readonly ['op', 'status']>; histogram: SeriesHistogram<readonly ['op']>; promCounter: Counter<'op' | 'status'>; promHistogram: Histogram<'op'> } {
  const ours = new Registry()
  const theirs = new Registry()
  const help = 'help text'
  return {
    ours,
    theirs,
    counter: new SeriesCounter({ name: 'things_total', help, labelNames: ['op', 'status'], registers: [ours] }),
    histogram: new SeriesHistogram({ name: 'things_seconds', help, labelNames: ['op'], buckets: BUCKETS, registers: [ours] }),
    promCounter: new Counter({ name: 'things_total', help, labelNames: ['op', 'status'] as const, registers: [theirs] }),
    promHistogram: new Histogram({ name: 'things_seconds', help, labelNames: ['op'] as const, buckets: BUCKETS, registers: [theirs] }),
  }
}

describe('series metrics', () => {
  it('expose exactly what prom-client exposes for the same updates', async () => {
    const m = both()
    const updates: Array<[string, string, number]> = [
      ['chat', '2xx', 0.005],
      ['chat', '2xx', 0.5],
      ['embed "quoted"\nline', '4xx', 0.1],
      ['chat', '5xx', 7],
      ['messages', '2xx', 1],
    ]
    for (const [op, status, seconds] of updates) {
      m.counter.inc([op, status])
      m.promCounter.inc({ op, status })
      m.histogram.observe([op], seconds)
      m.promHistogram.observe({ op }, seconds)
    }
    m.counter.inc(['chat', '2xx'], 2.5)
    m.promCounter.inc({ op: 'chat', status: '2xx' }, 2.5)
    expect(await m.ours.metrics()).toBe(await m.theirs.metrics())
    expect(await m.ours.getMetricsAsJSON()).toEqual(JSON.parse(JSON.stringify(await m.theirs.getMetricsAsJSON())))
  })

  it('refuses what prom-client refuses', () => {
    const m = both()
    expect(() => m.counter.inc(['chat', '2xx'], -1)).toThrow(/decrease/)
    expect(() => m.counter.inc(['chat', '2xx'], Number.NaN)).toThrow(/not a valid number/)
    expect(() => m.histogram.observe(['chat'], Number.POSITIVE_INFINITY)).toThrow(/not a valid number/)
    expect(() => m.histogram.observe(['chat', 'extra'] as never, 1)).toThrow(/label values/)
  })

  it('starts over on reset', async () => {
    const m = both()
    m.counter.inc(['chat', '2xx'])
    m.histogram.observe(['chat'], 0.2)
    m.ours.resetMetrics()
    m.counter.inc(['embed', '2xx'])
    expect((await m.counter.get()).values).toEqual([{ value: 1, labels: { op: 'embed', status: '2xx' } }])
    expect((await m.histogram.get()).values).toEqual([])
  })
})
