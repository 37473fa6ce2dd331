/**
 * Google API errors: `{"error":{"code","message","status","details"}}` (Gemini API and Vertex AI),
 * sometimes wrapped in a one-element array on streaming endpoints. `RetryInfo.retryDelay` in the
 * details is the retry hint when no header carries one.
 */
import type { ProviderErrorInfo } from '../adapter.ts'
import { errorInfo, fallbackMessage, isRecord } from '../shared/errors.ts'

const retryInfoType = 'type.googleapis.com/google.rpc.RetryInfo'

function retryDelayMs(details: unknown): number | null {
  if (!Array.isArray(details)) return null
  const retryInfo = details.find((detail) => isRecord(detail) && detail['@type'] === retryInfoType)
  const delay = isRecord(retryInfo) ? retryInfo.retryDelay : undefined
  const match = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay) : null
  return match?.[1] === undefined ? null : Math.round(Number(match[1]) * 1000)
}

export function parseGoogleError(status: number, headers: Readonly<Record<string, string>>, body: unknown): ProviderErrorInfo {
  const envelope = Array.isArray(body) ? body[0] : body
  const error = isRecord(envelope) && isRecord(envelope.error) ? envelope.error : null
  if (!error) return errorInfo(status, headers, { message: fallbackMessage(status, body) })
  const info = errorInfo(status, headers, {
    message: typeof error.message === 'string' ? error.message : fallbackMessage(status, body),
    providerCode: typeof error.status === 'string' ? error.status : null,
  })
  info.retryAfterMs ??= retryDelayMs(error.details)
  return info
}
