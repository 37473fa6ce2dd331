/**
 * Usage limits and rate limits shared by workspaces and API keys, validated strictly (unknown
 * fields are a 400): the spec's bounds live here once.
 */
import { z } from 'zod'

const DAY_MS = 86_400_000

export const PERIODIC_RESET_DAYS_MIN = 1
export const PERIODIC_RESET_DAYS_MAX = 365

export const usageLimitsSchema = z.strictObject({
  credit_limit: z.number().min(0),
  type: z.enum(['cost', 'tokens']).default('cost'),
  alert_threshold: z.number().min(0).nullable().optional(),
  periodic_reset: z.enum(['weekly', 'monthly']).nullable().optional(),
  periodic_reset_days: z.int().min(PERIODIC_RESET_DAYS_MIN).max(PERIODIC_RESET_DAYS_MAX).nullable().optional(),
  next_usage_reset_at: z.iso.datetime({ offset: true }).nullable().optional(),
}).superRefine((value, ctx) => {
  if (value.periodic_reset != null && value.periodic_reset_days != null) {
    ctx.addIssue({ code: 'custom', path: ['periodic_reset_days'], message: 'periodic_reset and periodic_reset_days are mutually exclusive' })
  }
  if (value.alert_threshold != null && value.alert_threshold > value.credit_limit) {
    ctx.addIssue({ code: 'custom', path: ['alert_threshold'], message: 'alert_threshold must not exceed credit_limit' })
  }
})

export type UsageLimits = z.infer<typeof usageLimitsSchema>

const rateLimitUnits = ['rpm', 'rph', 'rpd', 'rpw'] as const

export const workspaceRateLimitSchema = z.strictObject({
  type: z.enum(['requests', 'tokens']),
  unit: z.enum(rateLimitUnits),
  value: z.int().min(0),
})

/** API keys additionally allow per-second limits. */
export const keyRateLimitSchema = z.strictObject({
  type: z.enum(['requests', 'tokens']),
  unit: z.enum([...rateLimitUnits, 'rps']),
  value: z.int().min(0),
})

/**
 * When a periodic limit next resets, if the caller did not say: weekly at the next Monday 00:00
 * UTC, monthly on the 1st at 00:00 UTC, every N days at now + N days. Null for no periodic reset.
 */
export function nextUsageResetAt(limits: UsageLimits, now: Date): string | null {
  if (limits.next_usage_reset_at) return new Date(limits.next_usage_reset_at).toISOString()
  if (limits.periodic_reset_days != null) return new Date(now.getTime() + limits.periodic_reset_days * DAY_MS).toISOString()
  if (limits.periodic_reset === 'monthly') return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString()
  if (limits.periodic_reset === 'weekly') {
    const daysToMonday = ((8 - now.getUTCDay()) % 7) || 7
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + daysToMonday)).toISOString()
  }
  return null
}

/** The earliest reset among several limits (a workspace may carry one per type). */
export function earliestReset(limits: readonly UsageLimits[], now: Date): string | null {
  const times = limits.map((limit) => nextUsageResetAt(limit, now)).filter((t): t is string => t !== null).sort()
  return times[0] ?? null
}
