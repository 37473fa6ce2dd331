/** Data-plane JWTs against a JWKS on loopback, with no control plane anywhere: claims, scopes, workspaces, outages. */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RuntimeHolder } from '../runtime/holder.ts'
import type { RuntimeConfig } from '../runtime/compile.ts'
import { SNAPSHOT_SCHEMA_VERSION } from '../snapshot/index.ts'
import { createSsrfSafeDispatcher } from '../upstream/ssrf.ts'
import { DataPlaneJwt, dataPlaneJwtOptionsFromEnv } from './authenticate-jwt.ts'

const ISSUER = 'https://idp.example.test'
const AUDIENCE = 'gatehouse'
let server: Server
let jwksUrl: string
let privateKey: CryptoKey
let jwksUp = true
let runtime: RuntimeConfig
let jwt: DataPlaneJwt
const holder = new RuntimeHolder()
const now = Date.now()

async function token(claims: JWTPayload, alg = 'RS256', key: CryptoKey | Uint8Array = privateKey): Promise<string> {
  const seconds = Math.floor(now / 1000)
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: seconds, exp: seconds + 600, sub: 'user-1', ...claims }).setProtectedHeader({ alg, kid: 'k1' }).sign(key)
}

beforeAll(async () => {
  const pair = await generateKeyPair('RS256')
  privateKey = pair.privateKey
  const jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] }
  server = createServer((_request, response) => {
    if (jwksUp) response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks))
    else response.writeHead(503).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`
  const applied = holder.apply({
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    generation: 1,
    producedAt: new Date(now).toISOString(),
    producedBy: { component: 'test', version: '0' },
    organizationId: 'org',
    workspaces: [
      { id: 'ws-1', slug: 'search', name: 'Search', status: 'active', defaultConfigId: 'cfg-1' },
      { id: 'ws-2', slug: 'old', name: 'Old', status: 'archived' },
    ],
    apiKeys: [],
    providers: [],
    configs: [{ id: 'cfg-1', slug: 'main', workspaceId: 'ws-1', config: { provider: '@any', retry: { attempts: 2 } } }],
  })
  if (!applied.ok) throw new Error(JSON.stringify(applied.problems))
  runtime = holder.current!
  jwt = new DataPlaneJwt(dataPlaneJwtOptionsFromEnv({ GATEHOUSE_JWT_JWKS_URL: jwksUrl, GATEHOUSE_JWT_ISSUER: ISSUER, GATEHOUSE_JWT_AUDIENCE: AUDIENCE })!)
})
afterAll(async () => {
  await holder.close()
  await new Promise((resolve) => server.close(resolve))
})

describe('data-plane JWT', () => {
  it('maps a valid token to a workspace principal the pipeline takes like a workspace key', async () => {
    const principal = await jwt.authenticate(runtime, await token({ workspace_id: 'search', scope: 'completions.write logs.read' }), now)
    expect(principal).toMatchObject({ kind: 'jwt', id: 'user-1', userId: 'user-1', workspaceId: 'ws-1', scopes: ['completions.write', 'logs.read'], key: null })
    // The workspace default config applies, as for the workspace's keys.
    expect(principal.defaultConfig?.record.id).toBe('cfg-1')
    // By id too, and without scopes (a member's token).
    expect((await jwt.authenticate(runtime, await token({ workspace_id: 'ws-1' }), now)).scopes).toEqual(['completions.write'])
  })

  it.each([
    ['scopes without completions.write', { workspace_id: 'search', scopes: ['logs.read'] }, 'insufficient_scope', 403],
    ['no workspace', {}, 'forbidden', 403],
    ['an unknown workspace', { workspace_id: 'nope' }, 'invalid_token', 401],
    ['an archived workspace', { workspace_id: 'old' }, 'forbidden', 403],
    ['a wrong audience', { workspace_id: 'search', aud: 'other' }, 'invalid_token', 401],
    ['an expired token', { workspace_id: 'search', exp: Math.floor(now / 1000) - 3600 }, 'invalid_token', 401],
    ['scopes of the wrong type', { workspace_id: 'search', scopes: 'completions.write' }, 'invalid_token', 401],
  ])('refuses %s', async (_name, claims, code, status) => {
    await expect(jwt.authenticate(runtime, await token(claims), now)).rejects.toMatchObject({ code, status })
  })

  it('refuses a deactivated user\'s token once a snapshot lists their subject, and accepts it again after', async () => {
    const deactivated = new RuntimeHolder()
    const applied = deactivated.apply({ ...runtime.snapshot, generation: 2, revokedSubjects: ['user-1'] })
    if (!applied.ok) throw new Error(JSON.stringify(applied.problems))
    try {
      const valid = await token({ workspace_id: 'search' })
      await expect(jwt.authenticate(deactivated.current!, valid, now)).rejects.toMatchObject({ code: 'invalid_token', status: 401, message: expect.stringMatching(/deactivated/) })
      expect((await jwt.authenticate(deactivated.current!, await token({ workspace_id: 'search', sub: 'user-2' }), now)).userId).toBe('user-2')
      expect((await jwt.authenticate(runtime, valid, now)).userId).toBe('user-1')
    } finally {
      await deactivated.close()
    }
  })

  it('refuses symmetric algorithms', async () => {
    const hmac = await token({ workspace_id: 'search' }, 'HS256', new TextEncoder().encode('a-shared-secret-of-32-bytes-long!'))
    await expect(jwt.authenticate(runtime, hmac, now)).rejects.toMatchObject({ code: 'invalid_token', status: 401 })
  })

  it('answers 503 with Retry-After when the key set cannot be had, never 401', async () => {
    jwksUp = false
    const cold = new DataPlaneJwt({ jwksUrl, issuer: ISSUER, audience: AUDIENCE })
    const error = await cold.authenticate(runtime, await token({ workspace_id: 'search' }), now).catch((caught: unknown) => caught)
    jwksUp = true
    expect(error).toMatchObject({ code: 'dependency_unavailable', status: 503, headers: { 'retry-after': '5' } })
  })

  it('fetches the key set through the SSRF-checked dispatcher', async () => {
    const dispatcher = createSsrfSafeDispatcher({ allowPrivateNetwork: false })
    const guarded = new DataPlaneJwt({ jwksUrl, issuer: ISSUER, audience: AUDIENCE }, { dispatcher })
    await expect(guarded.authenticate(runtime, await token({ workspace_id: 'search' }), now)).rejects.toMatchObject({ code: 'dependency_unavailable' })
    await dispatcher.close()
  })

  it('is off without its boot settings, and refuses half of them', () => {
    expect(dataPlaneJwtOptionsFromEnv({})).toBeNull()
    expect(() => dataPlaneJwtOptionsFromEnv({ GATEHOUSE_JWT_JWKS_URL: jwksUrl })).toThrow(/GATEHOUSE_JWT_ISSUER/)
  })
})
