/**
 * Control-plane errors. The admin API answers the same envelope as the gateway,
 * `{"error":{"message","type","param","code"}}`, with the admin API's AB code family as `code`
 * (AB01 validation with the field path in `param`, AB03 forbidden, AB05 unauthenticated, AB07
 * conflict, AB08 not found, ...). The operator may import only the gateway's snapshot contract,
 * so this catalog mirrors the gateway's `GatewayError` shape rather than importing it.
 */
export const adminErrorCatalog = {
  AB01: { status: 400, type: 'invalid_request_error' },
  AB02: { status: 404, type: 'not_found_error' },
  AB03: { status: 403, type: 'permission_error' },
  AB04: { status: 500, type: 'api_error' },
  AB05: { status: 401, type: 'authentication_error' },
  AB06: { status: 429, type: 'rate_limit_error' },
  AB07: { status: 409, type: 'conflict_error' },
  AB08: { status: 404, type: 'not_found_error' },
  AB09: { status: 402, type: 'invalid_request_error' },
  /** A dependency (the store) is down: 503 with Retry-After, never a 401 or a silent allow. */
  dependency_unavailable: { status: 503, type: 'service_unavailable_error' },
} as const

export type AdminErrorCode = keyof typeof adminErrorCatalog

export interface ErrorEnvelope {
  error: { message: string; type: string; param: string | null; code: string | null }
}

export class AdminError extends Error {
  readonly code: AdminErrorCode
  readonly status: number
  readonly type: string
  readonly param: string | null
  readonly headers: Record<string, string>

  constructor(code: AdminErrorCode, message: string, options: { param?: string | null; headers?: Record<string, string>; cause?: unknown; status?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'AdminError'
    this.code = code
    this.status = options.status ?? adminErrorCatalog[code].status
    this.type = adminErrorCatalog[code].type
    this.param = options.param ?? null
    this.headers = options.headers ?? {}
  }

  toBody(): ErrorEnvelope {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } }
  }
}

export const invalid = (param: string, message: string): AdminError => new AdminError('AB01', message, { param })
export const forbidden = (message: string): AdminError => new AdminError('AB03', message)
export const unauthenticated = (message: string): AdminError => new AdminError('AB05', message)
export const notFound = (what: string): AdminError => new AdminError('AB08', `${what} not found`)
export const conflict = (message: string, param?: string): AdminError => new AdminError('AB07', message, { param: param ?? null })
