import { describe, expect, it } from 'vitest'
import { fixture } from '../shared/testing.ts'
import { google } from './index.ts'

describe('Google error parsing', () => {
  it('RESOURCE_EXHAUSTED is a retryable upstream fault with the RetryInfo delay', () => {
    expect(google.parseError(429, {}, fixture(import.meta.url, 'error-resource-exhausted.json'))).toEqual({
      status: 429,
      message: 'You exceeded your current quota, please check your plan and billing details.',
      providerCode: 'RESOURCE_EXHAUSTED',
      param: null,
      fault: 'upstream',
      retryable: true,
      retryAfterMs: 31_000,
    })
  })

  it('a retry-after header wins over the body hint', () => {
    expect(google.parseError(429, { 'retry-after': '2' }, fixture(import.meta.url, 'error-resource-exhausted.json')).retryAfterMs).toBe(2000)
  })

  it('INVALID_ARGUMENT is a client fault, not retried', () => {
    expect(google.parseError(400, {}, fixture(import.meta.url, 'error-invalid-argument.json'))).toMatchObject({ fault: 'client', retryable: false, providerCode: 'INVALID_ARGUMENT' })
  })

  it('reads the array-wrapped form and survives bodies of other shapes', () => {
    expect(google.parseError(503, {}, [{ error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } }])).toMatchObject({ message: 'overloaded', retryable: true })
    expect(google.parseError(502, {}, '<html>bad gateway</html>')).toMatchObject({ message: '<html>bad gateway</html>', providerCode: null, retryable: true })
  })
})
