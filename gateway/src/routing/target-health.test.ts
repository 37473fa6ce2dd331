import { describe, expect, it } from 'vitest'
import { RetryBudget, TargetHealthRegistry } from './target-health.ts'

describe('retry budget', () => {
  it('always allows a few retries at once', () => {
    const budget = new RetryBudget()
    budget.enter()
    expect([budget.acquireRetry(), budget.acquireRetry(), budget.acquireRetry(), budget.acquireRetry()]).toEqual([true, true, true, false])
  })

  it('allows 20% of the active requests to retry, and frees slots as requests leave', () => {
    const budget = new RetryBudget()
    for (let index = 0; index < 50; index++) budget.enter()
    let granted = 0
    while (budget.acquireRetry()) granted++
    expect(granted).toBe(10)
    budget.leave(true)
    expect(budget.acquireRetry()).toBe(true)
    expect(budget).toMatchObject({ active: 49, retrying: 10 })
  })
})

describe('target health registry', () => {
  it('keeps one entry per key and bounds how many it keeps', () => {
    const registry = new TargetHealthRegistry(() => 0, 2)
    const first = registry.get('a')
    expect(registry.get('a')).toBe(first)
    registry.get('b')
    registry.get('c')
    expect(registry.size).toBe(2)
    expect(registry.get('a')).not.toBe(first)
  })
})
