/** Pure rules: usage-reset dates, settings merging, scope catalogue, audit redaction. */
import { describe, expect, it } from 'vitest'
import { redact, REDACTED } from '../admin/audit.ts'
import { nextRotationAt } from './api-keys.ts'
import { earliestReset, nextUsageResetAt, usageLimitsSchema } from './limits.ts'
import { effectiveSettings, organisationSettingsSchema } from './settings.ts'
import { ALL_SCOPES, normaliseScope, ORGANISATION_SCOPES, WORKSPACE_SCOPES } from './scopes.ts'

const now = new Date('2030-01-16T10:00:00Z') // a Wednesday

describe('usage limits', () => {
  it('computes the next reset for weekly, monthly and N-day periods', () => {
    const limit = (extra: object) => usageLimitsSchema.parse({ credit_limit: 10, ...extra })
    expect(nextUsageResetAt(limit({ periodic_reset: 'weekly' }), now)).toBe('2030-01-21T00:00:00.000Z')
    expect(nextUsageResetAt(limit({ periodic_reset: 'monthly' }), now)).toBe('2030-02-01T00:00:00.000Z')
    expect(nextUsageResetAt(limit({ periodic_reset_days: 365 }), now)).toBe('2031-01-16T10:00:00.000Z')
    expect(nextUsageResetAt(limit({}), now)).toBeNull()
    expect(nextUsageResetAt(limit({ periodic_reset_days: 1, next_usage_reset_at: '2030-03-01T00:00:00Z' }), now)).toBe('2030-03-01T00:00:00.000Z')
    expect(earliestReset([limit({ periodic_reset: 'monthly' }), limit({ periodic_reset_days: 2 })], now)).toBe('2030-01-18T10:00:00.000Z')
  })

  it('holds the 1..365 bound and the mutual exclusion', () => {
    for (const days of [0, 366, 2.5, -1]) expect(usageLimitsSchema.safeParse({ credit_limit: 1, periodic_reset_days: days }).success).toBe(false)
    for (const days of [1, 365]) expect(usageLimitsSchema.safeParse({ credit_limit: 1, periodic_reset_days: days }).success).toBe(true)
    expect(usageLimitsSchema.safeParse({ credit_limit: 1, periodic_reset: 'weekly', periodic_reset_days: 7 }).success).toBe(false)
  })
})

describe('rotation schedule', () => {
  it('rotates weekly after 7 days and monthly on the same day, clamped to the month end', () => {
    const policy = { key_transition_period_ms: 1_800_000 }
    expect(nextRotationAt({ ...policy, rotation_period: 'weekly' }, now)).toBe('2030-01-23T10:00:00.000Z')
    expect(nextRotationAt({ ...policy, rotation_period: 'monthly' }, now)).toBe('2030-02-16T10:00:00.000Z')
    expect(nextRotationAt({ ...policy, rotation_period: 'monthly' }, new Date('2030-01-31T08:00:00Z'))).toBe('2030-02-28T08:00:00.000Z')
    expect(nextRotationAt({ ...policy, rotation_period: 'monthly' }, new Date('2030-12-31T08:00:00Z'))).toBe('2031-01-31T08:00:00.000Z')
    expect(nextRotationAt({ ...policy, next_rotation_at: '2030-05-01T00:00:00Z' }, now)).toBeNull()
  })
})

describe('settings', () => {
  it('layers defaults, organisation and workspace values', () => {
    const merged = effectiveSettings({ api_key_settings: { user_key_max_expiry_days: 90 } }, { api_key_settings: { user_keys_per_workspace_max: 3 } })
    expect(merged.api_key_settings).toEqual({ user_keys_per_workspace_max: 3, user_key_default_expiry_days: null, user_key_max_expiry_days: 90 })
    expect(merged.session_settings?.max_session_ttl).toBe(86_400)
  })

  it('holds the 900-second session minimum and default <= maximum expiry', () => {
    expect(organisationSettingsSchema.safeParse({ session_settings: { max_session_ttl: 899 } }).success).toBe(false)
    expect(organisationSettingsSchema.safeParse({ session_settings: { max_session_ttl: 900 } }).success).toBe(true)
    expect(organisationSettingsSchema.safeParse({ api_key_settings: { user_key_default_expiry_days: 30, user_key_max_expiry_days: 10 } }).success).toBe(false)
  })
})

describe('scopes', () => {
  it('has read and list scopes for control-plane resources, and spec-spelled deployment scopes', () => {
    for (const resource of ['workspaces', 'configs', 'providers', 'organisation_users', 'workspace_service_api_keys']) {
      expect(ALL_SCOPES.has(`${resource}.read`)).toBe(true)
      expect(ALL_SCOPES.has(`${resource}.list`)).toBe(true)
    }
    expect(ALL_SCOPES.has('deployments:create')).toBe(true)
    expect(normaliseScope('deployments.list')).toBe('deployments:list')
    expect(ALL_SCOPES.has('mcp.invoke')).toBe(true)
    // Only reading one's own workspace is shared between the two families.
    expect(ORGANISATION_SCOPES.filter((scope) => WORKSPACE_SCOPES.includes(scope)).sort()).toEqual(['workspaces.list', 'workspaces.read'])
  })
})

describe('audit redaction', () => {
  it('drops secret fields and key, JWT and digest material wherever they appear', () => {
    const raw = 'ghk_adm_0123456789ABCDEFGHIJKLMNOPQRSTUVWabcdef'
    const out = redact({
      name: 'n', key_transition_period_ms: 1_800_000, api_key: 'x', credentials: { apiKey: 'sk' }, password: 'p',
      note: `leaked ${raw} here`, list: [{ token: 't' }], jwt: 'eyJhbGciOi.eyJzdWIiOi.sig', digest: 'a'.repeat(64), long: 'z'.repeat(5000),
    }) as Record<string, unknown>
    expect(out).toMatchObject({ name: 'n', key_transition_period_ms: 1_800_000, api_key: REDACTED, credentials: REDACTED, password: REDACTED, list: [{ token: REDACTED }] })
    expect(out.note).toBe(`leaked ${REDACTED} here`)
    expect(out.jwt).toBe(REDACTED)
    expect(out.digest).toBe(REDACTED)
    expect((out.long as string).length).toBeLessThan(2100)
  })
})
