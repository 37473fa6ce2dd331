/**
 * Latency histograms of the usage rollups: log-scale bins, each 10 % wider than the one before, so
 * a percentile read from a histogram is within 5 % of the true value (the bin's geometric middle is
 * at most ~4.9 % from any value inside it). Bin 0 holds latencies below 1 ms; the last bin holds
 * everything from about 14 minutes on.
 */

export const HISTOGRAM_BINS = 150
const RATIO = 1.1
const LOG_RATIO = Math.log(RATIO)
/** The stated relative error of percentiles read from rollups. */
export const PERCENTILE_RELATIVE_ERROR = 0.05

export function binOf(latencyMs: number): number {
  if (!(latencyMs >= 1)) return 0
  return Math.min(HISTOGRAM_BINS - 1, 1 + Math.floor(Math.log(latencyMs) / LOG_RATIO))
}

/** The value a bin stands for: the geometric middle of its bounds (0.5 ms for bin 0). */
export function binValue(bin: number): number {
  if (bin <= 0) return 0.5
  return Math.pow(RATIO, bin - 0.5)
}

export function emptyHistogram(): number[] {
  return new Array<number>(HISTOGRAM_BINS).fill(0)
}

/** The q-quantile (0..1) of a histogram, nearest-rank; null when empty. */
export function quantile(histogram: readonly number[], q: number): number | null {
  let total = 0
  for (const count of histogram) total += count
  if (total === 0) return null
  const rank = Math.max(1, Math.ceil(q * total))
  let seen = 0
  for (let bin = 0; bin < histogram.length; bin++) {
    seen += histogram[bin]!
    if (seen >= rank) return binValue(bin)
  }
  return binValue(histogram.length - 1)
}
