import { describe, expect, it } from 'vitest'
import { hashTag, TickBatch } from './tick-batch.ts'

describe('TickBatch', () => {
  it('hands over the calls of one turn of the event loop together, one group per hash tag, at most maxPerGroup each', async () => {
    const batches: string[][] = []
    const batch = new TickBatch<{ slotKey: string; name: string }>((calls) => batches.push(calls.map((call) => call.name)), 2)
    batch.add({ slotKey: 'gh:{org-a}:r:1', name: 'a1' })
    batch.add({ slotKey: 'gh:{org-b}:r:1', name: 'b1' })
    batch.add({ slotKey: 'gh:{org-a}:b:2', name: 'a2' })
    batch.add({ slotKey: 'gh:{org-a}:r:3', name: 'a3' })
    // Calls made after the first, later in the same turn (microtasks, next ticks), join its batch.
    await Promise.resolve()
    await new Promise((resolve) => process.nextTick(resolve))
    batch.add({ slotKey: 'gh:{org-b}:r:2', name: 'b2' })
    expect(batches).toEqual([])
    await new Promise((resolve) => setImmediate(resolve))
    expect(batches.sort()).toEqual([['a1', 'a2'], ['a3'], ['b1', 'b2']])
    batch.add({ slotKey: 'gh:{org-a}:r:1', name: 'later' })
    await new Promise((resolve) => setImmediate(resolve))
    expect(batches.at(-1)).toEqual(['later'])
  })

  it('reads the hash tag as Redis Cluster does', () => {
    expect(hashTag('gh:{org}:r:x')).toBe('org')
    expect(hashTag('gh:{}:r:x')).toBe('gh:{}:r:x')
    expect(hashTag('plain')).toBe('plain')
  })
})
