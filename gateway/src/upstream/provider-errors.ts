/**
 * Turns what a provider said into the gateway's error catalog. The provider's status is kept where
 * it means the same thing to the caller (400, 404, 429, 5xx); a provider refusing the stored
 * credential becomes a 502, because a 401 would tell the caller their own Gatehouse key is wrong.
 * The provider's message is relayed only after scrubbing: an upstream that echoes the request's
 * authorization must not hand the stored credential to the caller or the logs.
 */
import type { ProviderErrorInfo } from '../providers/adapter.ts'
import { GatewayError, type ErrorCode } from '../core/errors.ts'
import { knownSecretValues, scrubSecrets } from '../core/scrub.ts'
import type { SecretBag } from '../core/secret.ts'

export class ProviderHttpError extends GatewayError {
  readonly info: ProviderErrorInfo
  constructor(code: ErrorCode, message: string, info: ProviderErrorInfo, status?: number) {
    const headers: Record<string, string> = {}
    if (info.retryAfterMs !== null) headers['retry-after'] = String(Math.max(1, Math.ceil(info.retryAfterMs / 1000)))
    super(code, message, { param: info.param, headers, ...(status === undefined ? {} : { status }) })
    this.info = info
  }
}

/** `credentials`: the provider's stored credentials, removed from the message wherever they appear. */
export function errorFromProvider(unscrubbed: ProviderErrorInfo, providerSlug: string, credentials?: SecretBag): ProviderHttpError {
  const info: ProviderErrorInfo = { ...unscrubbed, message: scrubSecrets(unscrubbed.message, knownSecretValues(credentials)) }
  const error = providerHttpError(info, providerSlug)
  // The gateway logs its 5xx answers (http/error-handler.ts): a provider failure's line names the
  // provider's status and request id, what the provider's support asks for.
  if (error.status >= 500) error.logDetail = { provider: providerSlug, providerStatus: info.status, providerRequestId: info.providerRequestId ?? null }
  return error
}

function providerHttpError(info: ProviderErrorInfo, providerSlug: string): ProviderHttpError {
  const { status } = info
  if (status === 401 || status === 403) {
    return new ProviderHttpError('provider_auth_failed', `Provider '@${providerSlug}' refused the configured credential (HTTP ${status})`, info)
  }
  if (status === 429) return new ProviderHttpError('provider_rate_limited', info.message, info)
  if (status === 404) return new ProviderHttpError('upstream_not_found', info.message, info)
  if (status === 408) return new ProviderHttpError('request_timeout', info.message, info)
  if (status >= 400 && status < 500) return new ProviderHttpError('provider_invalid_request', info.message, info, status)
  if (status === 503 || status === 529) return new ProviderHttpError('provider_overloaded', info.message, info)
  if (status === 504) return new ProviderHttpError('upstream_timeout', info.message, info)
  return new ProviderHttpError('provider_error', info.message, info)
}
