/** JWT authentication against a JWKS served on loopback: claims, algorithms, sessions, outages, audit. */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose'
import { createHarness, ManualClock, type Harness } from '../admin/testing.ts'
import { JwksCache } from './jwks-cache.ts'
import { JwtVerifier } from './jwt.ts'

const ISSUER = 'https://idp.example.test'
const AUDIENCE = 'gatehouse-admin'

let h: Harness
let server: Server
let jwksUrl: string
let privateKey: CryptoKey
let jwksStatus = 200
let jwksFetches = 0
let publicJwks: { keys: unknown[] }

function nowSeconds(): number {
  return Math.floor(h.clock.now.getTime() / 1000)
}

async function token(claims: JWTPayload, options: { omit?: string[]; key?: CryptoKey | Uint8Array; alg?: string; kid?: string } = {}): Promise<string> {
  const body: JWTPayload = { iss: ISSUER, aud: AUDIENCE, iat: nowSeconds(), exp: nowSeconds() + 600, ...claims }
  for (const name of options.omit ?? []) delete body[name]
  return new SignJWT(body).setProtectedHeader({ alg: options.alg ?? 'RS256', kid: options.kid ?? 'k1' }).sign(options.key ?? privateKey)
}

function bearer(jwt: string): Record<string, string> {
  return { authorization: `Bearer ${jwt}` }
}

beforeAll(async () => {
  const pair = await generateKeyPair('RS256')
  privateKey = pair.privateKey
  publicJwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] }
  server = createServer((_request, response) => {
    jwksFetches += 1
    response.writeHead(jwksStatus, { 'content-type': 'application/json' }).end(jwksStatus === 200 ? JSON.stringify(publicJwks) : '{}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`
  const clock = new ManualClock()
  const verifier = new JwtVerifier({ jwksUrl, issuer: ISSUER, audience: AUDIENCE }, clock.read)
  h = await createHarness({ jwtVerifier: verifier, clock: clock.read })
  // The harness made its own clock; drive the verifier's and the app's with the same one.
  h.clock = clock
})
afterAll(async () => {
  await h.close()
  await new Promise((resolve) => server.close(resolve))
})

describe('JWT authentication', () => {
  it('accepts a valid token for a user and maps sub to the user', async () => {
    const response = await h.call('GET', '/v1/admin/workspaces', null, undefined, bearer(await token({ sub: h.ownerId })))
    expect(response.statusCode).toBe(200)
  })

  it('links a first sign-in by email, confines a workspace claim and intersects scopes', async () => {
    const ws = (await h.workspace('Jwt WS')).id
    const other = (await h.workspace('Jwt Other')).id
    const userId = await h.user('jwt-user@example.com', 'member', { id: ws, role: 'manager' })
    const jwt = await token({ sub: 'idp|42', email: 'jwt-user@example.com', workspace_id: ws })
    expect((await h.call('GET', `/v1/admin/workspaces/${ws}`, null, undefined, bearer(jwt))).statusCode).toBe(200)
    expect((await h.store.users.get(h.orgId, userId))!.externalSubject).toBe('idp|42')
    expect((await h.call('GET', `/v1/admin/workspaces/${other}`, null, undefined, bearer(jwt))).statusCode).toBe(404)
    expect((await h.call('POST', '/v1/admin/workspaces', null, { name: 'nope' }, bearer(jwt))).statusCode).toBe(403)
    // A manager may create workspace keys in its workspace, within its own scopes.
    const created = await h.call('POST', '/v1/api-keys/workspace/service', null, { name: 'from jwt', scopes: ['completions.write'] }, bearer(jwt))
    expect(created.statusCode).toBe(200)
    const narrow = await token({ sub: 'idp|42', scope: 'workspaces.read' })
    expect((await h.call('POST', '/v1/api-keys/workspace/service', null, { name: 'x', workspace_id: ws, scopes: ['completions.write'] }, bearer(narrow))).statusCode).toBe(403)
    const ownerNarrow = await token({ sub: h.ownerId, scope: 'workspaces.list' })
    expect((await h.call('POST', '/v1/admin/workspaces', null, { name: 'nope' }, bearer(ownerNarrow))).statusCode).toBe(403)
  })

  it('accepts an invite on first sign-in', async () => {
    const ws = (await h.workspace('Invite WS')).id
    await h.call('POST', '/v1/admin/users/invites', h.ownerKey, { email: 'invitee@example.com', role: 'member', workspaces: [{ id: ws, role: 'member' }] })
    const jwt = await token({ sub: 'idp|invitee', email: 'invitee@example.com' })
    expect((await h.call('GET', `/v1/admin/workspaces/${ws}`, null, undefined, bearer(jwt))).statusCode).toBe(200)
    expect((await h.call('GET', '/v1/admin/users/invites?status=accepted', h.ownerKey)).json().total).toBe(1)
  })

  it('refuses tokens without exp, iss, aud or iat, with the wrong issuer or audience, expired, or for unknown users', async () => {
    const cases = [
      await token({ sub: h.ownerId }, { omit: ['exp'] }),
      await token({ sub: h.ownerId }, { omit: ['iss'] }),
      await token({ sub: h.ownerId }, { omit: ['aud'] }),
      await token({ sub: h.ownerId }, { omit: ['iat'] }),
      await token({ sub: h.ownerId, iss: 'https://evil.example' }),
      await token({ sub: h.ownerId, aud: 'someone-else' }),
      await token({ sub: h.ownerId, exp: nowSeconds() - 120 }),
      await token({ sub: 'nobody' }),
      await token({ sub: h.ownerId, scopes: 'not-an-array' }),
    ]
    for (const jwt of cases) {
      const response = await h.call('GET', '/v1/admin/workspaces', null, undefined, bearer(jwt))
      expect(response.statusCode).toBe(401)
      expect(response.json().error.code).toBe('AB05')
      expect(response.body).not.toContain(jwt)
    }
  })

  it('accepts asymmetric algorithms only (no HS256 with the public key, no alg none)', async () => {
    const hmacKey = new TextEncoder().encode(JSON.stringify(publicJwks.keys[0]))
    const hs256 = await token({ sub: h.ownerId }, { alg: 'HS256', key: hmacKey })
    expect((await h.call('GET', '/v1/admin/workspaces', null, undefined, bearer(hs256))).statusCode).toBe(401)
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')
    const payload = Buffer.from(JSON.stringify({ sub: h.ownerId, iss: ISSUER, aud: AUDIENCE, iat: nowSeconds(), exp: nowSeconds() + 600 })).toString('base64url')
    expect((await h.call('GET', '/v1/admin/workspaces', null, undefined, bearer(`${header}.${payload}.`))).statusCode).toBe(401)
    const other = await generateKeyPair('ES256')
    const foreign = await token({ sub: h.ownerId }, { alg: 'ES256', key: other.privateKey, kid: 'k1' })
    expect((await h.call('GET', '/v1/admin/workspaces', null, undefined, bearer(foreign))).statusCode).toBe(401)
  })

  it('rejects sessions older than max_session_ttl (auth_time, else iat)', async () => {
    expect((await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { session_settings: { max_session_ttl: 900 } })).statusCode).toBe(200)
    const fresh = await token({ sub: h.ownerId, iat: nowSeconds() - 800 })
    expect((await h.call('GET', '/v1/admin/workspaces', null, undefined, bearer(fresh))).statusCode).toBe(200)
    const old = await token({ sub: h.ownerId, iat: nowSeconds() - 2000 })
    const refused = await h.call('GET', '/v1/admin/workspaces', null, undefined, bearer(old))
    expect(refused.statusCode).toBe(401)
    expect(refused.json().error.message).toContain('max_session_ttl')
    const oldSession = await token({ sub: h.ownerId, auth_time: nowSeconds() - 5000 })
    expect((await h.call('GET', '/v1/admin/workspaces', null, undefined, bearer(oldSession))).statusCode).toBe(401)
    await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { session_settings: { max_session_ttl: 86_400 } })
  })

  it('records JWT failures in the audit log without the token', async () => {
    const before = (await h.store.audit.list(h.orgId, { action: 'auth.jwt_failed' }, 0, 1)).total
    const jwt = await token({ sub: h.ownerId, aud: 'wrong' })
    await h.call('GET', '/v1/admin/workspaces', null, undefined, bearer(jwt))
    const after = await h.store.audit.list(h.orgId, { action: 'auth.jwt_failed' }, 0, 100)
    expect(after.total).toBe(before + 1)
    expect(after.data[0]).toMatchObject({ actorType: 'anonymous', responseStatusCode: 401, uri: '/v1/admin/workspaces' })
    expect(JSON.stringify(after.data)).not.toContain(jwt)
  })
})

