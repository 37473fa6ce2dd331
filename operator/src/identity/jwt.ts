/**
 * JWT authentication, the alternative to API keys. Tokens are verified against the configured JWKS
 * with asymmetric algorithms only; `exp`, `iat`, `iss` and `aud` are required (issuer and audience
 * must be configured, or construction fails). Claims are read by the gateway's snapshot/jwt-claims.ts
 * (the data plane maps the same claims the same way) and map to identity like this:
 *
 *   sub                 the user: matched to users.external_subject, else users.id, else (first
 *                       sign-in) the user with the token's `email`, whose subject is then recorded;
 *                       a pending invite for that email is accepted on first sign-in
 *   workspace_id        optional; confines the token to one workspace (id or slug)
 *   scope | scopes      optional; space-separated string or array; intersected with the role's rights
 *   auth_time | iat     session start; older than session_settings.max_session_ttl -> refused
 */
import { jwtClaims, JwtClaimError, JWT_ASYMMETRIC_ALGORITHMS, JWT_CLOCK_TOLERANCE_SECONDS, JWT_REQUIRED_CLAIMS, stringClaim as sharedStringClaim } from '@gatehouse/gateway/snapshot'
import { errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'
import type { Clock } from '../clock.ts'
import { AdminError, unauthenticated } from '../errors.ts'
import type { Store, UserRecord } from '../store/index.ts'
import { JwksCache, JwksUnavailableError } from './jwks-cache.ts'
import { maxSessionTtlSeconds } from './settings.ts'
import { resolveSignInUser } from './sign-in.ts'

export const ASYMMETRIC_ALGORITHMS = JWT_ASYMMETRIC_ALGORITHMS
const CLOCK_TOLERANCE_SECONDS = JWT_CLOCK_TOLERANCE_SECONDS

export interface JwtOptions {
  jwksUrl: string
  issuer: string
  audience: string
}

export interface JwtIdentity {
  user: UserRecord
  workspaceClaim: string | null
  scopes: string[] | null
}

export class JwtVerifier {
  readonly #options: JwtOptions
  readonly #clock: Clock
  readonly jwks: JwksCache

  constructor(options: JwtOptions, clock: Clock, jwks?: JwksCache) {
    if (!options.jwksUrl || !options.issuer || !options.audience) throw new Error('JWT authentication needs jwksUrl, issuer and audience')
    this.#options = options
    this.#clock = clock
    this.jwks = jwks ?? new JwksCache({ url: options.jwksUrl, clock })
  }

  async verify(token: string, store: Store, organizationId: string): Promise<JwtIdentity> {
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(token, this.jwks.getKey, {
        algorithms: ASYMMETRIC_ALGORITHMS,
        issuer: this.#options.issuer,
        audience: this.#options.audience,
        requiredClaims: JWT_REQUIRED_CLAIMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: this.#clock(),
      }))
    } catch (error) {
      throw describeJoseError(error)
    }
    const organisation = await store.organizations.get(organizationId)
    const ttlSeconds = maxSessionTtlSeconds(organisation?.settings)
    const started = typeof payload.auth_time === 'number' ? payload.auth_time : payload.iat!
    if (this.#clock().getTime() / 1000 - started > ttlSeconds + CLOCK_TOLERANCE_SECONDS) {
      throw new AdminError('AB05', `session is older than the organisation's max_session_ttl (${ttlSeconds} s); sign in again`)
    }
    const claims = claimsOf(payload)
    const user = await resolveUser(store, organizationId, payload, this.#clock())
    return { user, workspaceClaim: claims.workspaceClaim, scopes: claims.scopes }
  }
}

/** An unexpected claim type is refused (401), never mapped to a default role. */
function guarded<T>(read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (error instanceof JwtClaimError) throw unauthenticated(error.message)
    throw error
  }
}

function claimsOf(payload: JWTPayload): ReturnType<typeof jwtClaims> {
  return guarded(() => jwtClaims(payload))
}

function stringClaim(payload: JWTPayload, name: string): string | null {
  return guarded(() => sharedStringClaim(payload, name))
}

async function resolveUser(store: Store, organizationId: string, payload: JWTPayload, now: Date): Promise<UserRecord> {
  const identity = { subject: payload.sub!, email: stringClaim(payload, 'email') }
  return (await resolveSignInUser(store, organizationId, identity, now, { subjectMayBeUserId: true, provisionRole: null })).user
}

function describeJoseError(error: unknown): AdminError {
  if (error instanceof JwksUnavailableError) {
    return new AdminError('dependency_unavailable', 'the identity provider\'s key set is unavailable; retry shortly', { headers: { 'retry-after': '5' } })
  }
  if (error instanceof joseErrors.JWTExpired) return unauthenticated('JWT has expired')
  if (error instanceof joseErrors.JWTClaimValidationFailed) return unauthenticated(`JWT claim ${error.claim} is invalid: ${error.reason}`)
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return unauthenticated('JWT algorithm is not allowed; only asymmetric algorithms are accepted')
  if (error instanceof joseErrors.JWKSNoMatchingKey) return unauthenticated('JWT is signed with a key that is not in the configured JWKS')
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return unauthenticated('JWT signature verification failed')
  if (error instanceof joseErrors.JOSEError) return unauthenticated(`JWT is invalid (${error.code})`)
  return unauthenticated('JWT is invalid')
}
