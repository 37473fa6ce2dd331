/** What every admin route module receives, and what the app attaches to each request. */
import type { Clock } from '../clock.ts'
import type { Principal } from '../identity/principal.ts'
import type { JwtVerifier } from '../identity/jwt.ts'
import type { OidcRelyingParty } from '../sso/oidc-client.ts'
import type { Store } from '../store/index.ts'

/** The gateways' budget counters (the gateway's limiter, or a Redis connection of the control plane). */
export interface LimitCounters {
  readonly keyPrefix: string
  usage(keys: readonly string[]): Promise<number[]>
}

export interface AdminContext {
  store: Store
  pepper: string
  clock: Clock
  jwt: JwtVerifier | null
  /** The gateways' budget counters, for `usage_limits.current_usage` (absent: usage shows null). */
  limitCounters?: LimitCounters
  /** OIDC sign-in, when configured (GATEHOUSE_SSO_*). */
  sso?: OidcRelyingParty
  /** The installation's organisation id (created at first start). */
  organizationId(): Promise<string>
}

/** What a handler tells the audit hook about the change it made. */
export interface AuditTarget {
  action: string
  resourceType: string
  resourceId?: string | null
  workspaceId?: string | null
  details?: Record<string, unknown>
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null
    auditTarget: AuditTarget | null
    /** Set when authentication failed, for the audit hook. */
    authFailure: { mechanism: string; reason: string } | null
  }
}
