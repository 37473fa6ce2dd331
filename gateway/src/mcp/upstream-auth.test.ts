import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GatewayError } from '../core/errors.ts'
import { McpUpstreamAuth } from './upstream-auth.ts'

/** A loopback OAuth token endpoint: counts exchanges, checks the client, issues short tokens. */
let tokenServer: Server
let tokenUrl: string
let exchanges = 0
const forms: URLSearchParams[] = []

beforeAll(async () => {
  tokenServer = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => (body += chunk.toString()))
    request.on('end', () => {
      const form = new URLSearchParams(body)
      forms.push(form)
      if (form.get('client_secret') !== 'right') {
        response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_client' }))
        return
      }
      exchanges++
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `token-${exchanges}`, expires_in: 3600 }))
    })
  })
  await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve))
  tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`
})

afterAll(async () => {
  await new Promise((resolve) => tokenServer.close(resolve))
})

describe('McpUpstreamAuth', () => {
  it('sets static headers as given, and nothing for none', async () => {
    const auth = new McpUpstreamAuth()
    expect(await auth.headers({ type: 'headers', headers: { 'x-api-key': 'k' } }, false)).toEqual({ 'x-api-key': 'k' })
    expect(await auth.headers({ type: 'none' }, false)).toEqual({})
  })

  it('exchanges client credentials once and reuses the token until it nears expiry', async () => {
    let nowMs = 1_000_000
    const auth = new McpUpstreamAuth({ nowMs: () => nowMs })
    const oauth = { type: 'oauth_client_credentials' as const, tokenUrl, clientId: 'gatehouse', clientSecret: 'right', scope: 'tools', audience: null }
    const before = exchanges
    const [a, b] = await Promise.all([auth.headers(oauth, true), auth.headers(oauth, true)])
    expect(a).toEqual({ authorization: `Bearer token-${before + 1}` })
    expect(b).toEqual(a)
    expect(exchanges).toBe(before + 1)
    expect(Object.fromEntries(forms.at(-1)!)).toEqual({ grant_type: 'client_credentials', client_id: 'gatehouse', client_secret: 'right', scope: 'tools' })
    nowMs += 3_600_000
    expect(await auth.headers(oauth, true)).toEqual({ authorization: `Bearer token-${before + 2}` })
  })

  it('answers a refused exchange as the upstream being unavailable (503), naming the OAuth error, never the secret', async () => {
    const auth = new McpUpstreamAuth()
    const failure = await auth.headers({ type: 'oauth_client_credentials', tokenUrl, clientId: 'gatehouse', clientSecret: 'wrong-secret', scope: null, audience: null }, true).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(GatewayError)
    expect((failure as GatewayError).status).toBe(503)
    expect((failure as GatewayError).message).toContain('invalid_client')
    expect((failure as GatewayError).message).not.toContain('wrong-secret')
  })

  it('reaches a loopback token endpoint only where private networks are allowed', async () => {
    const auth = new McpUpstreamAuth()
    const failure = await auth.headers({ type: 'oauth_client_credentials', tokenUrl, clientId: 'gatehouse', clientSecret: 'right', scope: null, audience: null }, false).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(GatewayError)
    expect((failure as GatewayError).status).toBe(503)
  })
})
