/**
 * Where a limit's counter lives, shared by the gateway (which counts) and the control plane (which
 * reads budgets back for `usage_limits.current_usage`).
 *
 * Budgets are counted per period: a calendar week (from Monday 00:00 UTC) or month (from the 1st)
 * for `periodic_reset`, N days from the period anchor for `periodic_reset_days`, forever
 * otherwise. The anchor (`periodStartedAt`, the last manual reset) is part of the key too, so a
 * reset starts a fresh counter at once, on every replica, with no counter to wipe. Rate limits
 * slide and need no period.
 *
 * All of an organisation's counters carry one hash tag, `{<organisation id>}`: the counters a
 * request touches (its key's, its workspace's, the policies') are then in one Redis Cluster slot
 * and one script checks them atomically.
 */
import { createHash } from 'node:crypto'
import type { SnapshotLimit } from './policies.ts'

const DAY_MS = 86_400_000

type PeriodFields = Pick<SnapshotLimit, 'kind' | 'periodicReset' | 'periodicResetDays' | 'periodStartedAt'>

export interface LimitPeriod {
  /** Names the period inside the counter key. */
  readonly label: string
  /** When the period ends (the next reset), null for a budget that never resets. */
  readonly endsAtMs: number | null
}

export function limitPeriod(limit: PeriodFields, nowMs: number): LimitPeriod {
  const anchor = limit.periodStartedAt === null ? 0 : Date.parse(limit.periodStartedAt)
  const base = `@${anchor}`
  if (limit.kind === 'rate') return { label: '', endsAtMs: null }
  const now = new Date(nowMs)
  if (limit.periodicReset === 'monthly') {
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)
    return { label: `${base}m${start}`, endsAtMs: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) }
  }
  if (limit.periodicReset === 'weekly') {
    const daysSinceMonday = (now.getUTCDay() + 6) % 7
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - daysSinceMonday)
    return { label: `${base}w${start}`, endsAtMs: start + 7 * DAY_MS }
  }
  if (limit.periodicResetDays !== null) {
    const lengthMs = limit.periodicResetDays * DAY_MS
    const index = Math.max(0, Math.floor((nowMs - anchor) / lengthMs))
    return { label: `${base}d${index}`, endsAtMs: anchor + (index + 1) * lengthMs }
  }
  return { label: base, endsAtMs: null }
}

/**
 * The counter's key: prefix, organisation hash tag, kind, limit id, period and the group (a digest
 * of the group_by values, `-` when the limit has no group_by).
 */
export function limitCounterKey(prefix: string, organizationId: string, limit: PeriodFields & Pick<SnapshotLimit, 'id'>, groupValues: readonly string[], nowMs: number): string {
  const group = groupValues.length === 0 ? '-' : createHash('sha256').update(JSON.stringify(groupValues)).digest('base64url').slice(0, 22)
  return `${prefix}{${organizationId}}:${limit.kind === 'rate' ? 'r' : 'b'}:${limit.id}:${limitPeriod(limit, nowMs).label}:${group}`
}
