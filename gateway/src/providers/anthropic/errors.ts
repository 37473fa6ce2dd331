/**
 * Anthropic errors: `{"type":"error","error":{"type","message"}}`, over HTTP or in-band as a stream
 * `error` event. 529 `overloaded_error` and 429 `rate_limit_error` (with `retry-after`) are worth
 * another try; the shared status rules already say so.
 */
import type { ProviderErrorInfo } from '../adapter.ts'
import { errorInfo, fallbackMessage, isRecord } from '../shared/errors.ts'

/** The status Anthropic documents for each error type; an in-band stream error carries no status. */
const statusByType: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
}

export function statusForAnthropicErrorType(type: string | null): number {
  return (type !== null && statusByType[type]) || 500
}

export interface AnthropicErrorEnvelope {
  type: 'error'
  error: { type: string; message: string }
}

/**
 * The error body a `POST /v1/messages` client expects (the Anthropic SDKs read `error.type`), for
 * any status the gateway answers: Anthropic's own type where the status is one Anthropic uses,
 * otherwise the generic client or server type.
 */
export function anthropicErrorEnvelope(status: number, message: string): AnthropicErrorEnvelope {
  const known = Object.entries(statusByType).find(([, typeStatus]) => typeStatus === status)?.[0]
  const type = known ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
  return { type: 'error', error: { type, message } }
}

export function parseAnthropicError(status: number, headers: Readonly<Record<string, string>>, body: unknown): ProviderErrorInfo {
  const error = isRecord(body) && isRecord(body.error) ? body.error : null
  // The API names its request id in the body too (`request_id`), beside the `request-id` header.
  const requestId = isRecord(body) ? body.request_id : undefined
  if (!error) return errorInfo(status, headers, { message: fallbackMessage(status, body), requestId })
  return errorInfo(status, headers, {
    message: typeof error.message === 'string' ? error.message : fallbackMessage(status, body),
    providerCode: typeof error.type === 'string' ? error.type : null,
    requestId,
  })
}

/** An in-band `error` event: the same body, with the status its type implies. */
export function anthropicStreamErrorInfo(data: unknown): ProviderErrorInfo {
  const error = isRecord(data) && isRecord(data.error) ? data.error : null
  const type = error && typeof error.type === 'string' ? error.type : null
  return parseAnthropicError(statusForAnthropicErrorType(type), {}, data)
}
