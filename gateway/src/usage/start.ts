/**
 * Starts usage shipping for one gateway process: the shipper, with an on-disk spool when a
 * directory is given, draining what an earlier run left there. `close` ships (or spools) the rest.
 */
import { UsageShipper, type UsageTransport } from './shipper.ts'
import { UsageSpool } from './spool.ts'

export const DEFAULT_SPOOL_MAX_BYTES = 256 * 1024 * 1024

export interface UsageShippingOptions {
  transport: UsageTransport
  spoolDir?: string | null
  spoolMaxBytes?: number
  flushIntervalMs?: number
  onError?: (error: unknown, context: string) => void
}

export function startUsageShipping(options: UsageShippingOptions): UsageShipper {
  const spool = options.spoolDir ? new UsageSpool(options.spoolDir, options.spoolMaxBytes ?? DEFAULT_SPOOL_MAX_BYTES) : null
  const shipper = new UsageShipper({
    transport: options.transport,
    spool,
    ...(options.flushIntervalMs === undefined ? {} : { flushIntervalMs: options.flushIntervalMs }),
    ...(options.onError ? { onError: options.onError } : {}),
  })
  shipper.start()
  return shipper
}
