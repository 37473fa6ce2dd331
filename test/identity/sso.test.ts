/**
 * SSO sign-in end to end, browserless: the admin app (real PGlite store, a controllable clock)
 * against the OIDC provider simulator on loopback. Each sign-in follows the redirects by hand:
 * /v1/auth/sso/login → the IdP's /authorize → the callback with the state cookie → a session.
 *
 * Shown: the configured scopes reach the authorization request (with PKCE S256, state and nonce);
 * an unknown user is provisioned with the default role and gets the workspaces their IdP groups map
 * to; the session works on the admin API until max_session_ttl has passed (then refused and
 * audited); a deactivated user's session ends; bad state, a replayed state, a wrong nonce and a
 * wrong issuer are refused and audited; an unreachable IdP is a 503, not a 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LightMyRequestResponse } from 'fastify'
import { createHarness, type Harness } from '../../operator/src/admin/testing.ts'
import { ssoSettingsFromEnv } from '../../operator/src/sso/config.ts'
import { LOGIN_TTL_MS } from '../../operator/src/admin/routes/sso.ts'
import { createSessionCleanupWorker } from '../../operator/src/workers/session-cleanup.ts'
import { startOidcSimulator, type OidcSimulator } from '../simulators/oidc.ts'

const REDIRECT_URI = 'https://gatehouse.example/v1/auth/sso/callback'
const CLIENT = { clientId: 'gatehouse-console', clientSecret: 'sim-client-secret-1' }

let h: Harness
let idp: OidcSimulator
let clockNow: () => Date = () => new Date()

interface SignIn {
  login: LightMyRequestResponse
  cookie: string
  authorize: URLSearchParams
  callbackUrl: URL
}

/** Login, then the IdP's authorize redirect; stops before the callback. */
async function startSignIn(): Promise<SignIn> {
  const login = await h.app.inject({ method: 'GET', url: '/v1/auth/sso/login' })
  expect(login.statusCode).toBe(302)
  const cookie = String(login.headers['set-cookie']).split(';')[0]!
  const atIdp = await fetch(String(login.headers.location), { redirect: 'manual' })
  expect(atIdp.status).toBe(302)
  return { login, cookie, authorize: idp.authorizeRequests.at(-1)!, callbackUrl: new URL(atIdp.headers.get('location')!) }
}

async function callback(url: URL, cookie: string | null): Promise<LightMyRequestResponse> {
  return h.app.inject({ method: 'GET', url: `${url.pathname}${url.search}`, headers: cookie ? { cookie } : {} })
}

async function signIn(): Promise<LightMyRequestResponse> {
  const started = await startSignIn()
  return callback(started.callbackUrl, started.cookie)
}

async function lastAudit(action: string): Promise<Record<string, unknown> | undefined> {
  return (await h.store.audit.list(h.orgId, { action }, 0, 1)).data[0] as Record<string, unknown> | undefined
}

beforeAll(async () => {
  idp = await startOidcSimulator({ ...CLIENT, redirectUri: REDIRECT_URI, now: () => clockNow() })
  const sso = ssoSettingsFromEnv({
    GATEHOUSE_SSO_ISSUER: idp.issuer,
    GATEHOUSE_SSO_CLIENT_ID: CLIENT.clientId,
    GATEHOUSE_SSO_CLIENT_SECRET: CLIENT.clientSecret,
    GATEHOUSE_SSO_REDIRECT_URI: REDIRECT_URI,
    GATEHOUSE_SSO_SCOPES: 'email profile groups offline_access',
    GATEHOUSE_SSO_GROUPS_CLAIM: 'groups',
  }, null)!
  h = await createHarness({ sso })
  // The IdP signs with the control plane's clock, so TTL tests can move time for both.
  clockNow = h.clock.read
}, 180_000)

afterAll(async () => {
  await h?.close()
  await idp?.close()
})

