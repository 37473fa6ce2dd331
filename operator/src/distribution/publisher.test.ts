import { describe, expect, it } from 'vitest'
import type { GatewaySnapshot } from '@gatehouse/gateway/snapshot'
import { SnapshotPublisher } from './publisher.ts'

/** A compiler whose runs are released by hand, to hold one compile while changes arrive. */
function gatedCompiler(): { compile: (generation: number) => Promise<GatewaySnapshot>; runs: number[]; release: () => void } {
  const runs: number[] = []
  let gate = Promise.withResolvers<void>()
  return {
    runs,
    release: () => {
      gate.resolve()
      gate = Promise.withResolvers<void>()
    },
    async compile(generation) {
      runs.push(generation)
      await gate.promise
      return { generation } as GatewaySnapshot
    },
  }
}

describe('SnapshotPublisher', () => {
  it('folds changes that arrive during a compile into one more compile, not a queue', async () => {
    const compiler = gatedCompiler()
    const publisher = new SnapshotPublisher(compiler.compile, { now: () => 0 })
    const seen: number[] = []
    publisher.subscribe((snapshot) => seen.push(snapshot.generation))
    const first = publisher.publish()
    for (let change = 0; change < 10; change++) publisher.schedule()
    compiler.release()
    await new Promise((resolve) => setImmediate(resolve))
    compiler.release()
    await first
    await new Promise((resolve) => setImmediate(resolve))
    expect(compiler.runs).toEqual([1, 2])
    expect(seen).toEqual([1, 2])
    expect(publisher.latest?.generation).toBe(2)
  })

  it('never gives a generation below the clock, so a restarted control plane still counts up', async () => {
    let nowMs = 1_000
    const publisher = new SnapshotPublisher(async (generation) => ({ generation }) as GatewaySnapshot, { now: () => nowMs, initialGeneration: 5 })
    expect((await publisher.publish())?.generation).toBe(1_000)
    expect((await publisher.publish())?.generation).toBe(1_001)
    nowMs = 5_000
    expect((await publisher.publish())?.generation).toBe(5_000)
  })

  it('gives a new subscriber the latest at once, and stops after unsubscribe', async () => {
    const publisher = new SnapshotPublisher(async (generation) => ({ generation }) as GatewaySnapshot, { now: () => 0 })
    await publisher.publish()
    const seen: number[] = []
    const unsubscribe = publisher.subscribe((snapshot) => seen.push(snapshot.generation))
    expect(seen).toEqual([1])
    unsubscribe()
    await publisher.publish()
    expect(seen).toEqual([1])
  })

  it('keeps the last good snapshot when a compile fails, and reports the error', async () => {
    let fail = false
    const errors: unknown[] = []
    const publisher = new SnapshotPublisher(
      async (generation) => {
        if (fail) throw new Error('store down')
        return { generation } as GatewaySnapshot
      },
      { now: () => 0, onError: (error) => errors.push(error) },
    )
    await publisher.publish()
    fail = true
    expect((await publisher.publish())?.generation).toBe(1)
    expect(errors).toHaveLength(1)
    fail = false
    expect((await publisher.publish())?.generation).toBe(2)
  })
})
