/**
 * Small field checks that throw a 400 naming the parameter. Hand-written rather than a schema
 * library because every rule here needs its own precise message and `param`, several rules cross
 * fields, and this runs on every request: the checks only read, they never copy or reshape the body
 * (unknown fields pass through untouched).
 */
import { invalidParameter, GatewayError } from '../core/errors.ts'

export type Body = Record<string, unknown>

// int64 bounds; doubles cannot hold 2^63 - 1 exactly, and JSON's 9223372036854775807 parses to 2^63.
const INT64_MIN = -(2 ** 63)
const INT64_MAX = 2 ** 63

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'string' ? 'a string' : typeof value
}

export function requireString(body: Body, name: string): string {
  const value = body[name]
  if (value === undefined || value === null) throw new GatewayError('missing_parameter', `'${name}' is required`, { param: name })
  if (typeof value !== 'string' || value === '') throw invalidParameter(name, `'${name}' must be a non-empty string, got ${describe(value)}`)
  return value
}

export function optionalString(body: Body, name: string): void {
  const value = body[name]
  if (value !== undefined && value !== null && typeof value !== 'string') throw invalidParameter(name, `'${name}' must be a string, got ${describe(value)}`)
}

export function optionalBoolean(body: Body, name: string): void {
  const value = body[name]
  if (value !== undefined && value !== null && typeof value !== 'boolean') throw invalidParameter(name, `'${name}' must be a boolean, got ${describe(value)}`)
}

export function optionalObject(body: Body, name: string): void {
  const value = body[name]
  if (value !== undefined && value !== null && (typeof value !== 'object' || Array.isArray(value))) {
    throw invalidParameter(name, `'${name}' must be an object, got ${describe(value)}`)
  }
}

export interface NumberBounds {
  min?: number
  max?: number
  integer?: boolean
}

export function checkNumber(value: unknown, param: string, bounds: NumberBounds): void {
  if (typeof value !== 'number' || Number.isNaN(value)) throw invalidParameter(param, `'${param}' must be a number, got ${describe(value)}`)
  if (bounds.integer && !Number.isInteger(value)) throw invalidParameter(param, `'${param}' must be an integer, got ${value}`)
  if (bounds.min !== undefined && value < bounds.min) throw invalidParameter(param, `'${param}' must be at least ${bounds.min}, got ${value}`)
  if (bounds.max !== undefined && value > bounds.max) throw invalidParameter(param, `'${param}' must be at most ${bounds.max}, got ${value}`)
}

/** Optional and nullable, as the OpenAI reference types most sampling parameters. */
export function optionalNumber(body: Body, name: string, bounds: NumberBounds): void {
  const value = body[name]
  if (value !== undefined && value !== null) checkNumber(value, name, bounds)
}

export function optionalSeed(body: Body): void {
  optionalNumber(body, 'seed', { integer: true, min: INT64_MIN, max: INT64_MAX })
}

export function optionalLogitBias(body: Body): void {
  const value = body.logit_bias
  if (value === undefined || value === null) return
  optionalObject(body, 'logit_bias')
  for (const [token, bias] of Object.entries(value as Record<string, unknown>)) {
    if (!/^\d+$/.test(token)) throw invalidParameter('logit_bias', `'logit_bias' keys must be token ids, got '${token.slice(0, 40)}'`)
    checkNumber(bias, `logit_bias.${token}`, { min: -100, max: 100 })
  }
}

export function optionalStop(body: Body): void {
  const value = body.stop
  if (value === undefined || value === null || typeof value === 'string') return
  if (!Array.isArray(value)) throw invalidParameter('stop', `'stop' must be a string or an array of strings, got ${describe(value)}`)
  if (value.length > 4) throw invalidParameter('stop', `'stop' takes up to 4 sequences, got ${value.length}`)
  value.forEach((item, index) => {
    if (typeof item !== 'string') throw invalidParameter(`stop.${index}`, `'stop' items must be strings`)
  })
}

export function streamOptionsOnlyWithStream(body: Body): void {
  optionalBoolean(body, 'stream')
  optionalObject(body, 'stream_options')
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    throw invalidParameter('stream_options', `'stream_options' is only allowed when 'stream' is true`)
  }
}

export function penalties(body: Body): void {
  optionalNumber(body, 'frequency_penalty', { min: -2, max: 2 })
  optionalNumber(body, 'presence_penalty', { min: -2, max: 2 })
}

export function sampling(body: Body): void {
  optionalNumber(body, 'temperature', { min: 0, max: 2 })
  optionalNumber(body, 'top_p', { min: 0, max: 1 })
}

export function optionalN(body: Body): void {
  optionalNumber(body, 'n', { integer: true, min: 1, max: 128 })
}
