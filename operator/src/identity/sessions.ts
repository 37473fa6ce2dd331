/**
 * Admin API sessions issued by SSO sign-in: `Authorization: Bearer ghs_<43 base64url chars>`.
 *
 * Why an opaque token with a row rather than a signed JWT: a session must end the moment its user
 * is deactivated or deleted and the moment it outlives the organisation's max_session_ttl as set
 * now (not as it was at sign-in). Both need the user row at every request anyway, so a signed token
 * would add a signing key to manage without saving the lookup. The row stores only a peppered HMAC
 * of the token (like API keys), so a database read does not yield usable sessions.
 */
import { randomBytes } from 'node:crypto'
import { hashApiKey } from '@gatehouse/gateway/snapshot'
import type { Clock } from '../clock.ts'
import { unauthenticated } from '../errors.ts'
import type { Store, UserRecord } from '../store/index.ts'
import { maxSessionTtlSeconds } from './settings.ts'

export const SESSION_PREFIX = 'ghs_'
const SESSION_PATTERN = /^ghs_[A-Za-z0-9_-]{43}$/

export function isSessionToken(raw: string): boolean {
  return raw.startsWith(SESSION_PREFIX)
}

/** A fresh session token (256 random bits) and the hash stored for it. */
export function mintSessionToken(pepper: string): { token: string; hash: string } {
  const token = SESSION_PREFIX + randomBytes(32).toString('base64url')
  return { token, hash: hashApiKey(token, pepper) }
}

export interface SessionDeps {
  store: Store
  pepper: string
  clock: Clock
}

/** The session's user, or 401 when the token is unknown, revoked, past the TTL or its user inactive. */
export async function sessionUser(deps: SessionDeps, raw: string): Promise<{ sessionId: string; user: UserRecord }> {
  if (!SESSION_PATTERN.test(raw)) throw unauthenticated('the session token is malformed')
  const session = await deps.store.sessions.findByHash(hashApiKey(raw, deps.pepper))
  if (!session) throw unauthenticated('the session is not valid; sign in again')
  if (session.revokedAt !== null) throw unauthenticated('the session has ended; sign in again')
  const organisation = await deps.store.organizations.get(session.organizationId)
  const ttlSeconds = maxSessionTtlSeconds(organisation?.settings)
  if (deps.clock().getTime() - new Date(session.startedAt).getTime() > ttlSeconds * 1000) {
    throw unauthenticated(`the session is older than the organisation's max_session_ttl (${ttlSeconds} s); sign in again`)
  }
  const user = await deps.store.users.get(session.organizationId, session.userId)
  if (!user || user.status !== 'active') throw unauthenticated('the session\'s user is no longer active')
  return { sessionId: session.id, user }
}
