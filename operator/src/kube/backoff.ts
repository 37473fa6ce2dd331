/**
 * Capped exponential backoff with jitter, shared by the informer (watch restarts), the work queue
 * (per-key retries) and leader election. Jitter spreads replicas that failed together (an API server
 * restart) so they do not retry in lockstep.
 */
export interface BackoffOptions {
  initialMs: number
  maxMs: number
  /** 0..1: the delay is drawn from [delay * (1 - jitter), delay]. */
  jitter?: number
  random?: () => number
}

/** Delay before retry number `attempt` (0-based): initial * 2^attempt, capped, minus up to `jitter` of it. */
export function backoffDelayMs(attempt: number, options: BackoffOptions): number {
  const exponential = options.initialMs * 2 ** Math.min(attempt, 52)
  const capped = Math.min(options.maxMs, exponential)
  const jitter = options.jitter ?? 0
  if (jitter <= 0) return capped
  const random = options.random ?? Math.random
  return Math.round(capped * (1 - jitter * random()))
}
