/**
 * A usage shipper for end-to-end tests that keeps what it ships, each record parsed by the record
 * contract (so it passed serialisation and redaction as a control plane would get it), and waits
 * for a test's records.
 */
import { UsageShipper } from '@gatehouse/gateway'
import { usageRecord, type UsageRecord } from '@gatehouse/gateway/snapshot'
import { pollUntil } from './processes.ts'

export class ShippedRecords {
  readonly stored: UsageRecord[] = []
  readonly shipper = new UsageShipper({
    transport: async (batch) => {
      for (const line of batch.lines()) this.stored.push(usageRecord.parse(JSON.parse(line)))
    },
  })

  /** Forgets what earlier tests shipped. */
  async clear(): Promise<void> {
    await this.shipper.flush()
    this.stored.length = 0
  }

  /** The records shipped since the last `clear`, once `count` of them arrived and nothing more within 50 ms. */
  async wait(count = 1): Promise<UsageRecord[]> {
    await pollUntil(async () => {
      await this.shipper.flush()
      return this.stored.length >= count
    }, 5000)
    await new Promise((resolve) => setTimeout(resolve, 50))
    await this.shipper.flush()
    return [...this.stored]
  }
}
