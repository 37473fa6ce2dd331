/**
 * Deprovisioning for real: a control plane process on PostgreSQL and a gateway process attached to
 * it over the snapshot stream, an IdP provisioning through SCIM as Okta and Entra ID send it.
 *
 *   - an Okta-provisioned user in a group mapped to a workspace holds a user key and a JWT; both
 *     call a model through the gateway;
 *   - Okta's `{"op":"replace","value":{"active":false}}` makes the gateway refuse both, within 1 s
 *     of the SCIM answer (measured and printed, as the cluster propagation suite does);
 *   - Entra's `{"op":"Replace","path":"active","value":"True"}` restores both, memberships intact;
 *   - DELETE removes the user: the key is gone and the JWT stays refused.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { testBackends, TEST_ENCRYPTION_KEY } from '../../operator/src/store/testing.ts'
import type { Store } from '../../operator/src/store/index.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { startOidcSimulator, type OidcSimulator } from '../simulators/oidc.ts'
import { pollUntil, startGatehouse, type GatehouseProcess } from '../helpers/processes.ts'

const backends = await testBackends()
const postgres = backends.find((backend) => backend.name === 'postgres')!

const PEPPER = randomBytes(32).toString('base64url')
const GATEWAY_TOKEN = randomBytes(24).toString('base64url')
const ADMIN_KEY = generateApiKey('admin')
const AUDIENCE = 'gatehouse-gateway'
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'

let directory: string
let simulator: Simulator
let idp: OidcSimulator
let store: Store
let dispose: () => Promise<void>
let controlPlane: GatehouseProcess
let controlPlaneUrl: string
let gateway: GatehouseProcess
let gatewayUrl: string

async function admin(path: string, method: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${controlPlaneUrl}${path}`, {
    method,
    headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }
}

let scimBase: string
let scimToken: string

/** A SCIM call as the IdP makes it, through the gateway (which forwards it to the control plane). */
async function scim(method: string, path: string, body: unknown, userAgent: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${gatewayUrl}${scimBase}${path}`, {
    method,
    headers: { authorization: `Bearer ${scimToken}`, accept: 'application/scim+json', 'content-type': 'application/scim+json; charset=utf-8', 'user-agent': userAgent },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }
}

async function chat(credential: string): Promise<number> {
  const response = await fetch(`${gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}`, 'x-gateway-provider': '@sim', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  })
  await response.arrayBuffer()
  return response.status
}

/** ms from now until both credentials get `status` from the gateway. */
async function untilBoth(key: string, jwt: string, status: number): Promise<number> {
  const started = performance.now()
  await pollUntil(async () => (await chat(key)) === status && (await chat(jwt)) === status, 15_000, 2)
  return performance.now() - started
}

let userId: string
let workspaceId: string
let userKey: string
let userJwt: string

describe.skipIf(postgres.skip !== null)('deprovisioning through SCIM reaches a running gateway', () => {
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'gatehouse-deprovision-'))
    simulator = await startOpenAISimulator({ chunks: 2, recordLimit: 20, apiKeys: ['sk-sim'] })
    idp = await startOidcSimulator({ clientId: 'unused', clientSecret: 'unused', redirectUri: 'https://unused.example/cb' })
    const opened = await postgres.open()
    store = opened.store
    dispose = opened.dispose
    const common = { GATEHOUSE_KEY_PEPPER: PEPPER, GATEHOUSE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, GATEHOUSE_GATEWAY_TOKEN: GATEWAY_TOKEN }
    controlPlane = startGatehouse(['control-plane', '--port', '0', '--data-dir', join(directory, 'cp')], { ...common, GATEHOUSE_DATABASE_URL: opened.url!, GATEHOUSE_ADMIN_API_KEY: ADMIN_KEY })
    controlPlaneUrl = (await controlPlane.waitForLog((entry) => entry.msg === 'control plane is serving')).url!
    gateway = startGatehouse(['gateway'], {
      ...common,
      GATEHOUSE_PORT: '0',
      GATEHOUSE_CONTROL_PLANE_URL: controlPlaneUrl,
      GATEHOUSE_SNAPSHOT_CACHE: join(directory, 'gateway.snapshot'),
      GATEHOUSE_GATEWAY_ID: 'gateway-deprovision',
      // The data plane verifies users' JWTs against the IdP's keys on its own.
      GATEHOUSE_JWT_JWKS_URL: `${idp.issuer}/jwks`,
      GATEHOUSE_JWT_ISSUER: idp.issuer,
      GATEHOUSE_JWT_AUDIENCE: AUDIENCE,
    })
    gatewayUrl = (await gateway.waitForLog((entry) => entry.msg === 'gateway is serving')).url!

    const workspace = await admin('/v1/admin/workspaces', 'POST', { name: 'Deprovision', slug: 'deprovision' })
    expect(workspace.status).toBe(200)
    workspaceId = workspace.body.id as string
    expect((await admin('/v1/organisation/settings', 'PUT', { network_settings: { allow_private_networks: true } })).status).toBe(200)
    const organizationId = (await store.organizations.first())!.id
    await store.providers.upsert({ organizationId, workspaceId, slug: 'sim', name: 'Simulator', kind: 'openai', baseUrl: simulator.baseUrl, credentials: { apiKey: 'sk-sim' } })
    const token = await admin('/v1/admin/scim/tokens', 'POST', { name: 'okta' })
    expect(token.status).toBe(200)
    scimToken = token.body.token as string
    scimBase = `/v1/scim/${organizationId}`
  }, 180_000)

  afterAll(async () => {
    await gateway?.stop()
    await controlPlane?.stop()
    await dispose?.()
    await simulator?.close()
    await idp?.close()
    if (directory) await rm(directory, { recursive: true, force: true })
  })

  it('provisions a user (Okta) into a group mapped to the workspace; their key and JWT call models', async () => {
    const okta = 'Okta SCIM Client 1.0.0'
    const created = await scim('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'lin@example.com',
      name: { givenName: 'Lin', familyName: 'Chen' },
      emails: [{ primary: true, value: 'lin@example.com', type: 'work' }],
      active: true,
    }, okta)
    expect(created.status).toBe(201)
    userId = created.body.id as string
    const group = await scim('POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'ml-team', members: [] }, okta)
    expect(group.status).toBe(201)
    expect((await admin('/v1/scim/workspaces', 'POST', { workspace_id: workspaceId, role: 'member', scim_group_id: group.body.id })).status).toBe(200)
    expect((await scim('PATCH', `/Groups/${String(group.body.id)}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: userId }] }] }, okta)).status).toBe(204)
    const key = await admin('/v1/api-keys/workspace/user', 'POST', { name: 'lin', workspace_id: workspaceId, user_id: userId, scopes: ['completions.write'] })
    expect(key.status, JSON.stringify(key.body)).toBe(200)
    userKey = key.body.key as string
    userJwt = await idp.mintJwt({ sub: userId, workspace_id: workspaceId, scope: 'completions.write' }, AUDIENCE)
    await untilBoth(userKey, userJwt, 200)
  })

  it('refuses the user\'s key and JWT on the gateway within 1 s of deactivation, and restores both on reactivation', async () => {
    const off = await scim('PATCH', `/Users/${userId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { active: false } }] }, 'Okta SCIM Client 1.0.0')
    expect(off.status).toBe(200)
    const refusedAfterMs = await untilBoth(userKey, userJwt, 401)
    const on = await scim('PATCH', `/Users/${userId}`, { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'active', value: 'True' }] }, 'Azure Active Directory SCIM Client')
    expect(on.status).toBe(200)
    const restoredAfterMs = await untilBoth(userKey, userJwt, 200)
    console.log(`[deprovision] ${JSON.stringify({ refusedAfterMs: Math.round(refusedAfterMs), restoredAfterMs: Math.round(restoredAfterMs) })}`)
    expect(refusedAfterMs).toBeLessThan(1000)
    // Memberships came back with the user: the mapped workspace role is still there.
    expect((await store.members.get(workspaceId, userId))?.role).toBe('member')
  })

  it('revokes the key and the JWT on DELETE', async () => {
    expect((await scim('DELETE', `/Users/${userId}`, undefined, 'Okta SCIM Client 1.0.0')).status).toBe(204)
    // The key is gone with the user; the JWT (still unexpired at the IdP) stays refused too.
    await untilBoth(userKey, userJwt, 401)
    expect(await store.users.get((await store.organizations.first())!.id, userId)).toBeNull()
  })
})
