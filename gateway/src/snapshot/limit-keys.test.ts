/** Budget periods: the counter's period label, what a reset worker's write does to it, and the request path's remembered keys. */
import { describe, expect, it } from 'vitest'
import { limitCounterKey, limitPeriod, LimitCounterKeys } from './limit-keys.ts'
import { snapshotLimit } from './policies.ts'

const DAY_MS = 86_400_000
const budget = { kind: 'usage' as const, periodicReset: null, periodicResetDays: null, periodStartedAt: null, periodEndsAt: null }
const at = (iso: string) => Date.parse(iso)

describe('limitPeriod', () => {
  it('counts every N days from the anchor, and the worker writing the running period keeps its label', () => {
    const limit = { ...budget, periodicResetDays: 10, periodStartedAt: '2026-01-01T00:00:00.000Z' }
    const now = at('2026-01-15T12:00:00.000Z')
    const running = limitPeriod(limit, now)
    expect(running).toEqual({ label: `s${at('2026-01-11T00:00:00.000Z')}`, startsAtMs: at('2026-01-11T00:00:00.000Z'), endsAtMs: at('2026-01-21T00:00:00.000Z') })
    const afterWorker = limitPeriod({ ...limit, periodStartedAt: '2026-01-11T00:00:00.000Z', periodEndsAt: '2026-01-21T00:00:00.000Z' }, now)
    expect(afterWorker).toEqual(running)
  })

  it('a manual reset (a later anchor) starts a new counter inside the period', () => {
    const limit = { ...budget, periodicReset: 'monthly' as const, periodStartedAt: '2026-01-01T00:00:00.000Z' }
    const now = at('2026-03-20T00:00:00.000Z')
    expect(limitPeriod(limit, now).startsAtMs).toBe(at('2026-03-01T00:00:00.000Z'))
    const reset = limitPeriod({ ...limit, periodStartedAt: '2026-03-10T00:00:00.000Z' }, now)
    expect(reset.startsAtMs).toBe(at('2026-03-10T00:00:00.000Z'))
    expect(reset.endsAtMs).toBe(at('2026-04-01T00:00:00.000Z'))
  })

  it('a stated next reset holds the period open until it passes, then periods run from it', () => {
    const limit = { ...budget, periodicResetDays: 30, periodStartedAt: '2026-01-01T00:00:00.000Z', periodEndsAt: '2026-01-05T00:00:00.000Z' }
    expect(limitPeriod(limit, at('2026-01-04T00:00:00.000Z'))).toMatchObject({ startsAtMs: at('2026-01-01T00:00:00.000Z'), endsAtMs: at('2026-01-05T00:00:00.000Z') })
    expect(limitPeriod(limit, at('2026-01-06T00:00:00.000Z'))).toMatchObject({ startsAtMs: at('2026-01-05T00:00:00.000Z'), endsAtMs: at('2026-01-05T00:00:00.000Z') + 30 * DAY_MS })
  })

  it('weekly periods start on Monday 00:00 UTC; a budget without reset never moves', () => {
    const weekly = limitPeriod({ ...budget, periodicReset: 'weekly' }, at('2026-11-25T10:00:00.000Z'))
    expect(weekly).toMatchObject({ startsAtMs: at('2026-11-23T00:00:00.000Z'), endsAtMs: at('2026-11-30T00:00:00.000Z') })
    expect(limitPeriod(budget, at('2026-11-25T10:00:00.000Z'))).toEqual({ label: 's0', startsAtMs: 0, endsAtMs: null })
  })
})

describe('LimitCounterKeys', () => {
  it('gives the key limitCounterKey gives, for every kind of period and group, as time passes', () => {
    const base = { source: 'policy', ownerId: 'p', type: 'tokens', creditLimit: 100 } as const
    const limits = [
      snapshotLimit.parse({ ...base, id: 'rate', kind: 'rate', unit: 'rpm', value: 5, groupBy: ['metadata.team'] }),
      snapshotLimit.parse({ ...base, id: 'forever', kind: 'usage' }),
      snapshotLimit.parse({ ...base, id: 'weekly', kind: 'usage', periodicReset: 'weekly', groupBy: ['user', 'model'] }),
      snapshotLimit.parse({ ...base, id: 'monthly', kind: 'usage', periodicReset: 'monthly', periodStartedAt: '2026-03-10T00:00:00.000Z' }),
      snapshotLimit.parse({ ...base, id: 'days', kind: 'usage', periodicResetDays: 3, periodStartedAt: '2026-03-01T05:00:00.000Z', periodEndsAt: '2026-03-02T00:00:00.000Z' }),
      // An anchor in the future: a period starting later than now.
      snapshotLimit.parse({ ...base, id: 'ahead', kind: 'usage', periodicResetDays: 1, periodStartedAt: '2026-04-20T00:00:00.000Z' }),
    ]
    const groups = [[], ['a'], ['b'], ['a', 'b'], ['a\u0000b', 'c'], ['a', 'b\u0000c']]
    const keys = new LimitCounterKeys('gh:')
    let nowMs = at('2026-02-27T00:00:00.000Z')
    const seen = new Set<string>()
    // Hours apart over two months, crossing weeks, months, N-day periods and the stated end.
    for (let step = 0; step < 1_500; step++) {
      nowMs += 3_600_000 + (step % 7) * 60_000
      for (const limit of limits) {
        for (const group of groups.filter((g) => g.length === limit.groupBy.length)) {
          const key = keys.keyOf('org', limit, group, nowMs)
          expect(key).toBe(limitCounterKey('gh:', 'org', limit, group, nowMs))
          seen.add(key)
        }
      }
    }
    // The keys did move with the periods (and the groups kept apart).
    expect(seen.size).toBeGreaterThan(40)
  })
})