describe('JWKS cache', () => {
  it('serves the last good key set through an outage within the stale-if-error window, then fails closed with 503', async () => {
    const clock = new ManualClock()
    const cache = new JwksCache({ url: jwksUrl, clock: clock.read, refreshMs: 5 * 60_000, staleIfErrorMs: 60 * 60_000, cooldownMs: 30_000 })
    const verifier = new JwtVerifier({ jwksUrl, issuer: ISSUER, audience: AUDIENCE }, clock.read, cache)
    const sign = async () => new SignJWT({ sub: h.ownerId, iss: ISSUER, aud: AUDIENCE, iat: Math.floor(clock.now.getTime() / 1000), exp: Math.floor(clock.now.getTime() / 1000) + 600 })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(privateKey)
    await expect(verifier.verify(await sign(), h.store, h.orgId)).resolves.toBeTruthy()
    jwksStatus = 503
    try {
      clock.advance(10 * 60_000)
      await expect(verifier.verify(await sign(), h.store, h.orgId)).resolves.toBeTruthy()
      clock.advance(60 * 60_000)
      await expect(verifier.verify(await sign(), h.store, h.orgId)).rejects.toMatchObject({ status: 503 })
    } finally {
      jwksStatus = 200
    }
  })

  it('refetches on an unknown kid at most once per cooldown', async () => {
    const clock = new ManualClock()
    const cache = new JwksCache({ url: jwksUrl, clock: clock.read, cooldownMs: 30_000 })
    const verifier = new JwtVerifier({ jwksUrl, issuer: ISSUER, audience: AUDIENCE }, clock.read, cache)
    await cache.refresh()
    const before = jwksFetches
    const unknownKid = await new SignJWT({ sub: h.ownerId, iss: ISSUER, aud: AUDIENCE, iat: Math.floor(clock.now.getTime() / 1000), exp: Math.floor(clock.now.getTime() / 1000) + 600 })
      .setProtectedHeader({ alg: 'RS256', kid: 'unknown' }).sign(privateKey)
    for (let i = 0; i < 5; i += 1) await expect(verifier.verify(unknownKid, h.store, h.orgId)).rejects.toMatchObject({ status: 401 })
    expect(jwksFetches - before).toBe(0)
    clock.advance(31_000)
    await expect(verifier.verify(unknownKid, h.store, h.orgId)).rejects.toMatchObject({ status: 401 })
    expect(jwksFetches - before).toBe(1)
  })
})
