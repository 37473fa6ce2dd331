/**
 * Secret redaction of logged bodies, applied when a batch is serialised (off the request path).
 * Fields whose names say they hold a credential lose their value; strings that look like a key or
 * a bearer token anywhere in a body are masked. A body larger than the cap is replaced by a note of
 * its size, so one huge upload cannot crowd the log store.
 */

export const REDACTED = '[REDACTED]'
export const MAX_BODY_CHARS = 256 * 1024

const SECRET_FIELDS = new Set([
  'authorization', 'proxy-authorization', 'api_key', 'apikey', 'api-key', 'x-api-key', 'x-gateway-api-key',
  'password', 'passwd', 'secret', 'client_secret', 'access_token', 'refresh_token', 'id_token', 'token',
  'private_key', 'aws_secret_access_key', 'aws_session_token', 'credentials', 'cookie', 'set-cookie',
])

/**
 * Key-shaped strings: provider keys (`sk-...`, `sk-ant-...`), Gatehouse keys (`ghk_...`), Google
 * API keys (`AIza...`), AWS access key ids, bearer tokens, and JWTs.
 */
const SECRET_PATTERN = /\b(?:sk-[A-Za-z0-9_-]{16,}|ghk_[a-z]+_[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|AKIA[0-9A-Z]{16}|Bearer\s+[A-Za-z0-9._~+/=-]{16,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})/g

function redactString(value: string): string {
  return value.replace(SECRET_PATTERN, REDACTED)
}

const MAX_DEPTH = 64

export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactString(value)
  if (value === null || typeof value !== 'object') return value
  if (depth > MAX_DEPTH) return REDACTED
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    out[key] = SECRET_FIELDS.has(key.toLowerCase()) && item !== null && item !== undefined ? REDACTED : redactValue(item, depth + 1)
  }
  return out
}

/** Redacted and bounded: what a usage record may carry of a body. */
export function loggableBody(value: unknown): unknown {
  if (value === null || value === undefined) return null
  const redacted = redactValue(value)
  const text = typeof redacted === 'string' ? redacted : JSON.stringify(redacted)
  if (text === undefined) return null
  if (text.length > MAX_BODY_CHARS) return { truncated: true, chars: text.length }
  return redacted
}
