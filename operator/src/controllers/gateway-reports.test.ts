import { describe, expect, it } from 'vitest'
import { isEnforced } from '@gatehouse/gateway/snapshot'
import { GatewayRegistry } from '../distribution/gateway-registry.ts'
import { SnapshotPublisher } from '../distribution/publisher.ts'
import { FakeKubeClient } from '../kube/fake-client.ts'
import { LEASES, type KubeObject } from '../kube/client.ts'
import { microTime } from '../kube/leader-election.ts'
import type { GatewaySnapshot } from '@gatehouse/gateway/snapshot'
import { GatewayReporter, REPORT_ANNOTATION, REPORT_LABEL, abandonedReports, remoteGateways, reportLeaseName } from './gateway-reports.ts'
import { ProgrammedTracker } from './programmed.ts'

const NS = 'gatehouse-system'

function report(identity: string, gateways: unknown, renewedMs: number, ttlSeconds = 15, labelled = true): KubeObject {
  return {
    metadata: {
      name: reportLeaseName(identity),
      namespace: NS,
      ...(labelled ? { labels: { [REPORT_LABEL]: 'true' } } : {}),
      annotations: { [REPORT_ANNOTATION]: typeof gateways === 'string' ? gateways : JSON.stringify(gateways) },
    },
    spec: { holderIdentity: identity, renewTime: microTime(renewedMs), leaseDurationSeconds: ttlSeconds },
  }
}

describe('gateway reports', () => {
  it('a replica publishes its connected gateways in its own labelled Lease and removes it on stop', async () => {
    const client = new FakeKubeClient()
    const registry = new GatewayRegistry()
    registry.connected('gw-1', true)
    registry.ack('gw-1', 42)
    registry.connected('gw-gone', true)
    registry.connected('gw-gone', false)
    const reporter = new GatewayReporter({ client, registry, namespace: NS, identity: 'Operator_A', reportTtlMs: 15_000 })
    await reporter.write()
    const lease = client.peek(LEASES, NS, 'gatehouse-gateways-operator-a')!
    expect(lease.metadata.labels).toEqual({ [REPORT_LABEL]: 'true' })
    expect(JSON.parse(lease.metadata.annotations![REPORT_ANNOTATION]!)).toEqual([{ gatewayId: 'gw-1', appliedGeneration: 42, lastNack: null }])
    registry.ack('gw-1', 43)
    await reporter.write()
    expect(JSON.parse(client.peek(LEASES, NS, 'gatehouse-gateways-operator-a')!.metadata.annotations![REPORT_ANNOTATION]!)[0].appliedGeneration).toBe(43)
    await reporter.stop()
    expect(client.peek(LEASES, NS, 'gatehouse-gateways-operator-a')).toBeUndefined()
  })

  it('reads only fresh, labelled reports of other replicas and skips unreadable ones', () => {
    const now = Date.parse('2026-11-22T08:00:00Z')
    const gateway = { gatewayId: 'gw-b', appliedGeneration: 7, lastNack: null }
    const leases = [
      report('b', [gateway], now - 1_000),
      report('self', [{ ...gateway, gatewayId: 'gw-self' }], now),
      report('stale', [{ ...gateway, gatewayId: 'gw-stale' }], now - 20_000),
      report('unlabelled', [{ ...gateway, gatewayId: 'gw-x' }], now, 15, false),
      report('garbled', '{not json', now),
    ]
    expect(remoteGateways(leases, 'self', now)).toEqual([gateway])
  })

  it('names reports long past expiry for deletion, and only reports', () => {
    const now = Date.parse('2026-11-22T08:00:00Z')
    const leases = [
      report('fresh', [], now),
      report('recently-expired', [], now - 60_000),
      report('long-gone', [], now - 3_600_000),
      report('not-a-report', [], now - 3_600_000, 15, false),
    ]
    expect(abandonedReports(leases, now, 10 * 60_000)).toEqual([reportLeaseName('long-gone')])
  })

  it('Programmed counts remote gateways against the clock at the write, local ones against the local generation', async () => {
    let generation = 1_000
    const publisher = new SnapshotPublisher(async (next) => ({ generation: (generation = Math.max(next, generation + 1)) }) as unknown as GatewaySnapshot, { now: () => 0 })
    const registry = new GatewayRegistry()
    let remote: Array<{ gatewayId: string; appliedGeneration: number | null; lastNack: null }> = []
    const tracker = new ProgrammedTracker(publisher, registry, () => remote)
    const mark = tracker.beforeWrite()
    await tracker.written('uid-1', mark)
    const localGeneration = publisher.latest!.generation
    registry.connected('gw-a', true)
    registry.ack('gw-a', localGeneration)
    expect(tracker.observe('uid-1')).toMatchObject({ programmed: true, gateways: 1 })

    // A gateway on another replica still runs a snapshot compiled before the write.
    remote = [{ gatewayId: 'gw-b', appliedGeneration: mark.atMs - 1, lastNack: null }]
    expect(tracker.observe('uid-1')).toMatchObject({ programmed: false, reason: 'Pending' })
    expect(tracker.waiting()).toEqual(['uid-1'])
    remote = [{ gatewayId: 'gw-b', appliedGeneration: mark.atMs, lastNack: null }]
    expect(tracker.observe('uid-1')).toMatchObject({ programmed: true, gateways: 2 })
    expect(tracker.waiting()).toEqual([])
  })
  it('a policy kind the gateway does not enforce is never Programmed and waits for no gateway', async () => {
    const publisher = new SnapshotPublisher(async (next) => ({ generation: next }) as unknown as GatewaySnapshot, { now: () => 0 })
    const registry = new GatewayRegistry()
    // A gateway release that enforced no RateLimitPolicy (every kind is enforced today).
    const tracker = new ProgrammedTracker(publisher, registry, () => [], (kind) => kind !== 'RateLimitPolicy')
    await tracker.written('uid-rl', tracker.beforeWrite())
    registry.connected('gw-a', true)
    registry.ack('gw-a', publisher.latest!.generation)
    expect(tracker.observe('uid-rl', 'RateLimitPolicy')).toEqual({ programmed: false, reason: 'NotEnforced', message: expect.stringContaining('does not enforce RateLimitPolicy') })
    expect(tracker.waiting()).toEqual([])
    // Kinds that are not policies, and enforced kinds, follow the gateways.
    expect(tracker.observe('uid-rl', 'Provider')).toMatchObject({ programmed: true })
    for (const kind of ['Guardrail', 'UsageLimitPolicy']) expect(tracker.observe('uid-rl', kind)).toMatchObject({ programmed: true })
    // With the gateway's own list, every policy kind is enforced now.
    for (const kind of ['Guardrail', 'RateLimitPolicy', 'UsageLimitPolicy']) expect(isEnforced(kind)).toBe(true)
  })
})
