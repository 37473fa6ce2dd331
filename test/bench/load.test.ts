/**
 * The benchmark's arithmetic only: nearest-rank percentiles, the latency recorder, the medians
 * over repetitions and the acceptance verdicts. No timing assertions: performance is measured by
 * `make bench`, never by the test suite.
 */
import { describe, expect, it } from 'vitest'
import { LatencyRecorder, percentile, summarize } from './histogram.ts'
import type { LoadResult } from './load.ts'
import { aggregate, checkTargets, cpuModelRatio, median, type ScenarioName, type ScenarioRun, type TargetName } from './report.ts'

describe('percentile (nearest rank)', () => {
  const oneToHundred = Array.from({ length: 100 }, (_, index) => index + 1)

  it('picks the sample at rank ceil(p/100 · n)', () => {
    expect(percentile(oneToHundred, 50)).toBe(50)
    expect(percentile(oneToHundred, 90)).toBe(90)
    expect(percentile(oneToHundred, 99)).toBe(99)
    expect(percentile(oneToHundred, 99.5)).toBe(100)
    expect(percentile(oneToHundred, 100)).toBe(100)
  })

  it('treats p0 as the minimum and never interpolates', () => {
    expect(percentile([10, 20, 30, 40], 0)).toBe(10)
    expect(percentile([10, 20, 30, 40], 50)).toBe(20)
    expect(percentile([10, 20, 30, 40], 51)).toBe(30)
    expect(percentile([7], 99)).toBe(7)
  })

  it('is NaN without samples and rejects percentages outside [0, 100]', () => {
    expect(percentile([], 50)).toBeNaN()
    expect(() => percentile([1], 101)).toThrow()
    expect(() => percentile([1], -1)).toThrow()
  })

  it('summarizes min, mean, max and the reported percentiles', () => {
    const summary = summarize(oneToHundred)
    expect(summary).toMatchObject({ count: 100, dropped: 0, minUs: 1, meanUs: 50.5, p50Us: 50, p90Us: 90, p99Us: 99, p999Us: 100, maxUs: 100 })
  })
})

describe('LatencyRecorder', () => {
  it('records microseconds, sorts on summary, and keeps recording afterwards', () => {
    const recorder = new LatencyRecorder(10)
    for (const us of [300, 100, 200]) recorder.recordUs(us)
    expect(recorder.summary()).toMatchObject({ count: 3, minUs: 100, p50Us: 200, maxUs: 300 })
    recorder.recordUs(50)
    expect(recorder.summary()).toMatchObject({ count: 4, minUs: 50, p50Us: 100 })
  })

  it('converts hrtime nanoseconds to rounded microseconds', () => {
    const recorder = new LatencyRecorder(4)
    recorder.recordSince(1_000_000n, 2_499_400n)
    recorder.recordSince(0n, 2_500n)
    expect([...recorder.sorted()]).toEqual([3, 1499])
  })

  it('counts samples beyond its capacity as dropped instead of growing', () => {
    const recorder = new LatencyRecorder(2)
    for (const us of [1, 2, 3, 4]) recorder.recordUs(us)
    expect(recorder.summary()).toMatchObject({ count: 2, dropped: 2, maxUs: 2 })
  })

  it('clamps negative durations to zero', () => {
    const recorder = new LatencyRecorder(1)
    recorder.recordUs(-5)
    expect(recorder.summary().minUs).toBe(0)
  })
})

describe('median', () => {
  it('takes the middle value, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(median([])).toBeNaN()
  })
})

function fakeResult(overrides: { rps: number; p50Us?: number; p99Us?: number; firstByteP50Us?: number; errors?: number; foreignCores?: number }): LoadResult {
  const latency = { count: 100, dropped: 0, minUs: 1, meanUs: 1, p50Us: overrides.p50Us ?? 1000, p90Us: 1500, p99Us: overrides.p99Us ?? 2000, p999Us: 3000, maxUs: 4000 }
  return {
    mode: 'closed',
    windowS: 1,
    requests: 100,
    requestsPerS: overrides.rps,
    errors: overrides.errors ?? 0,
    non2xx: 0,
    incomplete: 0,
    firstError: null,
    latency,
    firstByte: overrides.firstByteP50Us === undefined ? null : { ...latency, p50Us: overrides.firstByteP50Us },
    headers: null,
    sendLag: null,
    offeredPerS: null,
    responseBytes: 700,
    processes: [],
    foreignCores: overrides.foreignCores ?? 0,
    generatorCores: 0,
  }
}

