/**
 * Error parsing helpers shared by every adapter: retry hints from headers, and the fault and
 * retryability implied by a status code.
 */
import type { ErrorFault, ProviderErrorInfo } from '../adapter.ts'

/**
 * `retry-after-ms` (OpenAI) wins over `retry-after` (seconds or an HTTP date). An HTTP date names a
 * wall-clock instant, so it is measured against the wall clock (`nowMs`, `Date.now()` unless a test
 * pins it); a date already past means "now" (0).
 */
export function retryAfterMsFromHeaders(headers: Readonly<Record<string, string>>, nowMs: number = Date.now()): number | null {
  const ms = headers['retry-after-ms']
  if (ms !== undefined) {
    const value = Number(ms)
    if (Number.isFinite(value) && value >= 0) return value
  }
  const after = headers['retry-after']
  if (after === undefined) return null
  const seconds = Number(after)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  // Date.parse reads "-3" as the year -3; an HTTP date always names its month ("Sun, 06 Nov 1994 ...").
  if (!/[a-z]/i.test(after)) return null
  const date = Date.parse(after)
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs)
}

export function faultForStatus(status: number): ErrorFault {
  return status >= 500 || status === 429 || status === 408 ? 'upstream' : 'client'
}

/** 408, 409 (lock contention at some providers), 429 and 5xx are worth another try. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500
}

export function errorInfo(
  status: number,
  headers: Readonly<Record<string, string>>,
  fields: { message: string; providerCode?: string | null; param?: string | null },
  nowMs: number = Date.now(),
): ProviderErrorInfo {
  return {
    status,
    message: fields.message,
    providerCode: fields.providerCode ?? null,
    param: fields.param ?? null,
    fault: faultForStatus(status),
    retryable: isRetryableStatus(status),
    retryAfterMs: retryAfterMsFromHeaders(headers, nowMs),
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A readable message from a body that did not follow the documented error shape. */
export function fallbackMessage(status: number, body: unknown): string {
  if (typeof body === 'string' && body.trim() !== '') return body.slice(0, 500)
  return `Upstream answered HTTP ${status}`
}
