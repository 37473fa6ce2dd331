/**
 * The gateway's `application/json` body parser, in place of fastify's default. Two things the
 * default cannot do:
 *
 * - Depth. A body nested thousands of levels deep parses fine but overflows the stack later (body
 *   encoding, validation, translation): refused here with a 400 before any work, by one linear scan
 *   of the text (no recursion, strings skipped whole).
 * - Exact integers. `seed: 9223372036854775807` must reach the provider as written, not as the
 *   nearest double. Only when a number in the text has a run of 16+ digits (the first length a double can get
 *   wrong) is it parsed with a reviver that keeps unsafe integers as `JSON.rawJSON` values, which
 *   `JSON.stringify` writes back verbatim; every other body takes the plain, fast path.
 *
 * Prototype poisoning is refused as by fastify's default (secure-json-parse, `error` for both).
 */
import type { FastifyInstance } from 'fastify'
import secureJson from 'secure-json-parse'
import { keepExactIntegers } from '../core/exact-integer.ts'
import { GatewayError } from '../core/errors.ts'

/** Deeper than any real request (tool schemas nest a dozen levels) and far below stack limits. */
export const MAX_JSON_DEPTH = 64

const QUOTE = 34
const BACKSLASH = 92
const OPEN_BRACE = 123
const OPEN_BRACKET = 91
const CLOSE_BRACE = 125
const CLOSE_BRACKET = 93

const DIGIT_0 = 48
const DIGIT_9 = 57
/** The shortest digit run an integer a double cannot hold exactly (beyond 2^53) is written with. */
const LONG_DIGIT_RUN = 16

/** What one scan of a JSON text found: nested deeper than the limit, and a run of 16+ digits outside strings. */
export interface JsonTextShape {
  tooDeep: boolean
  longDigitRun: boolean
}

/**
 * One linear scan of a JSON text, without recursion, strings skipped whole: whether it nests deeper
 * than `limit` (counting stops there), and whether a number in it has a run of 16+ digits, the only
 * numbers the exact-integer reviver can change (digits inside strings are never numbers). One pass
 * for both: a separate /\d{16}/ over the whole text cost as much again.
 */
export function scanJsonText(text: string, limit: number): JsonTextShape {
  const shape: JsonTextShape = { tooDeep: false, longDigitRun: false }
  let depth = 0
  let digits = 0
  const length = text.length
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i)
    if (code >= DIGIT_0 && code <= DIGIT_9) {
      if (++digits >= LONG_DIGIT_RUN) shape.longDigitRun = true
      continue
    }
    digits = 0
    if (code === QUOTE) {
      // Jump to the closing quote: one not preceded by an odd number of backslashes.
      let end = text.indexOf('"', i + 1)
      while (end !== -1) {
        let slashes = 0
        for (let j = end - 1; text.charCodeAt(j) === BACKSLASH; j--) slashes++
        if (slashes % 2 === 0) break
        end = text.indexOf('"', end + 1)
      }
      if (end === -1) return shape // unterminated: JSON.parse reports it
      i = end
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > limit) {
        shape.tooDeep = true
        return shape
      }
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--
    }
  }
  return shape
}

/** The deepest nesting in a JSON text, counted without recursion; stops counting past `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  return scanJsonText(text, limit).tooDeep
}

const POISONING = { protoAction: 'error', constructorAction: 'error' } as const

export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new GatewayError('invalid_json', 'The request body is empty; send a JSON object')
  const shape = scanJsonText(text, MAX_JSON_DEPTH)
  if (shape.tooDeep) {
    throw new GatewayError('invalid_json', `The request body is nested more than ${MAX_JSON_DEPTH} levels deep`)
  }
  try {
    const reviver = shape.longDigitRun ? (keepExactIntegers as secureJson.Reviver) : null
    return secureJson.parse(text, reviver, POISONING)
  } catch (error) {
    throw new GatewayError('invalid_json', 'The request body is not valid JSON', { cause: error })
  }
}

/** Replaces fastify's JSON parser on `app` (and every scope registered under it). */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string))
    } catch (error) {
      done(error as Error, undefined)
    }
  })
}
