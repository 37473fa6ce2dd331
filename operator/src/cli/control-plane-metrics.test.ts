/**
 * The control plane's metrics against a real publisher and gateway registry, on a manual clock:
 * publishes are counted and remembered, an ACK observes the lag from that generation's publication,
 * a NACK and a reconnect are told apart from an ACK. The process-level exposition (parsed, names
 * and labels) is checked in test/k8s/operator.test.ts.
 *
 * Break tried: reading the lag from the gateway's previous generation instead of the ACKed one made
 * the 0.25 s sum fail (it read 0.65).
 */
import { describe, expect, it } from 'vitest'
import type { GatewaySnapshot } from '@gatehouse/gateway/snapshot'
import { GatewayRegistry } from '../distribution/gateway-registry.ts'
import { SnapshotPublisher } from '../distribution/publisher.ts'
import { ControlPlaneMetrics } from './control-plane-metrics.ts'

async function values(metrics: ControlPlaneMetrics, name: string): Promise<Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name)
  return (metric?.values ?? []) as Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>
}

async function histogram(metrics: ControlPlaneMetrics, name: string): Promise<{ count: number; sum: number }> {
  const all = await values(metrics, name)
  return {
    count: all.find((v) => v.metricName === `${name}_count`)?.value ?? 0,
    sum: all.find((v) => v.metricName === `${name}_sum`)?.value ?? 0,
  }
}

function setup() {
  let nowMs = 1_000_000
  const metrics = new ControlPlaneMetrics({ processMetrics: false, now: () => nowMs })
  let generation = 0
  const publisher = new SnapshotPublisher(async () => ({ generation: ++generation }) as unknown as GatewaySnapshot, { now: () => 1 })
  const gateways = new GatewayRegistry()
  const unwatch = metrics.watch(publisher, gateways)
  return { metrics, publisher, gateways, unwatch, advance: (ms: number) => { nowMs += ms } }
}

describe('control-plane metrics', () => {
  it('counts publishes, reports the generation and connected gateways, and observes the ACK lag of the ACKed generation', async () => {
    const { metrics, publisher, gateways, advance } = setup()
    expect((await values(metrics, 'gatehouse_control_plane_snapshot_generation'))[0]!.value).toBe(-1)
    await publisher.publish()
    advance(400)
    await publisher.publish()
    gateways.connected('gw-1', true)
    gateways.connected('gw-2', true)
    gateways.connected('gw-2', false)
    advance(250)
    gateways.ack('gw-1', 2)

    expect((await values(metrics, 'gatehouse_control_plane_snapshots_published_total'))[0]!.value).toBe(2)
    expect((await values(metrics, 'gatehouse_control_plane_snapshot_generation'))[0]!.value).toBe(2)
    expect((await values(metrics, 'gatehouse_control_plane_connected_gateways'))[0]!.value).toBe(1)
    expect(await histogram(metrics, 'gatehouse_control_plane_snapshot_ack_lag_seconds')).toEqual({ count: 1, sum: 0.25 })
    expect(await values(metrics, 'gatehouse_control_plane_snapshot_acks_total')).toEqual([expect.objectContaining({ labels: { status: 'ack' }, value: 1 })])
  })

  it('counts a NACK apart, never a connect or disconnect, and stops following once unwatched', async () => {
    const { metrics, publisher, gateways, unwatch } = setup()
    await publisher.publish()
    gateways.connected('gw-1', true)
    gateways.nack('gw-1', 1, [{ path: 'providers[0]', message: 'bad' }])
    gateways.connected('gw-1', false)
    gateways.connected('gw-1', true)
    expect(await values(metrics, 'gatehouse_control_plane_snapshot_acks_total')).toEqual([expect.objectContaining({ labels: { status: 'nack' }, value: 1 })])
    expect((await histogram(metrics, 'gatehouse_control_plane_snapshot_ack_lag_seconds')).count).toBe(0)

    unwatch()
    await publisher.publish()
    gateways.ack('gw-1', 2)
    expect((await values(metrics, 'gatehouse_control_plane_snapshots_published_total'))[0]!.value).toBe(1)
    expect(await values(metrics, 'gatehouse_control_plane_snapshot_acks_total')).toEqual([expect.objectContaining({ labels: { status: 'nack' }, value: 1 })])
  })

  it('records reconciles by kind and result, admin requests by route template, and leadership only when told', async () => {
    const { metrics } = setup()
    metrics.observeReconcile('Provider', 'ok', 0.02)
    metrics.observeReconcile('Provider', 'requeue', 0.01)
    metrics.observeReconcile('Config', 'error', 0.5)
    metrics.observeAdminRequest('/v1/admin/workspaces/:id', 'GET', 200, 0.003)
    expect((await values(metrics, 'gatehouse_operator_reconciles_total')).map((v) => [v.labels, v.value])).toEqual([
      [{ kind: 'Provider', result: 'ok' }, 1],
      [{ kind: 'Provider', result: 'requeue' }, 1],
      [{ kind: 'Config', result: 'error' }, 1],
    ])
    expect((await values(metrics, 'gatehouse_operator_reconcile_duration_seconds')).find((v) => v.metricName?.endsWith('_count') && v.labels.kind === 'Provider')?.value).toBe(2)
    expect((await values(metrics, 'gatehouse_admin_http_requests_total'))[0]).toMatchObject({ labels: { route: '/v1/admin/workspaces/:id', method: 'GET', status: 200 }, value: 1 })
    expect(await values(metrics, 'gatehouse_operator_leader')).toEqual([])
    let leader = false
    metrics.leadership(() => leader)
    expect((await values(metrics, 'gatehouse_operator_leader'))[0]!.value).toBe(0)
    leader = true
    expect((await values(metrics, 'gatehouse_operator_leader'))[0]!.value).toBe(1)
  })
})
