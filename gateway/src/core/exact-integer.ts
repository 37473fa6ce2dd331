/**
 * Integers beyond a double's precision, kept exactly (`seed: 9223372036854775807`): the JSON body
 * parser (http/json-body.ts) turns them into `JSON.rawJSON` values, which `JSON.stringify` writes
 * back verbatim; validation reads their digits here. Node 22+ (V8's JSON.parse source text
 * access); not yet in TypeScript's lib.
 */
interface RawJsonApi {
  rawJSON(text: string): unknown
  isRawJSON(value: unknown): boolean
}
const rawJsonApi = JSON as unknown as RawJsonApi
export type SourceReviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown

const INTEGER_LITERAL = /^-?\d+$/

/** A reviver keeping integers a double cannot hold as raw JSON; every other value unchanged. */
export const keepExactIntegers: SourceReviver = (_key, value, context) => {
  if (typeof value !== 'number' || Number.isSafeInteger(value)) return value
  const source = context?.source
  return source !== undefined && INTEGER_LITERAL.test(source) ? rawJsonApi.rawJSON(source) : value
}

/** An integer kept verbatim by the parser (too large for a double): its digits, else undefined. */
export function rawIntegerText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || !rawJsonApi.isRawJSON(value)) return undefined
  const text = (value as { rawJSON: string }).rawJSON
  return INTEGER_LITERAL.test(text) ? text : undefined
}
