import { describe, expect, it } from 'vitest'
import { FakeKubeClient } from './fake-client.ts'
import { KubeApiError } from './client.ts'
import { LeaderElector, microTime } from './leader-election.ts'

const NAMESPACE = 'gatehouse-system'
const LEASE = 'gatehouse-operator'

function candidate(client: FakeKubeClient, identity: string, clock: { ms: number }) {
  const log: string[] = []
  const elector = new LeaderElector({
    client,
    namespace: NAMESPACE,
    leaseName: LEASE,
    identity,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    now: () => clock.ms,
    onStartedLeading: () => log.push('started'),
    onStoppedLeading: () => log.push('stopped'),
  })
  return { elector, log }
}

describe('LeaderElector', () => {
  it('formats MicroTime with six fractional digits', () => {
    expect(microTime(Date.parse('2026-11-22T08:00:00.123Z'))).toBe('2026-11-22T08:00:00.123000Z')
  })

  it('creates the lease when there is none and renews it afterwards', async () => {
    const client = new FakeKubeClient()
    const clock = { ms: Date.parse('2026-11-22T08:00:00Z') }
    const a = candidate(client, 'a', clock)
    await a.elector.tryAcquireOrRenew()
    expect(a.elector.isLeader).toBe(true)
    expect(a.log).toEqual(['started'])
    let lease = (await client.getLease(NAMESPACE, LEASE))!
    expect(lease.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 })

    clock.ms += 2_000
    await a.elector.tryAcquireOrRenew()
    lease = (await client.getLease(NAMESPACE, LEASE))!
    expect(lease.spec.renewTime).toBe(microTime(clock.ms))
    expect(lease.spec.acquireTime).toBe(microTime(clock.ms - 2_000))
    expect(a.log).toEqual(['started'])
  })

  it('leaves a held, unexpired lease alone and takes it over after expiry', async () => {
    const client = new FakeKubeClient()
    const clock = { ms: Date.parse('2026-11-22T08:00:00Z') }
    const a = candidate(client, 'a', clock)
    const b = candidate(client, 'b', clock)
    await a.elector.tryAcquireOrRenew()
    await b.elector.tryAcquireOrRenew()
    expect(b.elector.isLeader).toBe(false)

    // a stops renewing (crashed); b waits out the lease duration.
    clock.ms += 14_000
    await b.elector.tryAcquireOrRenew()
    expect(b.elector.isLeader).toBe(false)
    clock.ms += 1_000
    await b.elector.tryAcquireOrRenew()
    expect(b.elector.isLeader).toBe(true)
    const lease = (await client.getLease(NAMESPACE, LEASE))!
    expect(lease.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 })
  })

  it('only one of two candidates racing for a free lease wins', async () => {
    const client = new FakeKubeClient()
    const clock = { ms: Date.parse('2026-11-22T08:00:00Z') }
    const a = candidate(client, 'a', clock)
    const b = candidate(client, 'b', clock)
    await a.elector.tryAcquireOrRenew()
    clock.ms += 20_000
    await Promise.all([a.elector.tryAcquireOrRenew(), b.elector.tryAcquireOrRenew()])
    expect([a.elector.isLeader, b.elector.isLeader].filter(Boolean)).toHaveLength(1)
  })

  it('steps down when it cannot renew within the deadline, before the lease can expire', async () => {
    const client = new FakeKubeClient()
    const clock = { ms: Date.parse('2026-11-22T08:00:00Z') }
    const a = candidate(client, 'a', clock)
    await a.elector.tryAcquireOrRenew()
    client.failWith = new KubeApiError(503, 'ServiceUnavailable', 'api server down')
    clock.ms += 8_000
    await a.elector.tryAcquireOrRenew()
    expect(a.elector.isLeader).toBe(true)
    clock.ms += 2_000
    await a.elector.tryAcquireOrRenew()
    expect(a.elector.isLeader).toBe(false)
    expect(a.log).toEqual(['started', 'stopped'])
  })

  it('releases the lease on stop so a successor takes over without waiting for expiry', async () => {
    const client = new FakeKubeClient()
    const clock = { ms: Date.parse('2026-11-22T08:00:00Z') }
    const a = candidate(client, 'a', clock)
    const b = candidate(client, 'b', clock)
    a.elector.start()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(a.elector.isLeader).toBe(true)
    await a.elector.stop()
    expect(a.log).toEqual(['started', 'stopped'])
    expect((await client.getLease(NAMESPACE, LEASE))!.spec.holderIdentity).toBeNull()
    clock.ms += 100
    await b.elector.tryAcquireOrRenew()
    expect(b.elector.isLeader).toBe(true)
  })
})
