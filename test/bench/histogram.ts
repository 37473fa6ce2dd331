/**
 * Latency recording for the load generator: samples in whole microseconds in a preallocated
 * Uint32Array (no allocation per request, so the recorder does not disturb what it measures), and
 * exact nearest-rank percentiles over the sorted samples once the run is over.
 */

export interface LatencySummary {
  count: number
  /** Samples that did not fit the preallocated capacity (counted, not recorded). */
  dropped: number
  minUs: number
  meanUs: number
  p50Us: number
  p90Us: number
  p99Us: number
  p999Us: number
  maxUs: number
}

/** 2^32 − 1 µs is 71 minutes: anything longer is clamped rather than wrapped. */
const MAX_SAMPLE_US = 0xffff_ffff

export class LatencyRecorder {
  readonly #samples: Uint32Array
  #count = 0
  #dropped = 0

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new Error(`capacity must be a positive integer, got ${capacity}`)
    this.#samples = new Uint32Array(capacity)
  }

  get count(): number {
    return this.#count
  }

  /** Records a duration given in microseconds (rounded, clamped at 0). */
  recordUs(durationUs: number): void {
    if (this.#count >= this.#samples.length) {
      this.#dropped++
      return
    }
    this.#samples[this.#count++] = Math.min(MAX_SAMPLE_US, Math.max(0, Math.round(durationUs)))
  }

  /** Records the time between two `process.hrtime.bigint()` readings. */
  recordSince(startNs: bigint, endNs: bigint): void {
    this.recordUs(Number(endNs - startNs) / 1000)
  }

  /** Sorted copy of the recorded samples; the recorder keeps recording afterwards. */
  sorted(): Uint32Array {
    return this.#samples.slice(0, this.#count).sort()
  }

  summary(): LatencySummary {
    return summarize(this.sorted(), this.#dropped)
  }
}

/**
 * Nearest-rank percentile: the smallest sample such that at least `percent` % of all samples are
 * less than or equal to it (rank ⌈p/100 · n⌉). Exact, no interpolation, so p100 is the maximum and
 * a percentile is always a value that was actually observed. NaN for no samples.
 */
export function percentile(sortedUs: ArrayLike<number>, percent: number): number {
  if (percent < 0 || percent > 100 || Number.isNaN(percent)) throw new Error(`percent must be within [0, 100], got ${percent}`)
  const n = sortedUs.length
  if (n === 0) return Number.NaN
  const rank = Math.max(1, Math.ceil((percent / 100) * n))
  return sortedUs[rank - 1]!
}

export function summarize(sortedUs: ArrayLike<number>, dropped = 0): LatencySummary {
  const n = sortedUs.length
  let total = 0
  for (let i = 0; i < n; i++) total += sortedUs[i]!
  return {
    count: n,
    dropped,
    minUs: n === 0 ? Number.NaN : sortedUs[0]!,
    meanUs: n === 0 ? Number.NaN : total / n,
    p50Us: percentile(sortedUs, 50),
    p90Us: percentile(sortedUs, 90),
    p99Us: percentile(sortedUs, 99),
    p999Us: percentile(sortedUs, 99.9),
    maxUs: n === 0 ? Number.NaN : sortedUs[n - 1]!,
  }
}
