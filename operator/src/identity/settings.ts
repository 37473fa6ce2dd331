/**
 * Organisation settings (one jsonb document on the organisation row) and their workspace overrides.
 *
 * - session_settings.max_session_ttl: seconds, at least 900. A session is a JWT; its start is the
 *   `auth_time` claim when present, else `iat`. Older sessions are refused.
 * - security_settings: the spec's membersViewAllData, managersViewAllData, members/managers
 *   View/WritePrompts and members/managersViewAnalytics flags (defaults below). Workspaces may
 *   override each of these.
 * - api_key_settings: per-workspace cap on user keys, default and maximum expiry of user keys.
 *   Workspaces may override these too.
 */
import { z } from 'zod'

export const MIN_SESSION_TTL_SECONDS = 900
export const DEFAULT_SESSION_TTL_SECONDS = 86_400

/**
 * The spec's security settings: who below organisation owner and admin (who always see and do
 * everything) may see request and response data, view or write prompts, and view analytics.
 */
export const SECURITY_SETTING_DEFAULTS = {
  membersViewAllData: true,
  managersViewAllData: true,
  membersViewPrompts: true,
  membersWritePrompts: false,
  managersViewPrompts: true,
  managersWritePrompts: true,
  membersViewAnalytics: true,
  managersViewAnalytics: true,
} as const

export const securitySettingsSchema = z.strictObject(
  Object.fromEntries(Object.keys(SECURITY_SETTING_DEFAULTS).map((name) => [name, z.boolean().optional()])) as Record<keyof typeof SECURITY_SETTING_DEFAULTS, z.ZodOptional<z.ZodBoolean>>,
)

type Visibility = 'all_members' | 'managers_and_admins' | 'admins_only'

function visibilityFlags(level: unknown, members: string, managers: string): Record<string, boolean> {
  if (level !== 'all_members' && level !== 'managers_and_admins' && level !== 'admins_only') return {}
  const shown = level as Visibility
  return { [members]: shown === 'all_members', [managers]: shown !== 'admins_only' }
}

/**
 * Security settings stored under the earlier names (data_visibility, prompt_access,
 * analytics_access with visibility levels) read as the spec's flags. Migration 0003 rewrites
 * stored documents; this keeps any document written since by an older replica readable.
 */
export function normaliseSecuritySettings(stored: unknown): unknown {
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) return stored
  const { data_visibility: data, prompt_access: prompts, analytics_access: analytics, ...current } = stored as Record<string, Record<string, unknown> | undefined>
  if (data === undefined && prompts === undefined && analytics === undefined) return stored
  return {
    ...visibilityFlags(data?.request_response_bodies, 'membersViewAllData', 'managersViewAllData'),
    ...visibilityFlags(prompts?.view, 'membersViewPrompts', 'managersViewPrompts'),
    ...visibilityFlags(prompts?.edit, 'membersWritePrompts', 'managersWritePrompts'),
    ...visibilityFlags(analytics?.view, 'membersViewAnalytics', 'managersViewAnalytics'),
    ...current,
  }
}

/** A settings document (organisation or workspace) with its security settings under the spec's names. */
export function normaliseSettings<T extends Record<string, unknown>>(stored: T): T {
  if (!('security_settings' in stored)) return stored
  return { ...stored, security_settings: normaliseSecuritySettings(stored.security_settings) }
}

export const apiKeySettingsSchema = z.strictObject({
  user_keys_per_workspace_max: z.int().min(0).max(100_000).nullable().optional(),
  user_key_default_expiry_days: z.int().min(1).max(3650).nullable().optional(),
  user_key_max_expiry_days: z.int().min(1).max(3650).nullable().optional(),
}).superRefine((value, ctx) => {
  if (value.user_key_default_expiry_days != null && value.user_key_max_expiry_days != null && value.user_key_default_expiry_days > value.user_key_max_expiry_days) {
    ctx.addIssue({ code: 'custom', path: ['user_key_default_expiry_days'], message: 'the default expiry must not exceed the maximum expiry' })
  }
})

/** What usage logs keep of each request: counts only (`off`), plus metadata, or the redacted bodies too. */
export const logSettingsSchema = z.strictObject({
  level: z.enum(['off', 'metadata', 'full']).optional(),
})

export const organisationSettingsSchema = z.strictObject({
  session_settings: z.strictObject({
    max_session_ttl: z.int().min(MIN_SESSION_TTL_SECONDS, `max_session_ttl must be at least ${MIN_SESSION_TTL_SECONDS} seconds`).max(31_536_000),
  }).optional(),
  security_settings: securitySettingsSchema.optional(),
  api_key_settings: apiKeySettingsSchema.optional(),
  /** Organisation only (workspaces cannot override): let every provider reach private networks. */
  network_settings: z.strictObject({ allow_private_networks: z.boolean().optional() }).optional(),
  log_settings: logSettingsSchema.optional(),
})

export const workspaceSettingsSchema = z.strictObject({
  security_settings: securitySettingsSchema.optional(),
  api_key_settings: apiKeySettingsSchema.optional(),
  log_settings: logSettingsSchema.optional(),
})

export type OrganisationSettings = z.infer<typeof organisationSettingsSchema>
export type WorkspaceSettings = z.infer<typeof workspaceSettingsSchema>
export type ApiKeySettings = z.infer<typeof apiKeySettingsSchema>

export const DEFAULT_SETTINGS = {
  session_settings: { max_session_ttl: DEFAULT_SESSION_TTL_SECONDS },
  security_settings: SECURITY_SETTING_DEFAULTS,
  api_key_settings: { user_keys_per_workspace_max: null, user_key_default_expiry_days: null, user_key_max_expiry_days: null },
} as const satisfies OrganisationSettings

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Deep merge where `override` wins and `undefined` leaves the base value. */
export function mergeSettings<T>(base: T, override: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(override)) return (override === undefined ? base : override) as T
  const out: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue
    out[key] = isPlainObject(value) && isPlainObject(out[key]) ? mergeSettings(out[key], value) : value
  }
  return out as T
}

/** Defaults <- organisation <- workspace. */
export function effectiveSettings(organisation: unknown, workspace?: unknown): OrganisationSettings {
  return mergeSettings(mergeSettings(DEFAULT_SETTINGS as OrganisationSettings, isPlainObject(organisation) ? normaliseSettings(organisation) : organisation), isPlainObject(workspace) ? normaliseSettings(workspace) : workspace)
}

export function maxSessionTtlSeconds(organisation: unknown): number {
  return effectiveSettings(organisation).session_settings?.max_session_ttl ?? DEFAULT_SESSION_TTL_SECONDS
}
