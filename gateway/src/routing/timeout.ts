/**
 * A config's `request_timeout`: how long one attempt may take to start answering (a stream's first
 * event; a JSON answer, which providers send in one piece once generated). The timer is exact,
 * unlike the connection pool's coarse header timer, and it stops once the answer has started, so
 * a long stream is never cut by it. A client abort still reaches the upstream call afterwards.
 */
import { GatewayError } from '../core/errors.ts'

export function requestTimeoutError(timeoutMs: number): GatewayError {
  return new GatewayError('request_timeout', `The provider did not start answering within the request_timeout of ${timeoutMs} ms`)
}

export async function withRequestTimeout<T>(timeoutMs: number, clientSignal: AbortSignal, attempt: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const timer = new AbortController()
  const handle = setTimeout(() => timer.abort(), timeoutMs)
  try {
    return await attempt(AbortSignal.any([clientSignal, timer.signal]))
  } catch (error) {
    if (timer.signal.aborted && !clientSignal.aborted) throw requestTimeoutError(timeoutMs)
    throw error
  } finally {
    clearTimeout(handle)
  }
}
