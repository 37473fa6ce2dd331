import { describe, expect, it } from 'vitest'
import type { Counter } from './limiter.ts'
import { MemoryLimiter } from './memory-limiter.ts'
import { SwitchableLimiter } from './switchable-limiter.ts'

const budget = (key: string, amount: number): Counter => ({ kind: 'budget', key, limit: 10, amount, enforce: true })

describe('SwitchableLimiter', () => {
  it('counts in the replacement store from the switch on, under its prefix, and answers in the stage prefix', async () => {
    const first = new MemoryLimiter()
    const shared = new MemoryLimiter()
    const limiter = new SwitchableLimiter(first, 'gh:')
    await limiter.reserve('r1', [budget('gh:b:ws', 4)], 60_000)
    expect(await first.usage(['gh:b:ws'])).toEqual([4])

    // Another gateway already spent 5 under the shared prefix.
    await shared.reserve('other', [budget('team:b:ws', 5)], 60_000)
    await limiter.replace(shared, 'team:')
    // Break tried: without the key rewrite the counter lands on 'gh:b:ws' in the shared store and 6 more fit.
    const refused = await limiter.reserve('r2', [budget('gh:b:ws', 6)], 60_000)
    expect(refused.admitted).toBe(false)
    expect(refused.states[0]!.key).toBe('gh:b:ws')
    const admitted = await limiter.reserve('r3', [budget('gh:b:ws', 5)], 60_000)
    expect(admitted.admitted).toBe(true)
    expect(await shared.usage(['team:b:ws'])).toEqual([10])
    expect(await limiter.usage(['gh:b:ws'])).toEqual([10])
    await limiter.settle('r3', [{ kind: 'budget', key: 'gh:b:ws', actual: 1 }])
    expect(await shared.usage(['team:b:ws'])).toEqual([6])
    await limiter.close()
  })
})
