import { describe, expect, it } from 'vitest'
import { fixture } from '../shared/testing.ts'
import { anthropicErrorEnvelope, parseAnthropicError, statusForAnthropicErrorType } from './errors.ts'

describe('anthropic errors', () => {
  it('marks 529 overloaded_error as a retryable upstream fault', () => {
    expect(parseAnthropicError(529, {}, fixture(import.meta.url, 'error-overloaded.json'))).toEqual({
      status: 529,
      message: 'Overloaded',
      providerCode: 'overloaded_error',
      param: null,
      fault: 'upstream',
      retryable: true,
      retryAfterMs: null,
    })
  })

  it('reads retry-after on 429 rate_limit_error', () => {
    const info = parseAnthropicError(429, { 'retry-after': '7' }, fixture(import.meta.url, 'error-rate-limit.json'))
    expect(info).toMatchObject({ status: 429, providerCode: 'rate_limit_error', retryable: true, fault: 'upstream', retryAfterMs: 7000 })
  })

  it('marks 400 invalid_request_error as a client fault, not retryable', () => {
    const info = parseAnthropicError(400, {}, fixture(import.meta.url, 'error-invalid-request.json'))
    expect(info).toMatchObject({ status: 400, providerCode: 'invalid_request_error', message: 'max_tokens: Field required', retryable: false, fault: 'client' })
  })

  it('survives bodies that are not in the documented shape', () => {
    expect(parseAnthropicError(502, {}, '<html>bad gateway</html>')).toMatchObject({ status: 502, message: '<html>bad gateway</html>', providerCode: null, retryable: true })
    expect(parseAnthropicError(500, {}, null)).toMatchObject({ message: 'Upstream answered HTTP 500' })
  })

  it('renders the envelope /v1/messages clients expect for any status', () => {
    expect(anthropicErrorEnvelope(429, 'slow down')).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } })
    expect(anthropicErrorEnvelope(401, 'who?')).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'who?' } })
    expect(anthropicErrorEnvelope(529, 'busy').error.type).toBe('overloaded_error')
    expect(anthropicErrorEnvelope(446, 'blocked by a guardrail').error.type).toBe('invalid_request_error')
    expect(anthropicErrorEnvelope(503, 'down').error.type).toBe('api_error')
  })

  it('knows the documented status of each error type', () => {
    expect(statusForAnthropicErrorType('rate_limit_error')).toBe(429)
    expect(statusForAnthropicErrorType('authentication_error')).toBe(401)
    expect(statusForAnthropicErrorType('unknown_error')).toBe(500)
    expect(statusForAnthropicErrorType(null)).toBe(500)
  })
})
