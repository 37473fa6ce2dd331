/**
 * Prometheus view of usage delivery: what is queued, shipped, spooled and shed. Running totals are
 * counters (`_total`, read from the shipper at scrape time); what can go down is a gauge.
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import type { UsageShipper } from './shipper.ts'

type Stats = ReturnType<UsageShipper['stats']>

export function registerUsageMetrics(registry: Registry, shipper: UsageShipper): void {
  const gauge = (name: string, help: string, read: (stats: Stats) => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(shipper.stats()))
      },
    })
  }
  // The shipper keeps the totals; a scrape copies them (a counter only ever goes up, and so do they).
  const total = (name: string, help: string, read: (stats: Stats) => number): void => {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset()
        this.inc(read(shipper.stats()))
      },
    })
  }
  gauge('gatehouse_usage_records_queued', 'Usage records waiting in memory to be shipped.', (s) => s.queued)
  total('gatehouse_usage_records_shipped_total', 'Usage records the control plane accepted since start.', (s) => s.shipped)
  total('gatehouse_usage_records_spooled_total', 'Usage records put aside (spool or memory) because the control plane did not take them, since start.', (s) => s.spooled)
  total('gatehouse_usage_bodies_dropped_total', 'Usage records whose request and response bodies were shed to keep the spool bounded (counts kept), since start.', (s) => s.bodiesDropped)
  total('gatehouse_usage_records_dropped_total', 'Usage records lost outright (only without a spool, past the memory bound), since start.', (s) => s.recordsDropped)
  gauge('gatehouse_usage_spool_bytes', 'Bytes in the on-disk usage spool.', (s) => s.spoolBytes)
  gauge('gatehouse_usage_spool_segments', 'Files in the on-disk usage spool (its depth).', (s) => s.spoolSegments)
  gauge('gatehouse_usage_spool_max_bytes', 'Bound of the on-disk usage spool (0: no spool).', (s) => s.spoolMaxBytes)
  gauge('gatehouse_usage_spool_over_bound', '1 while the spool is over its bound (bodies are being shed), else 0.', (s) => (s.spoolOverBound ? 1 : 0))
}
