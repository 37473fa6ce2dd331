/**
 * Scope catalog. Scopes are `resource.action` strings (deployments use the spec's `deployments:action`
 * spelling; `deployments.action` is accepted and normalised). Organisation scopes act on the
 * organisation itself and can only be held by admin (organisation) keys or owners/admins; workspace
 * scopes act inside one workspace. `list` and `read` are separate: list does not imply read.
 */
const CRUD = ['create', 'read', 'update', 'delete', 'list'] as const

function family(resource: string, extra: readonly string[] = [], actions: readonly string[] = CRUD, separator = '.'): string[] {
  return [...actions, ...extra].map((action) => `${resource}${separator}${action}`)
}

export const ORGANISATION_SCOPES: readonly string[] = [
  ...family('organisation_settings', [], ['read', 'update']),
  ...family('workspaces'),
  ...family('organisation_users'),
  ...family('workspace_users'),
  ...family('organisation_service_api_keys', ['rotate']),
  ...family('organisation_user_api_keys', ['rotate']),
  'audit_logs.list',
  ...family('secret_references'),
  ...family('organisation_integrations'),
  ...family('organisation_guardrails'),
  ...family('organisation_mcp_integrations'),
  ...family('organisation_agent_integrations'),
  ...family('organisation_exclusions', [], ['update', 'list']),
  ...family('plugins', [], ['create', 'update', 'list']),
]

export const WORKSPACE_SCOPES: readonly string[] = [
  // A workspace principal may read (only) its own workspace.
  'workspaces.read',
  'workspaces.list',
  ...family('workspace_service_api_keys', ['rotate']),
  ...family('workspace_user_api_keys', ['rotate']),
  ...family('configs'),
  ...family('providers'),
  ...family('virtual_keys', ['duplicate', 'copy']),
  ...family('prompts', ['publish', 'render']),
  ...family('guardrails', ['invoke']),
  ...family('policies'),
  ...family('workspace_integrations'),
  ...family('workspace_mcp_integrations'),
  ...family('workspace_agent_integrations'),
  ...family('mcp_servers'),
  ...family('agent_servers'),
  ...family('deployments', [], CRUD, ':'),
  'mcp.invoke',
  'agents.invoke',
  'analytics.view',
  ...family('logs', [], ['list', 'view', 'export', 'write', 'read']),
  'completions.write',
]

export const ALL_SCOPES: ReadonlySet<string> = new Set([...ORGANISATION_SCOPES, ...WORKSPACE_SCOPES])
export const WORKSPACE_SCOPE_SET: ReadonlySet<string> = new Set(WORKSPACE_SCOPES)

/** What a workspace member (not manager) may do: use the gateway and read, never administer. */
export const MEMBER_SCOPES: ReadonlySet<string> = new Set([
  'workspaces.read',
  'workspaces.list',
  'workspace_user_api_keys.read',
  'workspace_user_api_keys.list',
  'completions.write',
  'configs.read', 'configs.list',
  'providers.read', 'providers.list',
  'virtual_keys.read', 'virtual_keys.list',
  'prompts.read', 'prompts.list', 'prompts.render',
  'guardrails.read', 'guardrails.list',
  'logs.read', 'logs.list', 'logs.view', 'logs.write',
  'mcp.invoke', 'agents.invoke',
  'deployments:read', 'deployments:list',
])

/** Accepts `deployments.create` for `deployments:create` (one rule for the admin API and the data plane). */
export { normaliseScope } from '@gatehouse/gateway/snapshot'
