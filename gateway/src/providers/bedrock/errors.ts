/**
 * Bedrock errors: the exception name in the `x-amzn-errortype` header (`ThrottlingException:http://...`)
 * or the body's `__type`, the text in `{"message"}`. In a stream, exceptions arrive from the event
 * stream decoder as events named `exception:<name>` (lower camel case, e.g. `throttlingException`)
 * or `error:<code>`.
 */
import type { ProviderErrorInfo, UpstreamEvent } from '../adapter.ts'
import { awsErrorPrefix, awsExceptionPrefix } from '../adapter.ts'
import { errorInfo, fallbackMessage, isRecord } from '../shared/errors.ts'

/** Documented statuses, for in-band exceptions that arrive without one. */
const statusByException: Readonly<Record<string, number>> = {
  ValidationException: 400,
  AccessDeniedException: 403,
  ResourceNotFoundException: 404,
  ModelTimeoutException: 408,
  ModelErrorException: 424,
  ModelStreamErrorException: 424,
  ModelNotReadyException: 429,
  ThrottlingException: 429,
  ServiceQuotaExceededException: 429,
  InternalServerException: 500,
  ServiceUnavailableException: 503,
}

/** Worth another try whatever the status says: the model may be loading, or capacity may free up. */
const retryableExceptions = new Set(['ModelNotReadyException', 'ThrottlingException', 'ModelTimeoutException', 'InternalServerException', 'ServiceUnavailableException'])

/** `ThrottlingException:http://internal.amazon.com/...` or `com.amazon.bedrock#ThrottlingException` -> `ThrottlingException`. */
function exceptionName(raw: string | undefined): string | null {
  if (!raw) return null
  const name = raw.split(':', 1)[0]!.split('#').at(-1)!.trim()
  return name === '' ? null : name[0]!.toUpperCase() + name.slice(1)
}

export function parseBedrockError(status: number, headers: Readonly<Record<string, string>>, body: unknown): ProviderErrorInfo {
  const record = isRecord(body) ? body : {}
  const name = exceptionName(headers['x-amzn-errortype']) ?? exceptionName(typeof record.__type === 'string' ? record.__type : undefined)
  const text = typeof record.message === 'string' ? record.message : typeof record.Message === 'string' ? record.Message : fallbackMessage(status, body)
  const info = errorInfo(status, headers, { message: text, providerCode: name })
  if (name !== null && retryableExceptions.has(name)) info.retryable = true
  return info
}

/** A stream event from the decoder that is an in-band exception or error, as error info; null otherwise. */
export function bedrockStreamFault(event: UpstreamEvent): ProviderErrorInfo | null {
  const type = event.event ?? ''
  const prefix = [awsExceptionPrefix, awsErrorPrefix].find((candidate) => type.startsWith(candidate))
  if (prefix === undefined) return null
  const name = exceptionName(type.slice(prefix.length))
  const status = (name !== null && statusByException[name]) || 500
  return parseBedrockError(status, name === null ? {} : { 'x-amzn-errortype': name }, event.data)
}
