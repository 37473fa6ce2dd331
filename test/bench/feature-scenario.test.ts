import { describe, expect, it } from 'vitest'
import { summariseFeatures, type FeatureRun, type FeatureVariantName } from './feature-scenario.ts'
import type { LoadResult } from './load.ts'

function run(variant: FeatureVariantName, instance: number, rep: number, cpuUsPerRequest: number, requestsPerS: number): FeatureRun {
  const result = { requestsPerS, processes: [{ name: 'server', cpuUsPerRequest, minorFaultsPerRequest: 0 }] } as unknown as LoadResult
  return { variant, instance, rep, result }
}

describe('summariseFeatures', () => {
  it('takes the median of a variant\'s processes in each repetition, then the median over repetitions', () => {
    const runs: FeatureRun[] = []
    for (const rep of [1, 2, 3]) {
      // Three proxies and three floors; one floor process is persistently slow and must not decide the row.
      runs.push(run('bare Node proxy', 1, rep, 300, 3000), run('bare Node proxy', 2, rep, 310, 2900), run('bare Node proxy', 3, rep, 290, 3100))
      runs.push(run('Gatehouse floor', 1, rep, 400, 2500), run('Gatehouse floor', 2, rep, 600, 1700), run('Gatehouse floor', 3, rep, 410, 2400))
      runs.push(run('metering', 1, rep, 410, 2350), run('metering', 2, rep, 415, 2300), run('metering', 3, rep, 620, 1600))
    }
    const [proxy, floor, metering] = summariseFeatures(runs)
    expect(proxy!.shareOfProxy).toBeNull()
    expect(floor!.cpuUsPerRequest).toBe(410)
    expect(floor!.cpuUsPerProcess).toEqual([400, 410, 600])
    expect(floor!.processes).toBe(3)
    expect(metering!.addedUsPerRequest).toBe(5)
    expect(metering!.shareOfProxy).toBeCloseTo(2300 / 3000)
    expect(metering!.shareOfFloor).toBeCloseTo(2300 / 2400)
    expect(metering!.met).toBe(true)
  })

  it('pairs a variant with the reference of the same repetition and fails a missed target', () => {
    const runs = [
      run('bare Node proxy', 1, 1, 300, 4000), run('Gatehouse floor', 1, 1, 400, 3000), run('metering', 1, 1, 430, 2800),
      run('bare Node proxy', 1, 2, 600, 2000), run('Gatehouse floor', 1, 2, 800, 1500), run('metering', 1, 2, 860, 1400),
    ]
    const metering = summariseFeatures(runs).find((summary) => summary.variant === 'metering')!
    // +30 and +60 µs: each against its own repetition's floor, not a floor of another moment.
    expect(metering.addedUsPerRequest).toBe(45)
    expect(metering.met).toBe(false)
  })
})
