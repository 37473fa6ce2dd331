import { describe, expect, it } from 'vitest'
import { forwardedRequestHeaders, relayedResponseHeaders, safeUpstreamPath } from './passthrough.ts'

describe('passthrough header allowlists', () => {
  const client = {
    authorization: 'Bearer gh_ws_caller_key',
    'x-gateway-api-key': 'gh_ws_caller_key',
    'x-gateway-provider': '@openai-main',
    'openai-beta': 'assistants=v2',
    'openai-organization': 'org-of-the-caller',
    accept: 'application/json',
    'accept-encoding': 'gzip',
    'content-type': 'multipart/form-data; boundary=x',
    'content-length': '1234',
    cookie: 'session=1',
    'idempotency-key': 'idem-1',
  }

  it('forwards only what the provider API reads, never the caller’s credentials or gateway headers', () => {
    expect(forwardedRequestHeaders(client, false)).toEqual({ accept: 'application/json', 'openai-beta': 'assistants=v2', 'idempotency-key': 'idem-1' })
  })

  it('describes a raw (streamed) body with the caller’s content type and length', () => {
    expect(forwardedRequestHeaders(client, true)).toMatchObject({ 'content-type': 'multipart/form-data; boundary=x', 'content-length': '1234' })
  })

  it('relays content and rate-limit headers, not the provider’s cookies or organisation', () => {
    const upstream = {
      'content-type': 'audio/mpeg',
      'content-length': '42',
      'content-disposition': 'attachment',
      'x-request-id': 'req_1',
      'x-ratelimit-remaining-requests': '9',
      'openai-organization': 'org-of-the-credential',
      'set-cookie': '__cf_bm=1',
      'transfer-encoding': 'chunked',
    }
    expect(relayedResponseHeaders(upstream)).toEqual({
      'content-type': 'audio/mpeg',
      'content-length': '42',
      'content-disposition': 'attachment',
      'x-request-id': 'req_1',
      'x-ratelimit-remaining-requests': '9',
    })
    expect(relayedResponseHeaders(upstream, false)).not.toHaveProperty('content-length')
  })
})

describe('safeUpstreamPath', () => {
  it.each([
    ['/files/%2e%2e/content', 'invalid_parameter'],
    ['/files/%2E%2E/content', 'invalid_parameter'],
    ['/files/../content', 'invalid_parameter'],
    ['/files/./content', 'invalid_parameter'],
    ['/files/.%2e/content', 'invalid_parameter'],
    ['/files/a%2fb/content', 'invalid_parameter'],
    ['/files/a%5cb/content', 'invalid_parameter'],
    ['/files/%zz/content', 'invalid_parameter'],
    ['/vector_stores/', 'route_not_found'],
    ['/vector_stores//files', 'route_not_found'],
  ])('refuses %s (%s)', (path, code) => {
    expect(() => safeUpstreamPath(path)).toThrow(expect.objectContaining({ code }))
  })

  it('passes ordinary paths and leaves the query alone', () => {
    expect(safeUpstreamPath('/files/file-abc/content?x=../y')).toBe('/files/file-abc/content?x=../y')
    expect(safeUpstreamPath('/vector_stores/vs_1/files/file%2Dx')).toBe('/vector_stores/vs_1/files/file%2Dx')
  })
})
