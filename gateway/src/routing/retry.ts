/**
 * Retries of one target: exponential backoff with jitter, or the wait a provider asked for in
 * `retry-after-ms` / `retry-after` when that is within a bound. Time is injected (a clock whose
 * `sleep` is abortable), so tests assert exact timings without sleeping, and a client that goes
 * away during a wait stops the retries at once.
 */
import { setTimeout as sleepFor } from 'node:timers/promises'
import { GatewayError } from '../core/errors.ts'

export interface Clock {
  /** Monotonic milliseconds. */
  now(): number
  /** Resolves after `ms`; rejects as soon as `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>
}

export const systemClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, signal) => sleepFor(ms, undefined, { signal }),
}

export interface RetryPolicy {
  /** Retries after the first attempt. */
  readonly attempts: number
  readonly onStatusCodes: ReadonlySet<number>
  readonly useRetryAfter: boolean
  readonly initialDelayMs: number
  readonly maxDelayMs: number
  /** A longer `retry-after` is not waited for: the request fails over or answers instead. */
  readonly maxRetryAfterMs: number
  /** Waits across all retries of one target stay within this. */
  readonly maxTotalWaitMs: number
}

export const DEFAULT_RETRY_STATUS_CODES: readonly number[] = [429, 500, 502, 503, 504]

export const noRetries: RetryPolicy = {
  attempts: 0,
  onStatusCodes: new Set(DEFAULT_RETRY_STATUS_CODES),
  useRetryAfter: true,
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 30_000,
  maxTotalWaitMs: 60_000,
}

/** What the retry loop needs to know about a failed attempt. */
export interface FailureInfo {
  /** The status the provider (or the transport mapping) gave. */
  status: number
  retryAfterMs: number | null
}

/**
 * "Equal jitter": half of the exponential step is fixed, half random. Concurrent failing requests
 * spread out (no retry storm in lockstep) while each still waits at least half the step.
 */
export function backoffDelayMs(retryNumber: number, policy: RetryPolicy, random: () => number): number {
  const step = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (retryNumber - 1))
  return Math.round(step / 2 + random() * (step / 2))
}

/** The wait before retry number `retryNumber` (1-based), or null when it must not be retried. */
export function retryDelayMs(failure: FailureInfo, retryNumber: number, policy: RetryPolicy, random: () => number): number | null {
  if (retryNumber > policy.attempts || !policy.onStatusCodes.has(failure.status)) return null
  if (policy.useRetryAfter && failure.retryAfterMs !== null) {
    return failure.retryAfterMs <= policy.maxRetryAfterMs ? Math.max(0, Math.ceil(failure.retryAfterMs)) : null
  }
  return backoffDelayMs(retryNumber, policy, random)
}

export interface RetryDeps {
  clock: Clock
  random: () => number
  signal: AbortSignal
}

export function cancelledError(): GatewayError {
  return new GatewayError('request_cancelled', 'The client closed the request')
}

/**
 * Runs `operation` until it succeeds, its failure is not retryable, or the policy is spent.
 * `classify` returns null for failures that are never retried (e.g. a cancelled request).
 * `onRetry` is told about each retry before its wait.
 */
export async function runWithRetries<T>(
  operation: (retryNumber: number) => Promise<T>,
  policy: RetryPolicy,
  deps: RetryDeps,
  classify: (error: unknown) => FailureInfo | null,
  onRetry?: (retryNumber: number, delayMs: number) => void,
): Promise<T> {
  let waitedMs = 0
  for (let retryNumber = 0; ; retryNumber++) {
    if (deps.signal.aborted) throw cancelledError()
    try {
      return await operation(retryNumber)
    } catch (error) {
      if (deps.signal.aborted) throw cancelledError()
      const failure = classify(error)
      const delayMs = failure === null ? null : retryDelayMs(failure, retryNumber + 1, policy, deps.random)
      if (delayMs === null || waitedMs + delayMs > policy.maxTotalWaitMs) throw error
      onRetry?.(retryNumber + 1, delayMs)
      waitedMs += delayMs
      try {
        if (delayMs > 0) await deps.clock.sleep(delayMs, deps.signal)
      } catch (sleepError) {
        if (deps.signal.aborted) throw cancelledError()
        throw sleepError
      }
    }
  }
}
