/**
 * PostgreSQL stores neither NUL characters (text and jsonb refuse U+0000) nor unpaired UTF-16
 * surrogates (jsonb refuses the escape; text would silently turn them into U+FFFD). Every admin
 * request's body, query and path parameters are checked once, before any route runs, so such a
 * value is a 400 naming the field instead of a 500 from the database, whatever the route.
 */
import { invalid, type AdminError } from '../errors.ts'
import { issuePath } from './http.ts'

const MAX_DEPTH = 64

function unstorable(text: string): boolean {
  return text.includes('\u0000') || !text.isWellFormed()
}

/** The path of the first string (value or object key) PostgreSQL cannot store, or null. */
export function findUnstorableText(value: unknown, path: PropertyKey[] = [], depth = 0): PropertyKey[] | null {
  if (typeof value === 'string') return unstorable(value) ? path : null
  // Deeper than any admin body goes; the route's own schema refuses such bodies.
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return null
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findUnstorableText(item, [...path, index], depth + 1)
      if (found) return found
    }
    return null
  }
  for (const [key, item] of Object.entries(value)) {
    if (unstorable(key)) return [...path, key.replaceAll('\u0000', '\\u0000').toWellFormed()]
    const found = findUnstorableText(item, [...path, key], depth + 1)
    if (found) return found
  }
  return null
}

/** AB01 naming the first unstorable field of the request's path parameters, query or body, or null. */
export function unstorableTextError(request: { params?: unknown; query?: unknown; body?: unknown }): AdminError | null {
  for (const part of [request.params, request.query, request.body]) {
    const found = findUnstorableText(part)
    if (found) {
      const param = issuePath(found) || '(body)'
      return invalid(param, `${param}: contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored`)
    }
  }
  return null
}
