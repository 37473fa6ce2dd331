/**
 * How a verified JWT's claims map to identity, in one place for the admin API (operator) and the
 * data plane (gateway). Tokens are verified with asymmetric algorithms only and need `exp`, `iat`
 * and `sub`; issuer and audience are configured.
 *
 *   sub                 the user
 *   workspace_id        optional; confines the token to one workspace (id or slug)
 *   scope | scopes      optional; space-separated string or array of strings
 */
import type { JWTPayload } from 'jose'

export const JWT_ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']
export const JWT_CLOCK_TOLERANCE_SECONDS = 60
export const JWT_REQUIRED_CLAIMS = ['exp', 'iat', 'sub']

/** A claim of the wrong type: refused, never mapped to a default. */
export class JwtClaimError extends Error {
  override name = 'JwtClaimError'
}

export interface JwtClaims {
  subject: string
  workspaceClaim: string | null
  /** Null: the token names no scopes (the user's role decides). */
  scopes: string[] | null
}

export function stringClaim(payload: JWTPayload, name: string): string | null {
  const value = payload[name]
  if (value === undefined || value === null) return null
  if (typeof value !== 'string' || value.length === 0) throw new JwtClaimError(`JWT claim ${name} must be a non-empty string`)
  return value
}

export function scopesClaim(payload: JWTPayload): string[] | null {
  if (typeof payload.scope === 'string') return payload.scope.split(' ').filter(Boolean)
  if (payload.scopes === undefined) return null
  if (!Array.isArray(payload.scopes) || !payload.scopes.every((scope) => typeof scope === 'string')) throw new JwtClaimError('JWT claim scopes must be an array of strings')
  return payload.scopes as string[]
}

export function jwtClaims(payload: JWTPayload): JwtClaims {
  const subject = stringClaim(payload, 'sub')
  if (subject === null) throw new JwtClaimError('JWT claim sub is required')
  return { subject, workspaceClaim: stringClaim(payload, 'workspace_id'), scopes: scopesClaim(payload) }
}

/** `deployments.create` is the same scope as the spec's `deployments:create`. */
export function normaliseScope(scope: string): string {
  return scope.startsWith('deployments.') ? `deployments:${scope.slice('deployments.'.length)}` : scope
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/** Three base64url segments: a JWT, not a Gatehouse key (which starts `ghk_`). */
export function isJwtShaped(credential: string): boolean {
  return JWT_SHAPE.test(credential)
}
