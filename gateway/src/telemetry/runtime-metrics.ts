/**
 * What this gateway runs with, read at scrape time: the snapshot (generation, age, how long it took
 * to arrive, rejections) and the upstream targets' health (circuit-breaker states, requests in
 * flight and retrying per provider: the saturation side of RED).
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import type { BreakerState } from '../routing/circuit-breaker.ts'
import type { RuntimeHolder } from '../runtime/holder.ts'
import { OTHER } from './labels.ts'

const BREAKER_STATES: readonly BreakerState[] = ['closed', 'open', 'half-open']

function producedAtMs(holder: RuntimeHolder): number | null {
  const producedAt = holder.current?.snapshot.producedAt
  if (producedAt === undefined) return null
  const ms = Date.parse(producedAt)
  return Number.isNaN(ms) ? null : ms
}

/** Health keys are a provider id, or `id origin` for a custom host: metrics name the provider's slug. */
function providerSlugOf(holder: RuntimeHolder, healthKey: string): string {
  const space = healthKey.indexOf(' ')
  const id = space === -1 ? healthKey : healthKey.slice(0, space)
  return holder.current?.providers.byId(id)?.record.slug ?? OTHER
}

export function registerSnapshotMetrics(registry: Registry, holder: RuntimeHolder): void {
  const rejected = new Counter({
    name: 'gatehouse_snapshot_rejections_total',
    help: 'Snapshots this gateway refused (validation or compile problems); it kept the previous one.',
    registers: [registry],
  })
  holder.onRejected(() => rejected.inc())
  new Gauge({
    name: 'gatehouse_snapshot_generation',
    help: 'Generation of the snapshot this gateway serves (-1 before the first one).',
    registers: [registry],
    collect() {
      this.set(holder.current?.generation ?? -1)
    },
  })
  new Gauge({
    name: 'gatehouse_snapshot_age_seconds',
    help: 'Seconds since the control plane produced the snapshot this gateway serves (absent before the first one).',
    registers: [registry],
    collect() {
      this.reset()
      const produced = producedAtMs(holder)
      if (produced !== null) this.set(Math.max(0, Date.now() - produced) / 1000)
    },
  })
  new Gauge({
    name: 'gatehouse_snapshot_sync_lag_seconds',
    help: 'Sync lag of the snapshot this gateway serves: seconds from the control plane producing it to this gateway applying it.',
    registers: [registry],
    collect() {
      this.reset()
      const produced = producedAtMs(holder)
      const applied = holder.appliedAtMs
      if (produced !== null && applied !== null) this.set(Math.max(0, applied - produced) / 1000)
    },
  })
  new Gauge({
    name: 'gatehouse_snapshot_last_applied_timestamp_seconds',
    help: 'Unix time this gateway applied the snapshot it serves.',
    registers: [registry],
    collect() {
      this.reset()
      if (holder.appliedAtMs !== null) this.set(holder.appliedAtMs / 1000)
    },
  })
}

export function registerUpstreamHealthMetrics(registry: Registry, holder: RuntimeHolder): void {
  const health = holder.targetHealth
  new Gauge({
    name: 'gatehouse_upstream_circuit_breakers',
    help: 'Upstream targets (a provider, or a provider at a custom host) per circuit-breaker state (closed, open, half-open), by provider. Direct routes never open a breaker; a target they share with a config reads that config breaker state.',
    labelNames: ['provider', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset()
      const now = health.now()
      const counts = new Map<string, Record<BreakerState, number>>()
      for (const [key, target] of health.entries()) {
        const provider = providerSlugOf(holder, key)
        const states = counts.get(provider) ?? { closed: 0, open: 0, 'half-open': 0 }
        states[target.breaker.state(now)]++
        counts.set(provider, states)
      }
      for (const [provider, states] of counts) for (const state of BREAKER_STATES) this.set({ provider, state }, states[state])
    },
  })
  const inFlight = (name: string, help: string, read: (active: number, retrying: number) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['provider'] as const,
      registers: [registry],
      collect() {
        this.reset()
        const sums = new Map<string, number>()
        for (const [key, target] of health.entries()) {
          const provider = providerSlugOf(holder, key)
          sums.set(provider, (sums.get(provider) ?? 0) + read(target.retryBudget.active, target.retryBudget.retrying))
        }
        for (const [provider, value] of sums) this.set({ provider }, value)
      },
    })
  }
  inFlight('gatehouse_upstream_active_requests', 'Requests using an upstream target right now (direct routes and configs), by provider.', (active) => active)
  inFlight('gatehouse_upstream_retrying_requests', 'Requests waiting to retry or retrying at an upstream target right now (bounded by the retry budget), by provider.', (_active, retrying) => retrying)
}
