/**
 * Organisation settings (one jsonb document on the organisation row) and their workspace overrides.
 *
 * - session_settings.max_session_ttl: seconds, at least 900. A session is a JWT; its start is the
 *   `auth_time` claim when present, else `iat`. Older sessions are refused.
 * - security_settings: who may see request/response data, prompts and analytics. Workspaces may
 *   override each of these.
 * - api_key_settings: per-workspace cap on user keys, default and maximum expiry of user keys.
 *   Workspaces may override these too.
 */
import { z } from 'zod'

export const MIN_SESSION_TTL_SECONDS = 900
export const DEFAULT_SESSION_TTL_SECONDS = 86_400

const visibility = z.enum(['all_members', 'managers_and_admins', 'admins_only'])

export const securitySettingsSchema = z.strictObject({
  data_visibility: z.strictObject({
    /** Who may read request and response bodies in logs. */
    request_response_bodies: visibility.optional(),
    /** Mask bodies in log views for everyone below the chosen level. */
    mask_bodies: z.boolean().optional(),
  }).optional(),
  prompt_access: z.strictObject({
    view: visibility.optional(),
    edit: visibility.optional(),
  }).optional(),
  analytics_access: z.strictObject({
    view: visibility.optional(),
  }).optional(),
})

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
  security_settings: {
    data_visibility: { request_response_bodies: 'all_members', mask_bodies: false },
    prompt_access: { view: 'all_members', edit: 'managers_and_admins' },
    analytics_access: { view: 'all_members' },
  },
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
  return mergeSettings(mergeSettings(DEFAULT_SETTINGS as OrganisationSettings, organisation), workspace)
}

export function maxSessionTtlSeconds(organisation: unknown): number {
  return effectiveSettings(organisation).session_settings?.max_session_ttl ?? DEFAULT_SESSION_TTL_SECONDS
}
