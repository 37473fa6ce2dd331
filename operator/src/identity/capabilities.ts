/**
 * The spec's capability table, as code. Route handlers ask `require(principal, capability, action,
 * workspaceId)`; this is the one place that knows which key type may do what.
 *
 * | Operation                       | Admin API key       | Workspace API key  |
 * |---------------------------------|---------------------|--------------------|
 * | Manage organization settings    | yes                 | no                 |
 * | Create or manage workspaces     | yes                 | no                 |
 * | Manage users and permissions    | yes                 | no                 |
 * | Create or manage configs        | yes, all workspaces | yes, its workspace |
 * | Create or manage providers      | yes, all workspaces | yes, its workspace |
 * | Access analytics                | yes, all workspaces | yes, its workspace |
 * | Create or update feedback       | no                  | yes                |
 */
import { forbidden } from '../errors.ts'
import type { Principal } from './principal.ts'

export type Capability =
  | 'organisation_settings'
  | 'workspaces'
  | 'users'
  | 'configs'
  | 'providers'
  | 'analytics'
  | 'feedback'
  | 'audit_logs'

export type Action = 'create' | 'read' | 'update' | 'delete' | 'list' | 'view' | 'write'

interface Rule {
  /** Organisation-wide capability: needs authority 'org'. Otherwise judged per workspace. */
  organisationOnly: boolean
  /** Refused to admin keys whatever their scopes (feedback belongs to a workspace's traffic). */
  workspaceCredentialOnly?: boolean
  /** The scope(s) granting `action`; holding any one of them is enough. */
  scope: (action: Action) => string | readonly string[]
}

const RULES: Record<Capability, Rule> = {
  organisation_settings: { organisationOnly: true, scope: (a) => `organisation_settings.${a === 'read' ? 'read' : 'update'}` },
  workspaces: { organisationOnly: true, scope: (a) => `workspaces.${a}` },
  users: { organisationOnly: true, scope: (a) => `organisation_users.${a}` },
  configs: { organisationOnly: false, scope: (a) => `configs.${a}` },
  // Providers were called virtual keys; keys minted with the older scope names keep their rights.
  providers: { organisationOnly: false, scope: (a) => [`providers.${a}`, `virtual_keys.${a}`] },
  analytics: { organisationOnly: false, scope: () => 'analytics.view' },
  feedback: { organisationOnly: false, workspaceCredentialOnly: true, scope: () => 'logs.write' },
  audit_logs: { organisationOnly: true, scope: () => 'audit_logs.list' },
}

/** Whether the principal may perform `action` on `capability` (in `workspaceId` when given). */
export function can(principal: Principal, capability: Capability, action: Action, workspaceId: string | null = null): boolean {
  const rule = RULES[capability]
  if (rule.workspaceCredentialOnly && principal.keyType === 'admin') return false
  const target = rule.organisationOnly ? null : workspaceId ?? principal.workspaceId
  if (rule.organisationOnly && !principal.isOrganisationLevel) return false
  const scopes = rule.scope(action)
  return (typeof scopes === 'string' ? [scopes] : scopes).some((scope) => principal.has(scope, target))
}

/** Throws AB03 (403) when `can` says no. */
export function requireCapability(principal: Principal, capability: Capability, action: Action, workspaceId: string | null = null): void {
  if (!can(principal, capability, action, workspaceId)) {
    throw forbidden(`this credential may not ${action} ${capability.replace('_', ' ')}${workspaceId ? ' in this workspace' : ''}`)
  }
}
