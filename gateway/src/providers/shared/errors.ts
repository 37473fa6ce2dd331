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

/**
 * The headers providers name their request ids in: Anthropic `request-id`, OpenAI and Azure
 * `x-request-id`, Azure API Management `apim-request-id`, AWS `x-amzn-requestid`, Mistral
 * `mistral-correlation-id`, Google `x-goog-request-id` (rare on errors).
 */
const REQUEST_ID_HEADERS = ['request-id', 'x-request-id', 'apim-request-id', 'x-amzn-requestid', 'mistral-correlation-id', 'x-goog-request-id'] as const

/** The longest request id kept: ids are short tokens; anything longer is not one. */
const MAX_REQUEST_ID_LENGTH = 128

function plausibleRequestId(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' && value.length <= MAX_REQUEST_ID_LENGTH && /^[\w.:-]+$/.test(value) ? value : undefined
}

export function requestIdFromHeaders(headers: Readonly<Record<string, string>>): string | undefined {
  for (const name of REQUEST_ID_HEADERS) {
    const id = plausibleRequestId(headers[name])
    if (id !== undefined) return id
  }
  return undefined
}

/** `requestId`: one the body names (Anthropic `request_id`); else the headers'. */
export function errorInfo(
  status: number,
  headers: Readonly<Record<string, string>>,
  fields: { message: string; providerCode?: string | null; param?: string | null; requestId?: unknown },
  nowMs: number = Date.now(),
): ProviderErrorInfo {
  const providerRequestId = plausibleRequestId(fields.requestId) ?? requestIdFromHeaders(headers)
  return {
    status,
    message: fields.message,
    providerCode: fields.providerCode ?? null,
    param: fields.param ?? null,
    fault: faultForStatus(status),
    retryable: isRetryableStatus(status),
    retryAfterMs: retryAfterMsFromHeaders(headers, nowMs),
    ...(providerRequestId !== undefined && { providerRequestId }),
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
