/**
 * Who may see and change prompts (and their partials, labels and collections) in a workspace: the
 * spec's security settings, each overridable per workspace,
 *
 *   membersViewPrompts (default true)    membersWritePrompts (default false)
 *   managersViewPrompts (default true)   managersWritePrompts (default true)
 *
 * Organisation owners and admins, workspace admins and admin keys always may. For members and
 * managers (workspace service keys act as managers) the setting is the role's grant, and the
 * credential must still carry the `prompts.<action>` scope. Reading is list/read; writing is
 * create/update/delete/publish.
 */
import { forbidden } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import { effectiveSettings, SECURITY_SETTING_DEFAULTS } from '../../identity/settings.ts'
import type { AdminContext } from '../context.ts'

export type PromptScopeAction = 'create' | 'read' | 'update' | 'delete' | 'list' | 'publish'

const WRITES: ReadonlySet<PromptScopeAction> = new Set(['create', 'update', 'delete', 'publish'])

type PromptFlag = 'membersViewPrompts' | 'membersWritePrompts' | 'managersViewPrompts' | 'managersWritePrompts'

/** The effective setting for a role and kind of access in a workspace (defaults <- organisation <- workspace). */
async function promptFlag(ctx: AdminContext, principal: Principal, workspaceId: string, flag: PromptFlag): Promise<boolean> {
  const [organisation, workspace] = await Promise.all([ctx.store.organizations.get(principal.organizationId), ctx.store.workspaces.get(principal.organizationId, workspaceId)])
  const security = (effectiveSettings(organisation?.settings, workspace?.settings).security_settings ?? {}) as Record<string, unknown>
  const value = security[flag]
  return typeof value === 'boolean' ? value : SECURITY_SETTING_DEFAULTS[flag]
}

/** Whether the principal may perform `action` on prompts of `workspaceId`. */
export async function mayPrompt(ctx: AdminContext, principal: Principal, workspaceId: string, action: PromptScopeAction): Promise<boolean> {
  const scope = `prompts.${action}`
  const authority = principal.authority(workspaceId)
  if (authority === null) return false
  if (authority === 'org' || authority === 'admin') return principal.has(scope, workspaceId)
  const write = WRITES.has(action)
  const flag: PromptFlag = authority === 'manager' ? (write ? 'managersWritePrompts' : 'managersViewPrompts') : (write ? 'membersWritePrompts' : 'membersViewPrompts')
  if (!(await promptFlag(ctx, principal, workspaceId, flag))) return false
  return principal.scopes === null || principal.scopes.has(scope)
}

/** Throws AB03 (403) naming the setting's kind of access when `mayPrompt` says no. */
export async function requirePromptAccess(ctx: AdminContext, principal: Principal, workspaceId: string, action: PromptScopeAction): Promise<void> {
  if (await mayPrompt(ctx, principal, workspaceId, action)) return
  const kind = WRITES.has(action) ? 'write' : 'view'
  throw forbidden(`this credential may not ${kind} prompts in this workspace (prompts.${action}; organisation prompt settings)`)
}
