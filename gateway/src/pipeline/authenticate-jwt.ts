/**
 * Data-plane JWT authentication (the spec's Authentication 5, "decoupled JWT validation by the data
 * plane"): a token the admin API accepts works on /v1/chat/completions and the other model routes,
 * verified by the gateway alone against the identity provider's JWKS, with no control plane
 * reachable. Configured by the same boot variables as the admin API (GATEHOUSE_JWT_JWKS_URL,
 * GATEHOUSE_JWT_ISSUER, GATEHOUSE_JWT_AUDIENCE); claims map as in snapshot/jwt-claims.ts.
 *
 * The token becomes a `Principal` of kind `jwt`, which every later stage (routing, limits,
 * guardrails) treats as it treats a workspace key's:
 *   - `workspace_id` (id or slug) must name an active workspace of the snapshot; a token without one
 *     cannot call models (the data plane always acts inside a workspace);
 *   - a token that names scopes must hold `completions.write`; one that names none is a member's;
 *   - the workspace's default config applies, as for the workspace's keys;
 *   - it ends at the token's `exp` (checked on every request: the token is presented each time).
 * What the gateway cannot check without the control plane's user table (the user still exists and
 * is a member of that workspace, the organisation's max_session_ttl) is the identity provider's
 * word here; the admin API checks both. A user deactivated through SCIM is known here: the snapshot
 * lists deactivated users' ids and subjects (`revokedSubjects`), and their tokens are refused.
 */
import type { errors as JoseErrors, JWTPayload } from 'jose'
import { GatewayError } from '../core/errors.ts'
import type { RuntimeConfig } from '../runtime/compile.ts'
import { JwksCache, JwksUnavailableError, type JwksCacheOptions } from '../snapshot/jwks-cache.ts'
import {
  jwtClaims, JwtClaimError, JWT_ASYMMETRIC_ALGORITHMS, JWT_CLOCK_TOLERANCE_SECONDS, JWT_REQUIRED_CLAIMS, normaliseScope,
} from '../snapshot/jwt-claims.ts'
import type { SnapshotWorkspace } from '../snapshot/schema.ts'
import type { Principal } from './context.ts'

/** The scope that lets a principal call models (as in the admin API's scope catalog). */
export const COMPLETIONS_SCOPE = 'completions.write'

export interface DataPlaneJwtOptions {
  jwksUrl: string
  issuer: string
  audience: string
}

/** The boot settings, or null when JWT authentication is not configured. */
export function dataPlaneJwtOptionsFromEnv(env: NodeJS.ProcessEnv): DataPlaneJwtOptions | null {
  const { GATEHOUSE_JWT_JWKS_URL: jwksUrl, GATEHOUSE_JWT_ISSUER: issuer, GATEHOUSE_JWT_AUDIENCE: audience } = env
  if (!jwksUrl) return null
  if (!issuer || !audience) throw new Error('GATEHOUSE_JWT_JWKS_URL needs GATEHOUSE_JWT_ISSUER and GATEHOUSE_JWT_AUDIENCE')
  return { jwksUrl, issuer, audience }
}

/** The verifier the boot settings ask for, or null when JWT authentication is not configured. */
export function dataPlaneJwtFromEnv(env: NodeJS.ProcessEnv): DataPlaneJwt | null {
  const options = dataPlaneJwtOptionsFromEnv(env)
  return options === null ? null : new DataPlaneJwt(options)
}

function refused(message: string): GatewayError {
  return new GatewayError('invalid_token', message)
}

function describeJoseError(error: unknown, joseErrors: typeof JoseErrors): GatewayError {
  if (error instanceof JwksUnavailableError) {
    return new GatewayError('dependency_unavailable', "The identity provider's key set is unavailable; retry shortly", { headers: { 'retry-after': '5' }, cause: error })
  }
  if (error instanceof joseErrors.JWTExpired) return refused('The JWT has expired')
  if (error instanceof joseErrors.JWTClaimValidationFailed) return refused(`JWT claim ${error.claim} is invalid: ${error.reason}`)
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return refused('JWT algorithm is not allowed; only asymmetric algorithms are accepted')
  if (error instanceof joseErrors.JWKSNoMatchingKey) return refused('The JWT is signed with a key that is not in the configured JWKS')
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return refused('JWT signature verification failed')
  if (error instanceof joseErrors.JOSEError) return refused(`The JWT is invalid (${error.code})`)
  return refused('The JWT is invalid')
}

function workspaceOf(runtime: RuntimeConfig, claim: string | null): SnapshotWorkspace {
  if (claim === null) throw new GatewayError('forbidden', 'The JWT names no workspace (claim workspace_id); model calls run inside a workspace')
  const workspace = runtime.workspaces.get(claim) ?? [...runtime.workspaces.values()].find((candidate) => candidate.slug === claim)
  if (!workspace) throw refused('The JWT names an unknown workspace')
  if (workspace.status !== 'active') throw new GatewayError('forbidden', "The JWT's workspace is not active")
  return workspace
}

export class DataPlaneJwt {
  readonly #options: DataPlaneJwtOptions
  readonly jwks: JwksCache

  constructor(options: DataPlaneJwtOptions, jwks: Partial<JwksCacheOptions> = {}) {
    this.#options = options
    this.jwks = new JwksCache({ url: options.jwksUrl, ...jwks })
  }

  /** Verifies the token and returns the principal the pipeline uses in place of a key's. */
  async authenticate(runtime: RuntimeConfig, token: string, nowMs: number): Promise<Principal> {
    let payload: JWTPayload
    // Loaded with the first JWT: gateways without JWT sign-in (and sidecars) never load jose.
    const { errors: joseErrors, jwtVerify } = await import('jose')
    try {
      ;({ payload } = await jwtVerify(token, this.jwks.getKey, {
        algorithms: JWT_ASYMMETRIC_ALGORITHMS,
        issuer: this.#options.issuer,
        audience: this.#options.audience,
        requiredClaims: JWT_REQUIRED_CLAIMS,
        clockTolerance: JWT_CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(nowMs),
      }))
    } catch (error) {
      throw describeJoseError(error, joseErrors)
    }
    let claims: ReturnType<typeof jwtClaims>
    try {
      claims = jwtClaims(payload)
    } catch (error) {
      throw error instanceof JwtClaimError ? refused(error.message) : error
    }
    // A deactivated user (SCIM `active: false`) is refused from the next snapshot on, whatever the IdP says.
    if (runtime.revokedSubjects.has(claims.subject)) throw refused("The JWT's user is deactivated")
    const scopes = claims.scopes?.map(normaliseScope) ?? null
    if (scopes !== null && !scopes.includes(COMPLETIONS_SCOPE)) {
      throw new GatewayError('insufficient_scope', `The JWT's scopes do not include ${COMPLETIONS_SCOPE}`)
    }
    const workspace = workspaceOf(runtime, claims.workspaceClaim)
    return {
      kind: 'jwt',
      id: claims.subject,
      workspaceId: workspace.id,
      userId: claims.subject,
      scopes: scopes ?? [COMPLETIONS_SCOPE],
      // As for the workspace's keys: the workspace's default config, else the deployment's.
      defaultConfig: runtime.workspaceDefaults.get(workspace.id) ?? null,
      key: null,
      attributes: {},
    }
  }
}
