/**
 * Turns request credentials into a Principal. Accepted: `x-gateway-api-key: <key>` or
 * `Authorization: Bearer <key, SSO session token or JWT>`. A Gatehouse key is checked for format and checksum before
 * any lookup, then found by its HMAC; anything else is treated as a JWT when JWT authentication is
 * configured. Failures are 401 (AB05) with a message that never echoes the credential.
 */
import { hashApiKey, isJwtShaped, parseApiKey } from '@gatehouse/gateway/snapshot'
import type { Clock } from '../clock.ts'
import { AdminError, forbidden, unauthenticated } from '../errors.ts'
import type { Store, WorkspaceRole } from '../store/index.ts'
import type { JwtVerifier } from './jwt.ts'
import { Principal } from './principal.ts'
import { normaliseScope } from './scopes.ts'
import { isSessionToken, sessionUser } from './sessions.ts'

export interface Credentials {
  /** Node gives a repeated header as an array; more than one credential is refused. */
  apiKeyHeader: string | string[] | undefined
  authorization: string | undefined
}

export interface AuthenticatorDeps {
  store: Store
  pepper: string
  clock: Clock
  jwt: JwtVerifier | null
  organizationId: () => Promise<string>
}

export function extractCredential(credentials: Credentials): string | null {
  if (Array.isArray(credentials.apiKeyHeader)) throw unauthenticated('send exactly one x-gateway-api-key header')
  if (credentials.apiKeyHeader) return credentials.apiKeyHeader.trim()
  const match = /^Bearer\s+(\S+)\s*$/i.exec(credentials.authorization ?? '')
  return match ? match[1]! : null
}

async function membershipsOf(store: Store, userId: string): Promise<Map<string, WorkspaceRole>> {
  return new Map((await store.members.workspacesOf(userId)).map((m) => [m.workspaceId, m.role]))
}

export async function authenticateApiKey(deps: AuthenticatorDeps, raw: string): Promise<Principal> {
  const parsed = parseApiKey(raw)
  if (!parsed) throw unauthenticated('the API key is malformed')
  const now = deps.clock()
  const found = await deps.store.apiKeys.findByHash(hashApiKey(raw, deps.pepper), now)
  if (!found || found.key.type !== parsed.type) throw unauthenticated('the API key is not valid')
  const key = found.key
  if (key.status === 'revoked') throw unauthenticated('the API key has been revoked')
  if (key.status === 'expired' || (key.expiresAt !== null && new Date(key.expiresAt).getTime() <= now.getTime())) throw unauthenticated('the API key has expired')
  if (key.status === 'exhausted') throw unauthenticated('the API key has exhausted its usage limit')
  let user: { id: string; role: 'owner' | 'admin' | 'member' } | null = null
  let memberships = new Map<string, WorkspaceRole>()
  if (key.userId) {
    const record = await deps.store.users.get(key.organizationId, key.userId)
    if (!record || record.status !== 'active') throw unauthenticated('the API key\'s user is no longer active')
    // An admin key is only as strong as its user: once demoted, the key no longer acts at all.
    if (key.type === 'admin' && record.role === 'member') throw forbidden('the API key\'s user is no longer an organisation owner or admin')
    user = { id: record.id, role: record.role }
    memberships = await membershipsOf(deps.store, record.id)
  }
  if (key.workspaceId) {
    const workspace = await deps.store.workspaces.get(key.organizationId, key.workspaceId)
    if (!workspace || workspace.status !== 'active') throw forbidden('the API key\'s workspace is archived')
  }
  return new Principal({
    organizationId: key.organizationId,
    via: 'api_key',
    keyId: key.id,
    keyType: key.type,
    subtype: key.subtype,
    user,
    workspaceId: key.workspaceId,
    memberships,
    scopes: new Set(key.scopes.map(normaliseScope)),
  })
}

export async function authenticateJwt(deps: AuthenticatorDeps, token: string): Promise<Principal> {
  if (!deps.jwt) throw unauthenticated('JWT authentication is not configured; use an API key')
  const organizationId = await deps.organizationId()
  const identity = await deps.jwt.verify(token, deps.store, organizationId)
  let workspaceId: string | null = null
  if (identity.workspaceClaim) {
    const workspace = await deps.store.workspaces.get(organizationId, identity.workspaceClaim)
    if (!workspace) throw unauthenticated('the JWT names an unknown workspace')
    if (workspace.status !== 'active') throw forbidden('the JWT\'s workspace is archived')
    workspaceId = workspace.id
  }
  return new Principal({
    organizationId,
    via: 'jwt',
    keyId: null,
    keyType: null,
    subtype: null,
    user: { id: identity.user.id, role: identity.user.role },
    workspaceId,
    memberships: await membershipsOf(deps.store, identity.user.id),
    scopes: identity.scopes === null ? null : new Set(identity.scopes.map(normaliseScope)),
  })
}

/** An SSO session acts as its user with the user's role's rights (no scope narrowing). */
export async function authenticateSession(deps: AuthenticatorDeps, raw: string): Promise<Principal> {
  const { user } = await sessionUser(deps, raw)
  return new Principal({
    organizationId: user.organizationId,
    via: 'session',
    keyId: null,
    keyType: null,
    subtype: null,
    user: { id: user.id, role: user.role },
    workspaceId: null,
    memberships: await membershipsOf(deps.store, user.id),
    scopes: null,
  })
}

/** Which mechanism a credential uses (for audit records of failures). */
export function credentialKind(raw: string): 'api_key' | 'jwt' | 'session' | 'unknown' {
  if (raw.startsWith('ghk_')) return 'api_key'
  if (isSessionToken(raw)) return 'session'
  return isJwtShaped(raw) ? 'jwt' : 'unknown'
}

export async function authenticate(deps: AuthenticatorDeps, credentials: Credentials): Promise<Principal> {
  const raw = extractCredential(credentials)
  if (!raw) throw unauthenticated('missing credentials: send x-gateway-api-key or Authorization: Bearer')
  const kind = credentialKind(raw)
  if (kind === 'api_key') return authenticateApiKey(deps, raw)
  if (kind === 'jwt') return authenticateJwt(deps, raw)
  if (kind === 'session') return authenticateSession(deps, raw)
  throw unauthenticated('the credential is neither a Gatehouse API key, a session token nor a JWT')
}

export function isAuthError(error: unknown): error is AdminError {
  return error instanceof AdminError && (error.code === 'AB05' || error.code === 'AB03')
}
