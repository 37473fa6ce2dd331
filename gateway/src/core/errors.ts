/**
 * One catalog of typed errors with stable codes. Everything that answers an error goes through
 * `GatewayError` and is rendered in one place (`http/error-handler.ts`) as the OpenAI envelope
 * `{"error":{"message","type","param","code"}}`.
 */

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'budget_exceeded_error'
  | 'guardrail_error'
  | 'timeout_error'
  | 'upstream_error'
  | 'service_unavailable_error'
  | 'api_error'

interface CatalogEntry {
  readonly status: number
  readonly type: ErrorType
}

/** Stable codes. Clients may switch on them; never rename one. */
export const errorCatalog = {
  invalid_json: { status: 400, type: 'invalid_request_error' },
  invalid_header: { status: 400, type: 'invalid_request_error' },
  invalid_parameter: { status: 400, type: 'invalid_request_error' },
  missing_parameter: { status: 400, type: 'invalid_request_error' },
  unsupported_parameter: { status: 400, type: 'invalid_request_error' },
  invalid_config: { status: 400, type: 'invalid_request_error' },
  no_route_matched: { status: 400, type: 'invalid_request_error' },
  route_not_specified: { status: 400, type: 'invalid_request_error' },
  unsupported_operation: { status: 400, type: 'invalid_request_error' },
  payload_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  missing_api_key: { status: 401, type: 'authentication_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  expired_api_key: { status: 401, type: 'authentication_error' },
  invalid_token: { status: 401, type: 'authentication_error' },
  session_expired: { status: 401, type: 'authentication_error' },
  forbidden: { status: 403, type: 'permission_error' },
  admin_key_on_data_plane: { status: 403, type: 'permission_error' },
  insufficient_scope: { status: 403, type: 'permission_error' },
  provider_not_allowed: { status: 403, type: 'permission_error' },
  custom_host_not_allowed: { status: 403, type: 'permission_error' },
  forward_headers_not_allowed: { status: 403, type: 'permission_error' },
  upstream_address_blocked: { status: 403, type: 'permission_error' },
  not_found: { status: 404, type: 'not_found_error' },
  route_not_found: { status: 404, type: 'not_found_error' },
  model_not_found: { status: 404, type: 'not_found_error' },
  config_not_found: { status: 404, type: 'not_found_error' },
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  request_timeout: { status: 408, type: 'timeout_error' },
  /** The client went away before an answer (nginx's 499); only ever logged, nobody reads the body. */
  request_cancelled: { status: 499, type: 'invalid_request_error' },
  conflict: { status: 409, type: 'conflict_error' },
  budget_exhausted: { status: 412, type: 'budget_exceeded_error' },
  rate_limited: { status: 429, type: 'rate_limit_error' },
  guardrail_blocked: { status: 446, type: 'guardrail_error' },
  upstream_error: { status: 502, type: 'upstream_error' },
  provider_invalid_request: { status: 400, type: 'invalid_request_error' },
  provider_not_found: { status: 404, type: 'not_found_error' },
  upstream_not_found: { status: 404, type: 'not_found_error' },
  provider_rate_limited: { status: 429, type: 'rate_limit_error' },
  provider_auth_failed: { status: 502, type: 'upstream_error' },
  provider_error: { status: 502, type: 'upstream_error' },
  provider_overloaded: { status: 503, type: 'service_unavailable_error' },
  upstream_malformed_response: { status: 502, type: 'upstream_error' },
  upstream_unavailable: { status: 503, type: 'service_unavailable_error' },
  upstream_timeout: { status: 504, type: 'timeout_error' },
  dependency_unavailable: { status: 503, type: 'service_unavailable_error' },
  not_ready: { status: 503, type: 'service_unavailable_error' },
  internal_error: { status: 500, type: 'api_error' },
  upstream_response_too_large: { status: 502, type: 'upstream_error' },
} as const satisfies Record<string, CatalogEntry>

export type ErrorCode = keyof typeof errorCatalog

export interface GatewayErrorOptions {
  param?: string | null
  /** Overrides the catalog status, e.g. to relay an upstream 4xx unchanged. */
  status?: number
  headers?: Record<string, string>
  cause?: unknown
}

export class GatewayError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly type: ErrorType
  readonly param: string | null
  readonly headers: Record<string, string>
  /** Fields for the gateway's own log line about this error (never sent to the client). */
  logDetail: Record<string, unknown> | undefined

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'GatewayError'
    this.code = code
    this.status = options.status ?? errorCatalog[code].status
    this.type = errorCatalog[code].type
    this.param = options.param ?? null
    this.headers = options.headers ?? {}
  }

  toBody(): ErrorEnvelope {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } }
  }
}

export interface ErrorEnvelope {
  error: { message: string; type: string; param: string | null; code: string | null }
}

/** A dependency (store, Redis, control plane) failed: 503 with Retry-After, never a 401 or a silent allow. */
export function dependencyUnavailable(what: string, retryAfterSeconds = 1, cause?: unknown): GatewayError {
  return new GatewayError('dependency_unavailable', `${what} is unavailable; retry shortly`, {
    headers: { 'retry-after': String(retryAfterSeconds) },
    cause,
  })
}

export function invalidParameter(param: string, message: string): GatewayError {
  return new GatewayError('invalid_parameter', message, { param })
}

export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error
  return new GatewayError('internal_error', 'The gateway hit an unexpected error', { cause: error })
}