function run(scenario: ScenarioName, target: TargetName, rep: number, result: LoadResult): ScenarioRun {
  return { scenario, target, rep, result }
}

describe('aggregate and targets', () => {
  it('takes the median of each metric over the repetitions', () => {
    const runs = [1000, 3000, 2000].map((rps, index) => run('sat', 'bare', index + 1, fakeResult({ rps, p99Us: rps * 2 })))
    expect(aggregate(runs, 'sat', 'bare')).toMatchObject({ reps: 3, requestsPerS: 2000, p99Us: 4000, perRepRequestsPerS: [1000, 3000, 2000] })
  })

  it('computes the ratio and the added latencies against the bare proxy', () => {
    const runs = [
      run('sat', 'bare', 1, fakeResult({ rps: 1000 })),
      run('sat', 'gatehouse', 1, fakeResult({ rps: 690 })),
      run('paced', 'direct', 1, fakeResult({ rps: 800, p99Us: 1500 })),
      run('paced', 'bare', 1, fakeResult({ rps: 800, p99Us: 2000 })),
      run('paced', 'gatehouse', 1, fakeResult({ rps: 800, p99Us: 2900 })),
      run('ttfb', 'bare', 1, fakeResult({ rps: 900, firstByteP50Us: 600 })),
      run('ttfb', 'gatehouse', 1, fakeResult({ rps: 700, firstByteP50Us: 1700 })),
    ]
    const aggregates = (['sat', 'paced', 'ttfb'] as const).flatMap((scenario) =>
      (['direct', 'bare', 'gatehouse'] as const).map((target) => aggregate(runs, scenario, target)).filter((entry) => entry !== null),
    )
    const [throughput, addedP99, addedTtfb] = checkTargets(aggregates)
    expect(throughput).toMatchObject({ value: 0.69, pass: false, reliable: true })
    expect(addedP99).toMatchObject({ value: 900, pass: true })
    expect(addedP99?.context.addedP99VsDirectUs).toBe(1400)
    expect(addedTtfb).toMatchObject({ value: 1100, pass: false })
  })

  it('gives no verdict when a judged run had failed requests', () => {
    const runs = [run('sat', 'bare', 1, fakeResult({ rps: 1000 })), run('sat', 'gatehouse', 1, fakeResult({ rps: 5000, errors: 3 }))]
    const aggregates = [aggregate(runs, 'sat', 'bare')!, aggregate(runs, 'sat', 'gatehouse')!]
    expect(checkTargets(aggregates)[0]).toMatchObject({ value: 5, pass: null })
  })

  it('marks a verdict unreliable when other processes took CPU during the judged runs', () => {
    const runs = [run('sat', 'bare', 1, fakeResult({ rps: 1000 })), run('sat', 'gatehouse', 1, fakeResult({ rps: 800, foreignCores: 1.4 }))]
    const aggregates = [aggregate(runs, 'sat', 'bare')!, aggregate(runs, 'sat', 'gatehouse')!]
    expect(checkTargets(aggregates)[0]).toMatchObject({ pass: true, reliable: false, foreignCores: 1.4 })
  })

  it('predicts the shared-core throughput ratio from CPU per request', () => {
    const withCpu = (target: 'bare' | 'gatehouse', proxyUs: number): ScenarioRun => {
      const result = fakeResult({ rps: 1 })
      result.requests = 1000
      result.processes = [
        { name: target, pid: 1, cpuMs: proxyUs, cpuUsPerRequest: proxyUs, minorFaultsPerRequest: 0, cores: 0.5, rssMaxKb: 1, hwmKb: 1 },
        { name: 'simulator', pid: 2, cpuMs: 40, cpuUsPerRequest: 40, minorFaultsPerRequest: 0, cores: 0.2, rssMaxKb: 1, hwmKb: 1 },
      ]
      return run('sat', target, 1, result)
    }
    const runs = [withCpu('bare', 60), withCpu('gatehouse', 160)]
    expect(cpuModelRatio(aggregate(runs, 'sat', 'bare'), aggregate(runs, 'sat', 'gatehouse'))).toBeCloseTo(0.5)
  })
})
