/**
 * Collects the calls made during one turn of the event loop and hands them over together, in
 * groups that may share one Redis script call: the same hash slot (counter keys carry their
 * organisation's hash tag, so a Cluster needs one group per tag) and at most `maxPerGroup` calls,
 * so one script never holds Redis for long.
 *
 * The batch runs in the loop's check phase (`setImmediate`), right after the poll phase: every
 * request whose bytes arrived in this turn has reached the limiter by then, each from its own
 * socket callback. (Flushing at the end of the tick, `process.nextTick`, sent one script call per
 * request under HTTP load: each request arrives in a callback of its own. Measured over 50
 * connections: batches of 1 with nextTick, a median of about 12 with setImmediate.) One script
 * call for all of them costs one command's client work, timer, write and Redis dispatch instead
 * of one each. A call made alone waits only for the rest of the turn's I/O callbacks.
 */

/** The `{…}` hash tag of a key (the whole key when it has none), as Redis Cluster picks slots. */
export function hashTag(key: string): string {
  const open = key.indexOf('{')
  if (open === -1) return key
  const close = key.indexOf('}', open + 1)
  return close > open + 1 ? key.slice(open + 1, close) : key
}

export class TickBatch<Call extends { readonly slotKey: string }> {
  readonly #run: (calls: Call[]) => void
  readonly #maxPerGroup: number
  #pending: Call[] = []

  constructor(run: (calls: Call[]) => void, maxPerGroup = 64) {
    this.#run = run
    this.#maxPerGroup = maxPerGroup
  }

  add(call: Call): void {
    if (this.#pending.length === 0) setImmediate(() => this.#flush())
    this.#pending.push(call)
  }

  #flush(): void {
    const calls = this.#pending
    this.#pending = []
    const groups = new Map<string, Call[]>()
    for (const call of calls) {
      const tag = hashTag(call.slotKey)
      let group = groups.get(tag)
      if (group === undefined || group.length === this.#maxPerGroup) {
        if (group !== undefined) this.#run(group)
        group = []
        groups.set(tag, group)
      }
      group.push(call)
    }
    for (const group of groups.values()) this.#run(group)
  }
}
