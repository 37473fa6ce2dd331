import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportPKCS8, generateKeyPair, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { secretBag } from '../../core/secret.ts'
import { cloudPlatformScope, createGoogleOAuthSigner } from './google-oauth.ts'
import type { SignableRequest } from './index.ts'

/** The token endpoints here listen on loopback, which only a provider allowed private networks may reach. */
const LOOPBACK = { allowPrivateNetwork: true }

function signable(): SignableRequest {
  return { method: 'POST', url: new URL('https://us-central1-aiplatform.googleapis.com/v1/projects/p'), headers: {}, body: undefined }
}

describe('Google OAuth signer', () => {
  let server: Server
  let tokenUri: string
  let serviceAccountJson: string
  let publicKey: CryptoKeyLike
  const assertions: string[] = []
  let status = 200
  type CryptoKeyLike = Awaited<ReturnType<typeof generateKeyPair>>['publicKey']

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256', { extractable: true })
    publicKey = pair.publicKey
    server = createServer(async (request, response) => {
      let text = ''
      for await (const chunk of request) text += chunk
      const form = new URLSearchParams(text)
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
        response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"unsupported_grant_type"}')
        return
      }
      assertions.push(form.get('assertion') ?? '')
      if (status !== 200) {
        response.writeHead(status, { 'content-type': 'application/json' }).end('{"error":"invalid_grant","error_description":"Invalid JWT Signature."}')
        return
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `ya29.token-${assertions.length}`, expires_in: 3599, token_type: 'Bearer' }))
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    tokenUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`
    serviceAccountJson = JSON.stringify({
      type: 'service_account',
      project_id: 'demo-project',
      private_key_id: 'key-1',
      private_key: await exportPKCS8(pair.privateKey),
      client_email: 'gateway@demo-project.iam.gserviceaccount.com',
      token_uri: tokenUri,
    })
  })
  afterAll(() => server.close())

  it('passes a ready access token through', async () => {
    const request = signable()
    await createGoogleOAuthSigner()(request, secretBag({ accessToken: 'ya29.ready' }), {}, LOOPBACK)
    expect(request.headers.authorization).toBe('Bearer ya29.ready')
  })

  it('signs an RS256 assertion, exchanges it at token_uri and caches the token until shortly before expiry', async () => {
    assertions.length = 0
    status = 200
    let nowMs = Date.UTC(2026, 0, 1)
    const sign = createGoogleOAuthSigner({ nowMs: () => nowMs, refreshMarginMs: 300_000 })
    const credentials = secretBag({ serviceAccountJson })

    const requests = [signable(), signable(), signable()]
    await Promise.all(requests.map((request) => sign(request, credentials, {}, LOOPBACK)))
    expect(requests.map((request) => request.headers.authorization)).toEqual(['Bearer ya29.token-1', 'Bearer ya29.token-1', 'Bearer ya29.token-1'])
    expect(assertions).toHaveLength(1)

    const { payload, protectedHeader } = await jwtVerify(assertions[0]!, publicKey, { audience: tokenUri, currentDate: new Date(nowMs) })
    expect(protectedHeader).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'key-1' })
    expect(payload).toEqual({ iss: 'gateway@demo-project.iam.gserviceaccount.com', aud: tokenUri, scope: cloudPlatformScope, iat: nowMs / 1000, exp: nowMs / 1000 + 3600 })

    nowMs += 3599_000 - 301_000
    await sign(signable(), credentials, {}, LOOPBACK)
    expect(assertions).toHaveLength(1)
    nowMs += 2_000
    const refreshed = signable()
    await sign(refreshed, credentials, {}, LOOPBACK)
    expect(refreshed.headers.authorization).toBe('Bearer ya29.token-2')
  })

  it('a rejected assertion is a 503 without key material, and is retried on the next request', async () => {
    assertions.length = 0
    status = 400
    const sign = createGoogleOAuthSigner()
    const credentials = secretBag({ serviceAccountJson })
    const failure = (await sign(signable(), credentials, {}, LOOPBACK).catch((error: unknown) => error)) as Error
    expect(failure).toMatchObject({ status: 503, message: expect.stringContaining('HTTP 400 (invalid_grant)') })
    expect(failure.message).not.toContain('PRIVATE KEY')
    await sign(signable(), credentials, {}, LOOPBACK).catch(() => undefined)
    expect(assertions).toHaveLength(2)
  })

  it('refuses malformed credentials with a 503 that says what is wrong', async () => {
    const sign = createGoogleOAuthSigner()
    await expect(sign(signable(), secretBag({ serviceAccountJson: 'not json' }), {}, LOOPBACK)).rejects.toThrow(/not JSON/)
    await expect(sign(signable(), secretBag({ serviceAccountJson: '{"client_email":"a"}' }), {}, LOOPBACK)).rejects.toThrow(/private_key is missing/)
    await expect(sign(signable(), secretBag({ serviceAccountJson: '{"client_email":"a","private_key":"nope"}' }), {}, LOOPBACK)).rejects.toThrow(/PKCS#8/)
    await expect(sign(signable(), secretBag({}), {}, LOOPBACK)).rejects.toMatchObject({ status: 503 })
  })
})
