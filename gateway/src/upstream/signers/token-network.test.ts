/**
 * Token endpoints are held to the provider's network setting: a provider that may not reach
 * private networks cannot have its Entra ID token fetched from a private address either. Loopback
 * stands for every private address here (the SSRF policy treats it as not public); nothing leaves
 * the machine.
 *
 * Break tried: the token fetch always using `ssrfSafeDispatcher(true)` (access-token.ts, as before
 * this test) -> the public-only provider reached the loopback token endpoint and the first test failed.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { secretBag } from '../../core/secret.ts'
import { createAzureSigner } from './azure.ts'
import type { SignableRequest } from './index.ts'

let server: Server
let authorityHost: string
let tokenRequests = 0

beforeAll(async () => {
  server = createServer((request, response) => {
    tokenRequests += 1
    request.resume()
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ access_token: 'entra-token-from-loopback', expires_in: 3600, token_type: 'Bearer' }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  authorityHost = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

function signable(): SignableRequest {
  return { method: 'POST', url: new URL('https://example.openai.azure.com/openai/deployments/d/chat/completions'), headers: {}, body: undefined }
}

const credentials = secretBag({ tenantId: 'tenant', clientId: 'client', clientSecret: 'client-secret-not-logged' })

describe('token endpoints under the provider network setting', () => {
  it('refuses a private token endpoint for a provider limited to public networks, without connecting', async () => {
    const before = tokenRequests
    const refused = await createAzureSigner()(signable(), credentials, { authorityHost }, { allowPrivateNetwork: false }).catch((error: unknown) => error)
    expect(refused).toMatchObject({ code: 'upstream_unavailable', status: 503, headers: { 'retry-after': '5' } })
    expect(String((refused as Error).message)).not.toContain('client-secret-not-logged')
    expect(tokenRequests).toBe(before)
  })

  it('assumes public networks only when the caller names no setting', async () => {
    const before = tokenRequests
    await expect(createAzureSigner()(signable(), credentials, { authorityHost })).rejects.toMatchObject({ code: 'upstream_unavailable' })
    expect(tokenRequests).toBe(before)
  })

  it('reaches it for a provider allowed private networks', async () => {
    const request = signable()
    await createAzureSigner()(request, credentials, { authorityHost }, { allowPrivateNetwork: true })
    expect(request.headers.authorization).toBe('Bearer entra-token-from-loopback')
    expect(tokenRequests).toBeGreaterThan(0)
  })
})
