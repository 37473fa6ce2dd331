/** Usage records on their way out of the gateway: the sink port, its shipper, spool and transport. */
export { wireLine, type UsageDraft, type UsageSink } from './draft.ts'
export { RecordBatch, type UsageBatch } from './record-batch.ts'
export { UsageShipper, type UsageShipperOptions, type UsageShipperStats, type UsageTransport } from './shipper.ts'
export { UsageSpool } from './spool.ts'
export { httpUsageTransport } from './http-transport.ts'
export { registerUsageMetrics } from './metrics.ts'
export { startUsageShipping, DEFAULT_SPOOL_MAX_BYTES, type UsageShippingOptions } from './start.ts'
