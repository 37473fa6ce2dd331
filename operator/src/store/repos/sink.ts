/** Where repositories report gateway-relevant writes; the store publishes them once committed. */
import type { StoreChange } from '../change-feed.ts'

export interface ChangeSink {
  add(change: StoreChange): void
}

/** Inside a transaction: held until commit, dropped on rollback. */
export class BufferedSink implements ChangeSink {
  readonly changes: StoreChange[] = []

  add(change: StoreChange): void {
    this.changes.push(change)
  }
}
