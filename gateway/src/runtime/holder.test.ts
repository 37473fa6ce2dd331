import { afterEach, describe, expect, it } from 'vitest'
import { SNAPSHOT_SCHEMA_VERSION, type GatewaySnapshotInput } from '../snapshot/schema.ts'
import { RuntimeHolder } from './holder.ts'

function snapshot(generation: number, baseUrl = 'http://127.0.0.1:9/v1', kind = 'openai'): GatewaySnapshotInput {
  return {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    generation,
    producedAt: new Date(0).toISOString(),
    producedBy: { component: 'test', version: '0' },
    organizationId: 'org',
    workspaces: [{ id: 'ws', slug: 'ws', name: 'WS', status: 'active' }],
    apiKeys: [],
    providers: [{ id: 'p1', slug: 'sim', name: 'sim', kind, baseUrl, credentials: { apiKey: 'sk' }, options: {}, models: [], workspaceId: 'ws' }],
  }
}

const holders: RuntimeHolder[] = []
function holder(): RuntimeHolder {
  const created = new RuntimeHolder()
  holders.push(created)
  return created
}
afterEach(async () => {
  await Promise.all(holders.splice(0).map((entry) => entry.close()))
})

describe('RuntimeHolder', () => {
  it('swaps to a valid snapshot and tells its listeners', () => {
    const runtime = holder()
    const applied: number[] = []
    runtime.onApplied((config) => applied.push(config.generation))
    expect(runtime.ready).toBe(false)
    expect(runtime.apply(snapshot(1))).toMatchObject({ ok: true, generation: 1, unchanged: false })
    expect(runtime.current?.generation).toBe(1)
    expect(runtime.ready).toBe(true)
    expect(applied).toEqual([1])
  })

  it('keeps the previous runtime when a snapshot fails validation or compilation, naming the problem', () => {
    const runtime = holder()
    const rejected: string[] = []
    runtime.onRejected((problems) => rejected.push(...problems.map((problem) => problem.path)))
    runtime.apply(snapshot(1))
    const before = runtime.current
    const invalid = runtime.apply({ ...snapshot(2), workspaces: 'none' })
    expect(invalid).toMatchObject({ ok: false, generation: 2 })
    const unknownKind = runtime.apply(snapshot(3, 'http://127.0.0.1:9/v1', 'from-the-future'))
    expect(unknownKind.ok).toBe(false)
    expect(JSON.stringify(unknownKind)).toContain('from-the-future')
    expect(runtime.current).toBe(before)
    expect(rejected).toContain('workspaces')
  })

  it('reports the same content at the same generation as unchanged, and does not swap', () => {
    const runtime = holder()
    runtime.apply(snapshot(5))
    const before = runtime.current
    expect(runtime.apply(snapshot(5))).toMatchObject({ ok: true, unchanged: true })
    expect(runtime.current).toBe(before)
    expect(runtime.apply(snapshot(6))).toMatchObject({ ok: true, unchanged: false })
    expect(runtime.current).not.toBe(before)
  })

  it('keeps the connection pool of an unchanged origin across swaps, and drops one no longer used', () => {
    const runtime = holder()
    runtime.apply(snapshot(1))
    const [pool] = [...runtime.current!.dispatchers]
    runtime.apply(snapshot(2))
    expect([...runtime.current!.dispatchers]).toEqual([pool])
    runtime.apply(snapshot(3, 'http://127.0.0.2:9/v1'))
    expect([...runtime.current!.dispatchers]).not.toContain(pool)
    expect((pool as unknown as { closed: boolean }).closed).toBe(true)
  })

  it('keeps circuit-breaker state across swaps: it lives with the holder', () => {
    const runtime = holder()
    const health = runtime.targetHealth
    runtime.apply(snapshot(1))
    runtime.apply(snapshot(2))
    expect(runtime.targetHealth).toBe(health)
  })
})
