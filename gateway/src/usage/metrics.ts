/** Prometheus view of usage delivery: what is queued, shipped, spooled and shed. */
import { Gauge, type Registry } from 'prom-client'
import type { UsageShipper } from './shipper.ts'

export function registerUsageMetrics(registry: Registry, shipper: UsageShipper): void {
  const gauge = (name: string, help: string, read: (stats: ReturnType<UsageShipper['stats']>) => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(shipper.stats()))
      },
    })
  }
  gauge('gatehouse_usage_records_queued', 'Usage records waiting in memory to be shipped.', (s) => s.queued)
  gauge('gatehouse_usage_records_shipped', 'Usage records the control plane accepted since start.', (s) => s.shipped)
  gauge('gatehouse_usage_records_spooled', 'Usage records put aside (spool or memory) because the control plane did not take them.', (s) => s.spooled)
  gauge('gatehouse_usage_bodies_dropped', 'Usage records whose request and response bodies were shed to keep the spool bounded (counts kept).', (s) => s.bodiesDropped)
  gauge('gatehouse_usage_records_dropped', 'Usage records lost outright (only without a spool, past the memory bound).', (s) => s.recordsDropped)
  gauge('gatehouse_usage_spool_bytes', 'Bytes in the on-disk usage spool.', (s) => s.spoolBytes)
}
