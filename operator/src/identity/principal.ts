/**
 * Who is calling, and what they may do. A principal comes from an API key or a JWT; its rights are
 * the intersection of what the credential carries (scopes) and what its holder's role allows:
 *
 *   authority in a workspace   owner/admin user or admin service key -> 'org'
 *                              workspace service key (its workspace)  -> 'manager'
 *                              workspace user key / JWT user          -> the user's workspace role
 *   scopes granted by authority 'org' -> every scope; 'admin'/'manager' -> every workspace scope;
 *                              'member' -> MEMBER_SCOPES
 *
 * so a key never does more than its owner could, and demoting a user shrinks their keys at once.
 */
import type { OrgRole, WorkspaceRole } from '../store/index.ts'
import { ALL_SCOPES, MEMBER_SCOPES, WORKSPACE_SCOPE_SET } from './scopes.ts'

export type Authority = 'org' | WorkspaceRole

export interface PrincipalInit {
  organizationId: string
  via: 'api_key' | 'jwt' | 'session'
  keyId: string | null
  keyType: 'admin' | 'workspace' | null
  subtype: 'service' | 'user' | null
  user: { id: string; role: OrgRole } | null
  /** A workspace key's workspace, or the workspace a JWT is restricted to. */
  workspaceId: string | null
  memberships: ReadonlyMap<string, WorkspaceRole>
  /** Scopes the credential carries; null = the role's grants (a JWT without a scope claim). */
  scopes: ReadonlySet<string> | null
}

const GRANTS: Record<Authority, ReadonlySet<string>> = {
  org: ALL_SCOPES,
  admin: WORKSPACE_SCOPE_SET,
  manager: WORKSPACE_SCOPE_SET,
  member: MEMBER_SCOPES,
}

export class Principal {
  readonly organizationId: string
  readonly via: 'api_key' | 'jwt' | 'session'
  readonly keyId: string | null
  readonly keyType: 'admin' | 'workspace' | null
  readonly subtype: 'service' | 'user' | null
  readonly user: { id: string; role: OrgRole } | null
  readonly workspaceId: string | null
  readonly memberships: ReadonlyMap<string, WorkspaceRole>
  readonly scopes: ReadonlySet<string> | null

  constructor(init: PrincipalInit) {
    this.organizationId = init.organizationId
    this.via = init.via
    this.keyId = init.keyId
    this.keyType = init.keyType
    this.subtype = init.subtype
    this.user = init.user
    this.workspaceId = init.workspaceId
    this.memberships = init.memberships
    this.scopes = init.scopes
  }

  get isOrgAdminUser(): boolean {
    return this.user?.role === 'owner' || this.user?.role === 'admin'
  }

  /** True when the principal acts for the whole organisation (not confined to workspaces). */
  get isOrganisationLevel(): boolean {
    return this.authority(null) === 'org'
  }

  /**
   * Authority over `workspaceId`, or over the organisation itself when null. Null means none.
   */
  authority(workspaceId: string | null): Authority | null {
    if (this.keyType === 'admin') {
      // An admin user key is only as strong as its user: a demoted owner's key loses its power.
      return this.subtype === 'service' || this.isOrgAdminUser ? 'org' : null
    }
    if (this.keyType === 'workspace') {
      if (workspaceId === null || workspaceId !== this.workspaceId) return null
      if (this.subtype === 'service') return 'manager'
      return this.isOrgAdminUser ? 'admin' : this.memberships.get(workspaceId) ?? null
    }
    // JWT or SSO session: the user's own standing, optionally confined to one workspace by a claim.
    if (this.workspaceId !== null) {
      if (workspaceId !== this.workspaceId) return null
      return this.isOrgAdminUser ? 'admin' : this.memberships.get(workspaceId) ?? null
    }
    if (this.isOrgAdminUser) return 'org'
    return workspaceId === null ? null : this.memberships.get(workspaceId) ?? null
  }

  /** Scopes this principal actually holds in `workspaceId` (or organisation-wide when null). */
  effectiveScopes(workspaceId: string | null): ReadonlySet<string> {
    const authority = this.authority(workspaceId)
    if (authority === null) return new Set()
    const grants = GRANTS[authority]
    if (this.scopes === null) return grants
    return new Set([...this.scopes].filter((scope) => grants.has(scope)))
  }

  has(scope: string, workspaceId: string | null): boolean {
    return this.effectiveScopes(workspaceId).has(scope)
  }

  /** The workspaces this principal can see anything in (null = all of them). */
  visibleWorkspaceIds(): string[] | null {
    if (this.isOrganisationLevel) return null
    if (this.workspaceId !== null) return [this.workspaceId]
    return [...this.memberships.keys()]
  }

  /** Audit identity: never the key material. */
  get actor(): { type: 'api_key' | 'user'; id: string } {
    if (this.via === 'api_key' && this.keyId) return { type: 'api_key', id: this.keyId }
    return { type: 'user', id: this.user?.id ?? 'unknown' }
  }
}
