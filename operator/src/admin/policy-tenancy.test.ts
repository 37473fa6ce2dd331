/**
 * Spec rules on policy and guardrail bodies: a rate-limit policy created under JWT names its
 * workspace_id and organization_id; a partner guardrail check names its policyId.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { JwtVerifier } from '../identity/jwt.ts'
import { createHarness, ManualClock, type Harness } from './testing.ts'

const ISSUER = 'https://idp.example.test'
const AUDIENCE = 'gatehouse-admin'

let h: Harness
let jwks: Server
let privateKey: CryptoKey
let ws: string

async function jwtHeaders(): Promise<Record<string, string>> {
  const iat = Math.floor(h.clock.now.getTime() / 1000)
  const token = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: h.ownerId, iat, exp: iat + 600 }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(privateKey)
  return { authorization: `Bearer ${token}` }
}

beforeAll(async () => {
  const pair = await generateKeyPair('RS256')
  privateKey = pair.privateKey
  const body = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] })
  jwks = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(body))
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve))
  const clock = new ManualClock()
  const jwt = new JwtVerifier({ jwksUrl: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`, issuer: ISSUER, audience: AUDIENCE }, clock.read)
  h = await createHarness({ jwtVerifier: jwt, clock: clock.read })
  h.clock = clock
  ws = (await h.workspace('Tenancy')).id
})
afterAll(async () => {
  await h.close()
  await new Promise((resolve) => jwks.close(resolve))
})

const policy = { conditions: [{ key: 'workspace_id', value: 'x' }], group_by: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 60 }

describe('rate-limit policies under JWT', () => {
  it('refuses a body without organization_id or workspace_id, storing nothing', async () => {
    const headers = await jwtHeaders()
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...policy }, 'organization_id'],
      [{ ...policy, workspace_id: ws }, 'organization_id'],
      [{ ...policy, organization_id: h.orgId }, 'workspace_id'],
    ]
    for (const [body, param] of cases) {
      const response = await h.call('POST', '/v1/policies/rate-limits', null, body, headers)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    expect((await h.store.policies.list(h.orgId, 'rate_limits', {}, 0, 10)).total).toBe(0)
    const ok = await h.call('POST', '/v1/policies/rate-limits', null, { ...policy, workspace_id: ws, organization_id: h.orgId }, headers)
    expect(ok.statusCode, ok.body).toBe(200)
    expect((await h.call('POST', '/v1/policies/rate-limits', null, { ...policy, workspace_id: ws, organisation_id: h.orgId }, headers)).statusCode).toBe(200)
  })

  it('keeps both optional for API keys, whose key names its tenant', async () => {
    const response = await h.call('POST', '/v1/policies/rate-limits', h.ownerKey, { ...policy, workspace_id: ws })
    expect(response.statusCode, response.body).toBe(200)
  })
})

describe('partner guardrail checks', () => {
  it('refuse a missing policyId naming the field, and accept one given', async () => {
    const create = (parameters: Record<string, unknown>) => h.call('POST', '/v1/guardrails', h.ownerKey, { name: 'Partner', workspace_id: ws, checks: [{ id: 'panw-prisma-airs.intercept', parameters }] })
    const missing = await create({})
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error).toMatchObject({ code: 'AB01', param: 'checks[0].parameters.policyId' })
    expect(missing.json().error.message).toMatch(/policyId is required/)
    expect((await create({ policyId: '' })).statusCode).toBe(400)
    const ok = await create({ policyId: 'pol-7', endpoint: 'https://partner.example/v' })
    expect(ok.statusCode, ok.body).toBe(200)
  })
})
