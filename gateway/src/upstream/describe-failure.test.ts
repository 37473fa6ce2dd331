import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { fetch } from 'undici'
import { describeUpstreamFailure } from './describe-failure.ts'

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('describeUpstreamFailure', () => {
  it('names a refused connection with provider, host (never the path or key) and trace id', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1/chat/completions?key=sk-secret`
    const error = await fetch(url).catch((caught: unknown) => caught)
    const described = describeUpstreamFailure(error, { provider: 'openai', url, traceId: 'trace-1' })
    expect(described).toEqual({ provider: 'openai', upstreamHost: expect.stringMatching(/^127\.0\.0\.1:\d+$/), cause: 'connection_refused', code: 'ECONNREFUSED', traceId: 'trace-1' })
    expect(JSON.stringify(described)).not.toContain('sk-secret')
  })

  it('names a connection reset when the server hangs up', async () => {
    const server = createServer((socket) => socket.destroy())
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    try {
      const error = await fetch(`http://127.0.0.1:${port}/`).catch((caught: unknown) => caught)
      expect(describeUpstreamFailure(error, { provider: 'p', url: `http://127.0.0.1:${port}/`, traceId: 't' }).cause).toMatch(/connection_reset|other/)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it.each([
    [{ code: 'ENOTFOUND' }, 'dns'],
    [{ cause: { code: 'UND_ERR_CONNECT_TIMEOUT' } }, 'timeout'],
    [{ cause: { code: 'ERR_TLS_CERT_ALTNAME_INVALID' } }, 'tls'],
    [{ cause: { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' } }, 'tls'],
    [Object.assign(new Error('t'), { name: 'TimeoutError' }), 'timeout'],
    [new Error('weird'), 'other'],
  ])('classifies %o as %s', (error, cause) => {
    expect(describeUpstreamFailure(error, { provider: 'p', url: 'https://api.example.com/v1', traceId: 't' }).cause).toBe(cause)
  })

  it('says when the SSRF-safe dispatcher refused the address', () => {
    expect(describeUpstreamFailure(new Error('blocked'), { provider: 'p', url: 'http://10.0.0.1/', traceId: 't', blocked: true }).cause).toBe('blocked_address')
  })
})