describe('SSO sign-in (OpenID Connect, authorization code with PKCE)', () => {
  let token: string
  let userId: string
  let workspaceId: string

  it('sends the configured scopes, PKCE S256, state and nonce, and binds the state to the browser', async () => {
    const started = await startSignIn()
    expect(new Set(started.authorize.get('scope')!.split(' '))).toEqual(new Set(['openid', 'email', 'profile', 'groups', 'offline_access']))
    expect(started.authorize.get('code_challenge_method')).toBe('S256')
    expect(started.authorize.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(started.authorize.get('nonce')).toBeTruthy()
    expect(started.authorize.get('redirect_uri')).toBe(REDIRECT_URI)
    expect(started.authorize.get('organisation_id') ?? started.authorize.get('organization_id')).toBeNull()
    const setCookie = String(started.login.headers['set-cookie'])
    expect(setCookie).toContain(`gatehouse_sso_state=${started.authorize.get('state')}`)
    expect(setCookie).toMatch(/HttpOnly/)
    expect(setCookie).toMatch(/SameSite=Lax/)
    expect(setCookie).toMatch(/Secure/)
    // The verifier never leaves the control plane: not in the redirect, not in the cookie.
    const verifierRow = (await h.db.query<{ code_verifier: string }>('SELECT code_verifier FROM sso_logins'))[0]!
    expect(String(started.login.headers.location)).not.toContain(verifierRow.code_verifier)
    expect(setCookie).not.toContain(verifierRow.code_verifier)
  })

  it('provisions an unknown user with the default role and the workspaces their groups map to', async () => {
    workspaceId = (await h.workspace('Research')).id
    expect((await h.call('POST', '/v1/scim/workspaces', h.ownerKey, { workspace_id: workspaceId, role: 'member', scim_group_name: 'researchers' })).statusCode).toBe(200)
    idp.user = { sub: 'idp|ada', email: 'ada@example.com', email_verified: true, name: 'Ada Byron', groups: ['researchers', 'unmapped-group'] }
    const response = await signIn()
    expect(response.statusCode).toBe(200)
    const body = response.json<{ object: string; token: string; token_type: string; expires_at: string; user: { id: string; role: string; email: string } }>()
    expect(body).toMatchObject({ object: 'session', token_type: 'Bearer', user: { email: 'ada@example.com', role: 'member' } })
    token = body.token
    userId = body.user.id
    expect(token).toMatch(/^ghs_/)
    const user = (await h.store.users.get(h.orgId, userId))!
    expect(user).toMatchObject({ externalSubject: 'idp|ada', firstName: 'Ada', lastName: 'Byron', role: 'member' })
    expect((await h.store.members.get(workspaceId, userId))?.role).toBe('member')
    // The token endpoint got the verifier whose S256 the authorize request carried (the simulator checks it).
    expect(idp.tokenRequests.at(-1)!.get('code_verifier')).toBeTruthy()
    // Stored as a hash only.
    const rows = await h.db.query<{ token_hash: string }>('SELECT token_hash FROM sessions')
    expect(rows.some((row) => row.token_hash.includes(token) || token.includes(row.token_hash))).toBe(false)
    const audit = await lastAudit('auth.sso_sign_in')
    expect(audit).toMatchObject({ userId, actorType: 'user' })
  })

  it('issues a session the admin API accepts, as the user with their role', async () => {
    const workspaces = await h.call('GET', '/v1/workspaces', null, undefined, { authorization: `Bearer ${token}` })
    expect(workspaces.statusCode).toBe(200)
    expect(workspaces.json<{ data: Array<{ id: string }> }>().data.map((w) => w.id)).toEqual([workspaceId])
    // A member's session does not manage users.
    expect((await h.call('GET', '/v1/admin/users', null, undefined, { authorization: `Bearer ${token}` })).statusCode).toBe(403)
  })

  it('signs the same person in again by subject, without a second user', async () => {
    const again = await signIn()
    expect(again.statusCode).toBe(200)
    expect(again.json<{ user: { id: string } }>().user.id).toBe(userId)
    expect((await h.store.users.listAll(h.orgId)).filter((u) => u.email === 'ada@example.com')).toHaveLength(1)
  })

  it('refuses the session once the organisation\'s max_session_ttl has passed, and audits it', async () => {
    expect((await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { session_settings: { max_session_ttl: 900 } })).statusCode).toBe(200)
    const fresh = (await signIn()).json<{ token: string; expires_at: string }>()
    expect(new Date(fresh.expires_at).getTime() - h.clock.now.getTime()).toBe(900_000)
    const use = (): Promise<LightMyRequestResponse> => h.call('GET', '/v1/workspaces', null, undefined, { authorization: `Bearer ${fresh.token}` })
    h.clock.advance(899_000)
    expect((await use()).statusCode).toBe(200)
    h.clock.advance(2_000)
    const refused = await use()
    expect(refused.statusCode).toBe(401)
    expect(refused.json<{ error: { message: string } }>().error.message).toMatch(/max_session_ttl/)
    expect(await lastAudit('auth.session_failed')).toMatchObject({ responseStatusCode: 401 })
    // Signing in again gives a new session that works.
    const renewed = (await signIn()).json<{ token: string }>()
    expect((await h.call('GET', '/v1/workspaces', null, undefined, { authorization: `Bearer ${renewed.token}` })).statusCode).toBe(200)
  })

  it('ends the sessions of a deactivated user and refuses their sign-in', async () => {
    const session = (await signIn()).json<{ token: string }>()
    const scimToken = (await h.call('POST', '/v1/admin/scim/tokens', h.ownerKey, { name: 'idp' })).json<{ token: string }>().token
    const off = await h.app.inject({
      method: 'PATCH',
      url: `/v1/scim/${h.orgId}/Users/${userId}`,
      headers: { authorization: `Bearer ${scimToken}`, 'content-type': 'application/scim+json' },
      payload: JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] }),
    })
    expect(off.statusCode).toBe(200)
    expect((await h.call('GET', '/v1/workspaces', null, undefined, { authorization: `Bearer ${session.token}` })).statusCode).toBe(401)
    const refused = await signIn()
    expect(refused.statusCode).toBe(401)
    expect(await lastAudit('auth.sso_failed')).toMatchObject({ details: { reason: expect.stringMatching(/disabled/) } })
    await h.store.users.setStatus(h.orgId, userId, 'active')
    expect((await signIn()).statusCode).toBe(200)
  })

  it('refuses a callback whose state is not this browser\'s, unknown or replayed, and audits each', async () => {
    idp.user = { sub: 'idp|eve', email: 'eve@example.com', email_verified: true }
    const before = (await h.store.users.listAll(h.orgId)).length
    const started = await startSignIn()
    // No cookie (a callback link sent to someone else).
    expect((await callback(started.callbackUrl, null)).statusCode).toBe(401)
    // A state the control plane never issued, with a matching cookie.
    const forged = new URL(started.callbackUrl)
    forged.searchParams.set('state', 'forged-state')
    expect((await callback(forged, 'gatehouse_sso_state=forged-state')).statusCode).toBe(401)
    expect(await lastAudit('auth.sso_failed')).toMatchObject({ details: { reason: expect.stringMatching(/state/) } })
    // The genuine callback once, then replayed.
    expect((await callback(started.callbackUrl, started.cookie)).statusCode).toBe(200)
    const replay = await callback(started.callbackUrl, started.cookie)
    expect(replay.statusCode).toBe(401)
    expect((await h.store.users.listAll(h.orgId)).length).toBe(before + 1)
  })

  it('refuses an ID token with the wrong nonce, and audits it', async () => {
    idp.user = { sub: 'idp|mallory', email: 'mallory@example.com', email_verified: true }
    idp.tamper = { nonce: 'not-the-nonce-we-sent' }
    try {
      const response = await signIn()
      expect(response.statusCode).toBe(401)
      expect(response.json<{ error: { message: string } }>().error.message).toMatch(/nonce/)
    } finally {
      idp.tamper = {}
    }
    expect(await lastAudit('auth.sso_failed')).toMatchObject({ responseStatusCode: 401, details: { reason: expect.stringMatching(/nonce/) } })
    expect(await h.store.users.findByEmail(h.orgId, 'mallory@example.com')).toBeNull()
  })

  it('refuses a response from the wrong issuer, and audits it', async () => {
    idp.user = { sub: 'idp|mallory', email: 'mallory@example.com', email_verified: true }
    idp.tamper = { issuer: 'https://evil.example' }
    try {
      const response = await signIn()
      expect(response.statusCode).toBe(401)
      expect(response.json<{ error: { message: string } }>().error.message).toMatch(/iss/)
    } finally {
      idp.tamper = {}
    }
    expect(await lastAudit('auth.sso_failed')).toMatchObject({ details: { reason: expect.stringMatching(/iss/) } })
    expect(await h.store.users.findByEmail(h.orgId, 'mallory@example.com')).toBeNull()
  })

  it('refuses an email the IdP marks unverified instead of linking it to an existing user', async () => {
    idp.user = { sub: 'idp|impostor', email: 'ada@example.com', email_verified: false }
    const response = await signIn()
    expect(response.statusCode).toBe(401)
    expect((await h.store.users.findByEmail(h.orgId, 'ada@example.com'))!.externalSubject).toBe('idp|ada')
  })

  it('reads claims missing from the ID token from UserInfo', async () => {
    idp.user = { sub: 'idp|grace', email: 'grace@example.com', email_verified: true, groups: ['researchers'] }
    idp.userInfoOnly = new Set(['email', 'groups'])
    try {
      const response = await signIn()
      expect(response.statusCode).toBe(200)
      const id = response.json<{ user: { id: string; email: string } }>().user
      expect(id.email).toBe('grace@example.com')
      expect((await h.store.members.get(workspaceId, id.id))?.role).toBe('member')
    } finally {
      idp.userInfoOnly = new Set()
    }
  })
})

