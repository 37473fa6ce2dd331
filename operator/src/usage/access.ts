/**
 * Who may read logs and analytics, from the security settings of the spec:
 *
 *   membersViewAllData, managersViewAllData      (default true): see every request of the
 *     workspace; when false, only the requests made with their own keys (as their user);
 *   membersViewAnalytics, managersViewAnalytics  (default true): see analytics at all;
 *
 * each overridable per workspace. Organisation owners and admins (and admin keys) always see
 * everything; workspace keys see only their workspace. `securityFlags` is the only reader of the
 * settings document, so renaming its fields changes this one function.
 */
import { forbidden } from '../errors.ts'
import type { Principal } from '../identity/principal.ts'
import { effectiveSettings } from '../identity/settings.ts'
import type { Store } from '../store/index.ts'

export interface SecurityFlags {
  membersViewAllData: boolean
  managersViewAllData: boolean
  membersViewAnalytics: boolean
  managersViewAnalytics: boolean
}

/** The spec's flags from an effective (defaults <- organisation <- workspace) settings document. */
export function securityFlags(organisationSettings: unknown, workspaceSettings: unknown): SecurityFlags {
  const settings = effectiveSettings(organisationSettings, workspaceSettings) as Record<string, unknown>
  const security = (settings.security_settings ?? {}) as Record<string, unknown>
  const flag = (name: keyof SecurityFlags): boolean | undefined => (typeof security[name] === 'boolean' ? (security[name] as boolean) : undefined)
  const bodies = (security.data_visibility as { request_response_bodies?: string } | undefined)?.request_response_bodies
  const analytics = (security.analytics_access as { view?: string } | undefined)?.view
  return {
    membersViewAllData: flag('membersViewAllData') ?? (bodies === undefined || bodies === 'all_members'),
    managersViewAllData: flag('managersViewAllData') ?? bodies !== 'admins_only',
    membersViewAnalytics: flag('membersViewAnalytics') ?? (analytics === undefined || analytics === 'all_members'),
    managersViewAnalytics: flag('managersViewAnalytics') ?? analytics !== 'admins_only',
  }
}

/** What a principal may read in one workspace: nothing, only its user's requests, or everything. */
export interface WorkspaceReach {
  workspaceId: string
  /** Set: only requests of this user. */
  onlyUserId: string | null
}

/**
 * The workspaces (and per workspace, whose requests) a principal may read logs or analytics of.
 * null = the whole organisation. `workspaceIds` narrows to the named ones.
 */
export async function readableScope(
  store: Store,
  principal: Principal,
  kind: 'logs' | 'analytics',
  scopes: string | readonly string[],
  workspaceIds: readonly string[] | null,
): Promise<WorkspaceReach[] | null> {
  const wanted = typeof scopes === 'string' ? [scopes] : scopes
  const scope = wanted.join(' or ')
  const holds = (workspaceId: string | null): boolean => wanted.some((name) => principal.has(name, workspaceId))
  if (principal.isOrganisationLevel && workspaceIds === null) {
    if (!holds(null)) throw forbidden(`this credential may not read ${kind} (needs ${scope})`)
    return null
  }
  const candidates = workspaceIds ?? principal.visibleWorkspaceIds() ?? []
  const organization = await store.organizations.first()
  const reach: WorkspaceReach[] = []
  for (const workspaceId of candidates) {
    const authority = principal.authority(workspaceId)
    if (authority === null || !holds(workspaceId)) continue
    if (authority === 'org' || authority === 'admin') {
      reach.push({ workspaceId, onlyUserId: null })
      continue
    }
    const workspace = await store.workspaces.get(principal.organizationId, workspaceId)
    const flags = securityFlags(organization?.settings, workspace?.settings)
    const manager = authority === 'manager'
    if (kind === 'analytics') {
      if (manager ? flags.managersViewAnalytics : flags.membersViewAnalytics) reach.push({ workspaceId, onlyUserId: null })
      continue
    }
    const all = manager ? flags.managersViewAllData : flags.membersViewAllData
    // A workspace service key has no user: without "view all data" it sees nothing.
    if (all) reach.push({ workspaceId, onlyUserId: null })
    else if (principal.user) reach.push({ workspaceId, onlyUserId: principal.user.id })
  }
  if (reach.length === 0) throw forbidden(`this credential may not read ${kind} ${workspaceIds ? 'of that workspace' : 'of any workspace'} (needs ${scope})`)
  return reach
}
