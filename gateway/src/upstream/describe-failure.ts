/**
 * One log line's worth of why an upstream call failed: which provider, which host, and the cause in
 * words an operator acts on (refused, DNS, TLS, timeout, reset), with the trace id the client got.
 * Never the URL's path, query or credentials: only the host.
 */

export type UpstreamFailureCause = 'connection_refused' | 'dns' | 'tls' | 'timeout' | 'connection_reset' | 'blocked_address' | 'other'

export interface UpstreamFailure {
  provider: string
  upstreamHost: string
  cause: UpstreamFailureCause
  /** The low-level code (ECONNREFUSED, ENOTFOUND, UND_ERR_CONNECT_TIMEOUT, ...), when there is one. */
  code: string | null
  traceId: string
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|HOSTNAME_MISMATCH)/

function causeOf(code: string | null, name: string): UpstreamFailureCause {
  switch (code) {
    case 'ECONNREFUSED': return 'connection_refused'
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME': return 'dns'
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT': return 'timeout'
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET': return 'connection_reset'
    default: break
  }
  if (code !== null && TLS_CODE.test(code)) return 'tls'
  if (name === 'TimeoutError' || name === 'AbortError') return 'timeout'
  return 'other'
}

/** The innermost code along an error's `cause` chain (fetch wraps the socket error). */
function innermostCode(error: unknown): { code: string | null; name: string } {
  let code: string | null = null
  let name = ''
  let current: unknown = error
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const candidate = current as { code?: unknown; name?: unknown; cause?: unknown }
    if (typeof candidate.code === 'string') code = candidate.code
    if (typeof candidate.name === 'string' && name === '') name = candidate.name
    current = candidate.cause
  }
  return { code, name }
}

/**
 * Describes a failed upstream call for the log. `blocked` is set when the SSRF-safe dispatcher
 * refused the address (its error says so), so the line says why no connection was tried.
 */
export function describeUpstreamFailure(error: unknown, call: { provider: string; url: URL | string; traceId: string; blocked?: boolean }): UpstreamFailure {
  const { code, name } = innermostCode(error)
  let upstreamHost: string
  try {
    upstreamHost = (typeof call.url === 'string' ? new URL(call.url) : call.url).host
  } catch {
    upstreamHost = '(invalid url)'
  }
  return { provider: call.provider, upstreamHost, cause: call.blocked ? 'blocked_address' : causeOf(code, name), code, traceId: call.traceId }
}