describe('session upkeep', () => {
  it('deletes sessions past the TTL, ended ones and stale sign-ins, and keeps live sessions', async () => {
    expect((await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { session_settings: { max_session_ttl: 900 } })).statusCode).toBe(200)
    idp.user = { sub: 'idp|upkeep', email: 'upkeep@example.com', email_verified: true }
    const old = (await signIn()).json<{ token: string }>()
    h.clock.advance(301_000)
    const live = (await signIn()).json<{ token: string }>()
    const ended = (await signIn()).json<{ token: string }>()
    expect((await h.app.inject({ method: 'POST', url: '/v1/auth/sso/logout', headers: { authorization: `Bearer ${ended.token}` } })).statusCode).toBe(200)
    expect((await h.call('GET', '/v1/workspaces', null, undefined, { authorization: `Bearer ${ended.token}` })).statusCode).toBe(401)
    // A sign-in never completed; with `old`, past its time once the clock moves on.
    await h.app.inject({ method: 'GET', url: '/v1/auth/sso/login' })
    h.clock.advance(LOGIN_TTL_MS + 1_000)
    const sessionCount = async (): Promise<number> => (await h.db.query('SELECT id FROM sessions')).length
    const before = await sessionCount()
    const worker = createSessionCleanupWorker({ store: h.store, clock: h.clock.read, onError: (error) => { throw error } })
    const purged = await worker.run()
    expect(purged.logins).toBeGreaterThanOrEqual(1)
    expect(purged.sessions).toBeGreaterThanOrEqual(2)
    expect(await sessionCount()).toBe(before - purged.sessions)
    expect((await h.call('GET', '/v1/workspaces', null, undefined, { authorization: `Bearer ${live.token}` })).statusCode).toBe(200)
    expect((await h.call('GET', '/v1/workspaces', null, undefined, { authorization: `Bearer ${old.token}` })).statusCode).toBe(401)
    expect((await h.db.query('SELECT state_hash FROM sso_logins')).length).toBe(0)
  })
})

describe('SSO when the identity provider is down or SSO is off', () => {
  it('answers 503 with Retry-After when discovery fails, never a 401', async () => {
    const down = await createHarness({ sso: ssoSettingsFromEnv({ GATEHOUSE_SSO_ISSUER: 'http://127.0.0.1:9/', GATEHOUSE_SSO_CLIENT_ID: 'x', GATEHOUSE_SSO_REDIRECT_URI: REDIRECT_URI }, null)! })
    try {
      const response = await down.app.inject({ method: 'GET', url: '/v1/auth/sso/login' })
      expect(response.statusCode).toBe(503)
      expect(response.headers['retry-after']).toBeDefined()
    } finally {
      await down.close()
    }
  }, 120_000)

  it('answers 404 when SSO is not configured', async () => {
    const plain = await createHarness()
    try {
      expect((await plain.app.inject({ method: 'GET', url: '/v1/auth/sso/login' })).statusCode).toBe(404)
    } finally {
      await plain.close()
    }
  }, 120_000)
})
