import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GatewayError } from '../../core/errors.ts'
import { secretBag } from '../../core/secret.ts'
import { createAzureSigner, defaultEntraScope } from './azure.ts'
import type { SignableRequest } from './index.ts'

/** The token endpoints here listen on loopback, which only a provider allowed private networks may reach. */
const LOOPBACK = { allowPrivateNetwork: true }

function signable(): SignableRequest {
  return { method: 'POST', url: new URL('https://contoso.openai.azure.com/openai/v1/chat/completions'), headers: {}, body: undefined }
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  let text = ''
  for await (const chunk of request) text += chunk
  return new URLSearchParams(text)
}

describe('Azure signer', () => {
  let server: Server
  let authorityHost: string
  const seen: Array<{ path: string; form: URLSearchParams }> = []
  let answer: { status: number; body: unknown } = { status: 200, body: {} }

  beforeAll(async () => {
    server = createServer(async (request, response) => {
      seen.push({ path: request.url ?? '', form: await readForm(request) })
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body))
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    authorityHost = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => server.close())

  it('sends an api key as the api-key header', async () => {
    const request = signable()
    await createAzureSigner()(request, secretBag({ apiKey: 'azure-key-1' }), {}, LOOPBACK)
    expect(request.headers).toEqual({ 'api-key': 'azure-key-1' })
  })

  it('sends a ready Entra token as a bearer token', async () => {
    const request = signable()
    await createAzureSigner()(request, secretBag({ accessToken: 'entra-token' }), {}, LOOPBACK)
    expect(request.headers).toEqual({ authorization: 'Bearer entra-token' })
  })

  it('exchanges client credentials once, reuses the token, and refreshes it before expiry', async () => {
    seen.length = 0
    answer = { status: 200, body: { token_type: 'Bearer', expires_in: 3599, access_token: 'tok-1' } }
    let nowMs = 1_000_000
    const sign = createAzureSigner({ nowMs: () => nowMs, refreshMarginMs: 60_000 })
    const credentials = secretBag({ clientSecret: 's3cret' })
    const options = { tenantId: 'tenant-a', clientId: 'client-a', authorityHost }

    const first = signable()
    const second = signable()
    await Promise.all([sign(first, credentials, options, LOOPBACK), sign(second, credentials, options, LOOPBACK)])
    expect(first.headers.authorization).toBe('Bearer tok-1')
    expect(second.headers.authorization).toBe('Bearer tok-1')
    expect(seen).toHaveLength(1)
    expect(seen[0]!.path).toBe('/tenant-a/oauth2/v2.0/token')
    expect(Object.fromEntries(seen[0]!.form)).toEqual({ grant_type: 'client_credentials', client_id: 'client-a', client_secret: 's3cret', scope: defaultEntraScope })

    nowMs += 3599_000 - 61_000
    await sign(signable(), credentials, options, LOOPBACK)
    expect(seen).toHaveLength(1)

    answer = { status: 200, body: { expires_in: 3599, access_token: 'tok-2' } }
    nowMs += 2_000
    const refreshed = signable()
    await sign(refreshed, credentials, { ...options, entraScope: 'api://custom/.default' }, LOOPBACK)
    expect(refreshed.headers.authorization).toBe('Bearer tok-2')
    expect(seen[1]!.form.get('scope')).toBe('api://custom/.default')
  })

  it('a refused exchange is a 503 that names the OAuth error but no secret, and is not cached', async () => {
    seen.length = 0
    answer = { status: 401, body: { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' } }
    const sign = createAzureSigner()
    const credentials = secretBag({ tenantId: 'tenant-b', clientId: 'client-b', clientSecret: 'wrong-secret' })
    const failure = await sign(signable(), credentials, { authorityHost }, LOOPBACK).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(GatewayError)
    expect(failure).toMatchObject({ status: 503, headers: { 'retry-after': '5' } })
    expect((failure as Error).message).toContain('HTTP 401 (invalid_client)')
    expect((failure as Error).message).not.toContain('wrong-secret')
    await sign(signable(), credentials, { authorityHost }, LOOPBACK).catch(() => undefined)
    expect(seen).toHaveLength(2)
  })

  it('an unreachable endpoint or an answer without a token is a 503', async () => {
    const credentials = secretBag({ tenantId: 't', clientId: 'c', clientSecret: 's' })
    const closed = createServer()
    closed.listen(0, '127.0.0.1')
    await once(closed, 'listening')
    const closedHost = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`
    closed.close()
    await once(closed, 'close')
    await expect(createAzureSigner()(signable(), credentials, { authorityHost: closedHost }, LOOPBACK)).rejects.toThrow(/could not be reached/)
    answer = { status: 200, body: { token_type: 'Bearer' } }
    await expect(createAzureSigner()(signable(), credentials, { authorityHost }, LOOPBACK)).rejects.toThrow(/HTTP 200/)
  })

  it('without any usable credential it refuses with a 503', async () => {
    await expect(createAzureSigner()(signable(), secretBag({}), {}, LOOPBACK)).rejects.toMatchObject({ status: 503 })
  })
})
