/**
 * SSO sign-in on the control plane (OpenID Connect, authorization code with PKCE):
 *
 *   GET  /v1/auth/sso/login     → 302 to the IdP's authorization endpoint; the sign-in's state,
 *                                 nonce and PKCE verifier wait in a short-lived row (keyed by a hash
 *                                 of the state), and the state is bound to this browser by an
 *                                 HttpOnly cookie, so a callback started elsewhere is refused
 *   GET  /v1/auth/sso/callback  → exchanges the code, maps the claims to a user (provisioning an
 *                                 unknown one with the default role), answers a session:
 *                                 {object:"session", token, token_type:"Bearer", expires_at, user}
 *   POST /v1/auth/sso/logout    → ends the presenting session
 *
 * The installation's organisation is implied (no organisation id in the request). Every success
 * and failure is written to the audit log (`auth.sso_sign_in`, `auth.sso_failed` with the reason).
 * A session is accepted by the admin API as `Authorization: Bearer ghs_…` until the organisation's
 * session_settings.max_session_ttl has passed since sign-in, the user is deactivated, or it is
 * ended.
 */
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import * as client from 'openid-client'
import type { AdminContext } from '../context.ts'
import { redact } from '../audit.ts'
import { AdminError, unauthenticated } from '../../errors.ts'
import { mintSessionToken, sessionUser } from '../../identity/sessions.ts'
import { maxSessionTtlSeconds } from '../../identity/settings.ts'
import { resolveSignInUser, type SignedInUser } from '../../identity/sign-in.ts'
import { isStoreOutage } from '../../store/errors.ts'
import type { SsoSettings } from '../../sso/config.ts'
import type { IdTokenClaims, OidcRelyingParty } from '../../sso/oidc-client.ts'

export const STATE_COOKIE = 'gatehouse_sso_state'
/** How long a sign-in may take between the redirect and the callback. */
export const LOGIN_TTL_MS = 10 * 60_000

function stateHash(state: string): string {
  return createHash('sha256').update(state).digest('hex')
}

function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=')
    if (key === name) return rest.join('=')
  }
  return null
}

function stateCookie(settings: SsoSettings, value: string, maxAgeSeconds: number): string {
  const secure = settings.redirectUri.protocol === 'https:' ? '; Secure' : ''
  return `${STATE_COOKIE}=${value}; Path=/v1/auth/sso; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`
}

function text(claims: IdTokenClaims, name: string): string | null {
  const value = claims[name]
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null
}

function groupNames(claims: IdTokenClaims, name: string): string[] {
  const value = claims[name]
  if (typeof value === 'string') return [value]
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []
}

/** The IdP failed to answer (network, timeout, 5xx): the client may retry, this is not a refusal. */
function isIdpOutage(error: unknown): boolean {
  if (error instanceof client.ResponseBodyError) return error.status >= 500
  if (error instanceof client.ClientError || error instanceof client.AuthorizationResponseError || error instanceof client.WWWAuthenticateChallengeError) return false
  const name = (error as { name?: string }).name
  return error instanceof TypeError || name === 'TimeoutError' || name === 'AbortError' || (error as { code?: string }).code === 'OAUTH_TIMEOUT'
}

/** A reason for the audit record and the answer: the library's check that failed, never tokens. */
function reasonOf(error: unknown): string {
  if (error instanceof AdminError) return error.message
  if (error instanceof client.AuthorizationResponseError) return `the identity provider refused: ${error.error}`
  if (error instanceof client.ResponseBodyError) return `the token endpoint refused: ${error.error}`
  // openid-client wraps the check that failed (`cause`: message, and the claim for claim checks);
  // only those words are kept, never the parameters or tokens the cause also carries.
  const outer = error as { message?: string; cause?: { message?: string; cause?: { claim?: unknown } } }
  const inner = outer.cause?.message
  const claim = typeof outer.cause?.cause?.claim === 'string' ? ` (claim ${outer.cause.cause.claim})` : ''
  return String(redact([outer.message ?? 'sign-in failed', inner].filter(Boolean).join(': ') + claim))
}

