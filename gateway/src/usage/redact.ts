/**
 * Secret redaction of logged bodies, applied when a batch is serialised (off the request path).
 * Fields whose names say they hold a credential lose their value; strings that look like a key or
 * a bearer token anywhere in a body are masked. A body larger than the cap is replaced by a note of
 * its size, so one huge upload cannot crowd the log store.
 */

import { jsonOrText, RawJson, rememberRawJson, toJsonText } from '../core/raw-json.ts'

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

/** The shortest text SECRET_PATTERN matches (`sk-` and 16 characters): shorter strings are not searched. */
const MIN_SECRET_CHARS = 19

/** SECRET_PATTERN without `g`: `test` keeps no position between calls. */
const SECRET_SEARCH = new RegExp(SECRET_PATTERN.source)

/** Searched first, replaced only on a match: `replace` with a global pattern costs more than a search that finds nothing. */
function redactString(value: string): string {
  return value.length < MIN_SECRET_CHARS || !SECRET_SEARCH.test(value) ? value : value.replace(SECRET_PATTERN, REDACTED)
}

/** Field names already judged (bodies repeat a few names); bounded, past it names are judged each time. */
const judgedFields = new Map<string, boolean>()
const MAX_JUDGED_FIELDS = 4096

function secretField(name: string): boolean {
  let secret = judgedFields.get(name)
  if (secret === undefined) {
    secret = SECRET_FIELDS.has(name.toLowerCase())
    if (judgedFields.size < MAX_JUDGED_FIELDS) judgedFields.set(name, secret)
  }
  return secret
}

const MAX_DEPTH = 64

/**
 * `value` with credentials masked. Copy on write: an object or array with nothing to mask is
 * returned as it is, so a clean body (the usual case) allocates nothing.
 */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactString(value)
  if (value === null || typeof value !== 'object') return value
  if (depth > MAX_DEPTH) return REDACTED
  if (Array.isArray(value)) {
    let out: unknown[] | null = null
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index]
      const redacted = redactValue(item, depth + 1)
      if (out === null && redacted !== item) out = value.slice(0, index)
      out?.push(redacted)
    }
    return out ?? value
  }
  // Bodies are plain objects (parsed JSON), so for-in walks their own fields; V8 reads a field
  // named by for-in from its enum cache, where a name from Object.keys is a generic keyed load.
  const record = value as Record<string, unknown>
  let out: Record<string, unknown> | null = null
  for (const name in record) {
    const item = record[name]
    const redacted = item !== null && item !== undefined && secretField(name) ? REDACTED : redactValue(item, depth + 1)
    if (out === null && redacted !== item) {
      out = {}
      for (const before in record) {
        if (before === name) break
        out[before] = record[before]
      }
    }
    if (out !== null) out[name] = redacted
  }
  return out ?? value
}

/**
 * A body with nothing to mask, as JSON: the provider's own text when the gateway relayed it as it
 * came (core/raw-json.ts: the text the client got), instead of serialising the parsed value again
 * (the largest part of a record's serialisation: callgrind, test/bench/instructions.ts). Only text
 * on one line: a spooled batch holds one record a line.
 */
function unchangedJson(value: unknown): string | undefined {
  const raw = toJsonText(value)
  return raw.includes('\n') ? (JSON.stringify(value) as string | undefined) : raw
}

/**
 * An answer held as its text (a cache hit's, core/raw-json.ts `RawJson`), as the JSON it holds, so
 * that its fields are masked as any body's are (walked as an object, its text was one string, and
 * a credential field in it went through); remembered with its text for `unchangedJson`. Text that
 * is not JSON is logged as a string.
 */
function heldJson(held: RawJson): unknown {
  const parsed = jsonOrText(held.text)
  rememberRawJson(parsed, held.text)
  return parsed
}

/**
 * What a usage record carries of a body, as JSON text: redacted, and replaced by a note of its
 * size when longer than MAX_BODY_CHARS, so one huge upload cannot crowd the log store; null
 * without a body. Text, so that the record's line takes it as it is instead of serialising twice.
 */
export function loggableJson(value: unknown): string | null {
  if (value === null || value === undefined) return null
  const body = value instanceof RawJson ? heldJson(value) : value
  const redacted = redactValue(body)
  const text = redacted === body ? unchangedJson(body) : (JSON.stringify(redacted) as string | undefined)
  if (text === undefined) return null
  return text.length > MAX_BODY_CHARS ? `{"truncated":true,"chars":${text.length}}` : text
}
