/**
 * Where a limit's counter lives, shared by the gateway (which counts) and the control plane (which
 * reads budgets back for `usage_limits.current_usage`).
 *
 * Budgets are counted per period: a calendar week (from Monday 00:00 UTC) or month (from the 1st)
 * for `periodic_reset`, N days from the period anchor for `periodic_reset_days`, forever
 * otherwise. The anchor (`periodStartedAt`, the last reset) bounds the period from below, and an
 * explicit end (`periodEndsAt`, the stored `next_usage_reset_at`) holds the period open until it
 * passes; after it, periods run from that end. The counter key names the period by its start
 * time, so a manual reset (a later anchor) starts a fresh counter at once on every replica, while
 * the reset worker writing `last_reset_at` = the start of the period already running (and the next
 * end) leaves the key, and so what was spent, unchanged.
 *
 * All of an organisation's counters carry one hash tag, `{<organisation id>}`: the counters a
 * request touches (its key's, its workspace's, the policies') are then in one Redis Cluster slot
 * and one script checks them atomically.
 */
import { createHash } from 'node:crypto'
import type { SnapshotLimit } from './policies.ts'

const DAY_MS = 86_400_000

type PeriodFields = Pick<SnapshotLimit, 'kind' | 'periodicReset' | 'periodicResetDays' | 'periodStartedAt'> & Partial<Pick<SnapshotLimit, 'periodEndsAt'>>

export interface LimitPeriod {
  /** Names the period inside the counter key. */
  readonly label: string
  /** When the period started (the epoch for a budget that never reset). */
  readonly startsAtMs: number
  /** When the period ends (the next reset), null for a budget that never resets. */
  readonly endsAtMs: number | null
}

/** The period running at `nowMs` when periods are counted from `anchorMs`. */
function periodFrom(limit: PeriodFields, anchorMs: number, nowMs: number): { startsAtMs: number; endsAtMs: number | null } {
  const now = new Date(nowMs)
  if (limit.periodicReset === 'monthly') {
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)
    return { startsAtMs: Math.max(start, anchorMs), endsAtMs: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) }
  }
  if (limit.periodicReset === 'weekly') {
    const daysSinceMonday = (now.getUTCDay() + 6) % 7
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - daysSinceMonday)
    return { startsAtMs: Math.max(start, anchorMs), endsAtMs: start + 7 * DAY_MS }
  }
  if (limit.periodicResetDays !== null) {
    const lengthMs = limit.periodicResetDays * DAY_MS
    const index = Math.max(0, Math.floor((nowMs - anchorMs) / lengthMs))
    return { startsAtMs: anchorMs + index * lengthMs, endsAtMs: anchorMs + (index + 1) * lengthMs }
  }
  return { startsAtMs: anchorMs, endsAtMs: null }
}

export function limitPeriod(limit: PeriodFields, nowMs: number): LimitPeriod {
  if (limit.kind === 'rate') return { label: '', startsAtMs: 0, endsAtMs: null }
  const anchor = limit.periodStartedAt === null ? 0 : Date.parse(limit.periodStartedAt)
  const explicitEnd = limit.periodEndsAt ? Date.parse(limit.periodEndsAt) : null
  let period: { startsAtMs: number; endsAtMs: number | null }
  if (explicitEnd !== null && explicitEnd > anchor) {
    period = nowMs < explicitEnd ? { startsAtMs: anchor, endsAtMs: explicitEnd } : periodFrom(limit, explicitEnd, nowMs)
  } else {
    period = periodFrom(limit, anchor, nowMs)
  }
  return { label: `s${period.startsAtMs}`, ...period }
}

/** The group part of a counter key: a digest of the group_by values, `-` when the limit has none. */
function groupPart(groupValues: readonly string[]): string {
  return groupValues.length === 0 ? '-' : createHash('sha256').update(JSON.stringify(groupValues)).digest('base64url').slice(0, 22)
}

function counterKey(prefix: string, organizationId: string, limit: Pick<SnapshotLimit, 'id' | 'kind'>, periodLabel: string, group: string): string {
  return `${prefix}{${organizationId}}:${limit.kind === 'rate' ? 'r' : 'b'}:${limit.id}:${periodLabel}:${group}`
}

/**
 * The counter's key: prefix, organisation hash tag, kind, limit id, period and the group (a digest
 * of the group_by values, `-` when the limit has no group_by).
 */
export function limitCounterKey(prefix: string, organizationId: string, limit: PeriodFields & Pick<SnapshotLimit, 'id'>, groupValues: readonly string[], nowMs: number): string {
  return counterKey(prefix, organizationId, limit, limitPeriod(limit, nowMs).label, groupPart(groupValues))
}

/** Groups remembered per limit; past it, the limit's keys are forgotten and computed afresh. */
const MAX_GROUPS_PER_LIMIT = 10_000

interface LimitKeys {
  organizationId: string
  period: LimitPeriod
  /** Counter keys of the current period, by group (its one value, or its values as JSON). */
  readonly byGroup: Map<string, string>
}

/**
 * `limitCounterKey` for the request path: the same keys, remembered per limit (a snapshot's limit
 * objects live as long as their snapshot) and per group until the period ends, so a request costs
 * a map lookup instead of the period's date arithmetic and a SHA-256 of its group.
 */
export class LimitCounterKeys {
  readonly #prefix: string
  readonly #byLimit = new WeakMap<SnapshotLimit, LimitKeys>()

  constructor(prefix: string) {
    this.#prefix = prefix
  }

  keyOf(organizationId: string, limit: SnapshotLimit, groupValues: readonly string[], nowMs: number): string {
    let keys = this.#byLimit.get(limit)
    if (keys === undefined || keys.organizationId !== organizationId) {
      keys = { organizationId, period: limitPeriod(limit, nowMs), byGroup: new Map() }
      this.#byLimit.set(limit, keys)
    } else if (nowMs < keys.period.startsAtMs || (keys.period.endsAtMs !== null && nowMs >= keys.period.endsAtMs)) {
      // The period is a function of the time that is constant from its start to its end.
      keys.period = limitPeriod(limit, nowMs)
      keys.byGroup.clear()
    }
    const group = groupValues.length === 0 ? '' : groupValues.length === 1 ? groupValues[0]! : JSON.stringify(groupValues)
    let key = keys.byGroup.get(group)
    if (key === undefined) {
      if (keys.byGroup.size >= MAX_GROUPS_PER_LIMIT) keys.byGroup.clear()
      key = counterKey(this.#prefix, organizationId, limit, keys.period.label, groupPart(groupValues))
      keys.byGroup.set(group, key)
    }
    return key
  }
}