export function ssoRoutes(app: FastifyInstance, ctx: AdminContext): void {
  const opts = { config: { publicRoute: true } }

  function relyingParty(): OidcRelyingParty {
    if (!ctx.sso) throw new AdminError('AB08', 'SSO is not configured on this control plane (GATEHOUSE_SSO_ISSUER)')
    return ctx.sso
  }

  async function auditSignIn(request: FastifyRequest, status: number, outcome: { user?: SignedInUser; reason?: string; subject?: string | null }): Promise<void> {
    try {
      await ctx.store.audit.record({
        organizationId: await ctx.organizationId(),
        actorType: outcome.user ? 'user' : 'anonymous',
        actorId: outcome.user?.user.id ?? null,
        userId: outcome.user?.user.id ?? null,
        method: request.method,
        uri: request.routeOptions.url ?? null,
        requestId: request.id,
        action: outcome.user ? 'auth.sso_sign_in' : 'auth.sso_failed',
        resourceType: 'session',
        responseStatusCode: status,
        clientIp: request.ip,
        details: outcome.user ? { via: outcome.user.via, role: outcome.user.user.role } : { reason: redact(outcome.reason ?? 'unknown'), ...(outcome.subject ? { subject: outcome.subject } : {}) },
      })
    } catch (error) {
      request.log.error({ err: { message: String((error as Error).message) } }, 'audit write failed')
    }
  }

  app.get('/login', opts, async (_request, reply) => {
    const rp = relyingParty()
    let start
    try {
      start = await rp.start()
    } catch (error) {
      if (error instanceof AdminError) throw error
      throw new AdminError('dependency_unavailable', 'the identity provider cannot be reached; retry shortly', { headers: { 'retry-after': '5' } })
    }
    const now = ctx.clock()
    await ctx.store.sessions.purgeLogins(now)
    await ctx.store.sessions.saveLogin(stateHash(start.state), {
      organizationId: await ctx.organizationId(),
      nonce: start.nonce,
      codeVerifier: start.codeVerifier,
      expiresAt: new Date(now.getTime() + LOGIN_TTL_MS).toISOString(),
    })
    return reply.status(302).header('cache-control', 'no-store').header('set-cookie', stateCookie(rp.settings, start.state, LOGIN_TTL_MS / 1000)).header('location', start.url.href).send()
  })

  app.get('/callback', opts, async (request, reply) => {
    const rp = relyingParty()
    const clear = stateCookie(rp.settings, '', 0)
    let subject: string | null = null
    try {
      const query = new URLSearchParams(request.url.split('?')[1] ?? '')
      const state = query.get('state')
      if (!state) throw unauthenticated('the callback carries no state')
      // Login CSRF: the state must be the one this browser was sent off with.
      if (cookieValue(request.headers.cookie, STATE_COOKIE) !== state) throw unauthenticated('the sign-in state does not match this browser\'s; start the sign-in again')
      const login = await ctx.store.sessions.takeLogin(stateHash(state), ctx.clock())
      if (!login) throw unauthenticated('the sign-in state is unknown or expired; start the sign-in again')
      const claims = await rp.finish(query.toString(), { state, nonce: login.nonce, codeVerifier: login.codeVerifier })
      subject = claims.sub
      const names = rp.settings.claims
      const full = text(claims, names.name)
      const emailVerified = claims.email_verified
      const signedIn = await resolveSignInUser(ctx.store, login.organizationId, {
        subject: claims.sub,
        email: text(claims, names.email),
        ...(typeof emailVerified === 'boolean' ? { emailVerified } : {}),
        firstName: text(claims, 'given_name') ?? full?.split(' ')[0] ?? null,
        lastName: text(claims, 'family_name') ?? (full && full.includes(' ') ? full.slice(full.indexOf(' ') + 1) : null),
      }, ctx.clock(), { subjectMayBeUserId: false, provisionRole: rp.settings.autoProvision ? rp.settings.defaultRole : null })
      if (names.groups !== null) await syncClaimedGroups(ctx, signedIn.user.organizationId, signedIn.user.id, groupNames(claims, names.groups))
      const startedAt = ctx.clock()
      const minted = mintSessionToken(ctx.pepper)
      await ctx.store.sessions.create({ organizationId: signedIn.user.organizationId, userId: signedIn.user.id, tokenHash: minted.hash, startedAt })
      const organisation = await ctx.store.organizations.get(signedIn.user.organizationId)
      const expiresAt = new Date(startedAt.getTime() + maxSessionTtlSeconds(organisation?.settings) * 1000)
      await auditSignIn(request, 200, { user: signedIn })
      return reply.header('cache-control', 'no-store').header('set-cookie', clear).send({
        object: 'session',
        token: minted.token,
        token_type: 'Bearer',
        expires_at: expiresAt.toISOString(),
        user: { id: signedIn.user.id, email: signedIn.user.email, role: signedIn.user.role, first_name: signedIn.user.firstName, last_name: signedIn.user.lastName },
      })
    } catch (error) {
      const failure = isStoreOutage(error) || (!(error instanceof AdminError) && isIdpOutage(error))
        ? new AdminError('dependency_unavailable', isStoreOutage(error) ? 'the admin store is unavailable; retry shortly' : 'the identity provider cannot be reached; retry shortly', { headers: { 'retry-after': '5' } })
        : error instanceof AdminError ? error : unauthenticated(`sign-in refused: ${reasonOf(error)}`)
      await auditSignIn(request, failure.status, { reason: reasonOf(error), subject })
      return sendError(reply.header('set-cookie', clear), failure)
    }
  })

  app.post('/logout', opts, async (request, reply) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')
    if (!match) throw unauthenticated('send the session as Authorization: Bearer ghs_…')
    const { sessionId } = await sessionUser(ctx, match[1]!)
    await ctx.store.sessions.revoke(sessionId, ctx.clock())
    return reply.send({ success: true })
  })
}

function sendError(reply: FastifyReply, error: AdminError): FastifyReply {
  return reply.status(error.status).headers(error.headers).send(error.toBody())
}

/**
 * Makes the user's SCIM group membership match the IdP's groups claim, among the groups the
 * organisation knows (a claimed group nobody mapped is ignored), then recomputes the workspace
 * memberships the groups grant.
 */
async function syncClaimedGroups(ctx: AdminContext, organizationId: string, userId: string, claimed: readonly string[]): Promise<void> {
  const wanted = new Set(claimed.map((name) => name.toLowerCase()))
  await ctx.store.transaction(async (tx) => {
    for (const group of await tx.scim.listGroups(organizationId)) {
      const member = group.memberIds.includes(userId)
      const should = wanted.has(group.displayName.toLowerCase())
      if (should && !member) await tx.scim.addMembers(group.id, [userId])
      if (!should && member) await tx.scim.removeMembers(group.id, [userId])
    }
    await tx.scim.syncMemberships([userId])
  })
}
