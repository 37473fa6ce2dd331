import { describe, expect, it } from 'vitest'
import { fixture } from '../shared/testing.ts'
import { parseBedrockError } from './errors.ts'

describe('bedrock errors', () => {
  it('reads the exception name from x-amzn-errortype and the message from the body', () => {
    expect(parseBedrockError(429, { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' }, fixture(import.meta.url, 'error-throttling.json'))).toEqual({
      status: 429,
      message: 'Too many requests, please wait before trying again.',
      providerCode: 'ThrottlingException',
      param: null,
      fault: 'upstream',
      retryable: true,
      retryAfterMs: null,
    })
  })

  it('marks ValidationException as a client fault', () => {
    const info = parseBedrockError(400, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' }, fixture(import.meta.url, 'error-validation.json'))
    expect(info).toMatchObject({ status: 400, providerCode: 'ValidationException', fault: 'client', retryable: false })
    expect(info.message).toMatch(/roles must alternate/)
  })

  it('retries ModelNotReadyException and ServiceUnavailableException', () => {
    expect(parseBedrockError(429, { 'x-amzn-errortype': 'ModelNotReadyException' }, { message: 'loading' })).toMatchObject({ retryable: true, providerCode: 'ModelNotReadyException' })
    expect(parseBedrockError(503, { 'x-amzn-errortype': 'ServiceUnavailableException:http://x/' }, { message: 'later' })).toMatchObject({ retryable: true, fault: 'upstream' })
    expect(parseBedrockError(408, {}, { message: 'slow', __type: 'com.amazon.bedrock#ModelTimeoutException' })).toMatchObject({ retryable: true, providerCode: 'ModelTimeoutException' })
  })

  it('does not retry a model error, and copes with odd bodies', () => {
    expect(parseBedrockError(424, { 'x-amzn-errortype': 'ModelErrorException' }, { message: 'model failed' })).toMatchObject({ retryable: false, fault: 'client' })
    expect(parseBedrockError(403, {}, { Message: 'User is not authorized' })).toMatchObject({ message: 'User is not authorized', providerCode: null, retryable: false })
    expect(parseBedrockError(500, { 'retry-after': '2' }, 'oops')).toMatchObject({ message: 'oops', retryAfterMs: 2000, retryable: true })
  })
})
