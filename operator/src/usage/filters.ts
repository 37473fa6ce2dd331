/**
 * The filters of logs and analytics (the spec's shared query filters), parsed once and turned into
 * parameterised SQL over either source: raw `usage_logs`, or the `usage_rollups` when every filter
 * is one of the rollup's dimensions. Values always travel as parameters; only column names from
 * the fixed tables below reach the SQL text.
 */
import { z } from 'zod'
import { invalid } from '../errors.ts'
import type { WorkspaceReach } from './access.ts'

const csv = z.string().max(10_000).transform((value) => value.split(',').map((item) => item.trim()).filter((item) => item.length > 0))
const number = z.coerce.number().finite()
const isoTime = z.iso.datetime({ offset: true })

export const filterQuery = z.object({
  time_of_generation_min: isoTime.optional(),
  time_of_generation_max: isoTime.optional(),
  workspace_slug: z.string().max(255).optional(),
  workspace_id: z.string().max(255).optional(),
  api_key_ids: csv.optional(),
  virtual_keys: csv.optional(),
  providers: csv.optional(),
  ai_service: csv.optional(),
  ai_model: csv.optional(),
  ai_org_model: csv.optional(),
  configs: csv.optional(),
  prompt_slug: csv.optional(),
  status_code: csv.optional(),
  trace_id: z.string().max(256).optional(),
  span_id: z.string().max(256).optional(),
  user: z.string().max(255).optional(),
  metadata: z.string().max(8192).optional(),
  /** US cents, as the spec's analytics filters. */
  cost_min: number.optional(),
  cost_max: number.optional(),
  total_units_min: number.optional(),
  total_units_max: number.optional(),
  prompt_token_min: number.optional(),
  prompt_token_max: number.optional(),
  completion_token_min: number.optional(),
  completion_token_max: number.optional(),
  latency_min: number.optional(),
  latency_max: number.optional(),
  /** The weighted average of the feedback on the request's trace (requests without feedback never match). */
  weighted_feedback_min: number.optional(),
  weighted_feedback_max: number.optional(),
}).loose()

export type FilterQuery = z.infer<typeof filterQuery>

export type Source = 'logs' | 'minute' | 'hour'

/** A SQL condition list with its parameters, numbered from `$1`. */
export class Conditions {
  readonly parts: string[] = []
  readonly params: unknown[] = []

  param(value: unknown): string {
    this.params.push(value)
    return `$${this.params.length}`
  }

  add(sql: string): void {
    this.parts.push(sql)
  }

  get sql(): string {
    return this.parts.length === 0 ? 'TRUE' : this.parts.join(' AND ')
  }
}

export interface ParsedFilters {
  fromMs: number | null
  toMs: number | null
  query: FilterQuery
  metadata: Record<string, string> | null
  /** True when every filter can be answered from the rollups. */
  rollupable: boolean
}

/** Filters only raw log rows can answer; the rest are rollup dimensions. */
const LOG_ONLY_FILTERS = ['virtual_keys', 'ai_org_model', 'trace_id', 'span_id', 'user', 'metadata', 'cost_min', 'cost_max', 'total_units_min',
  'total_units_max', 'prompt_token_min', 'prompt_token_max', 'completion_token_min', 'completion_token_max', 'latency_min', 'latency_max',
  'weighted_feedback_min', 'weighted_feedback_max'] as const

export function parseFilters(query: unknown, parse: <S extends z.ZodType>(schema: S, value: unknown) => z.infer<S>): ParsedFilters {
  const q = parse(filterQuery, query)
  const fromMs = q.time_of_generation_min ? Date.parse(q.time_of_generation_min) : null
  const toMs = q.time_of_generation_max ? Date.parse(q.time_of_generation_max) : null
  if (fromMs !== null && toMs !== null && fromMs >= toMs) throw invalid('time_of_generation_min', 'time_of_generation_min must be before time_of_generation_max')
  let metadata: Record<string, string> | null = null
  if (q.metadata !== undefined) {
    let parsed: unknown
    try {
      parsed = JSON.parse(q.metadata)
    } catch {
      throw invalid('metadata', 'metadata must be a JSON object of strings')
    }
    const checked = z.record(z.string().max(255), z.union([z.string(), z.number(), z.boolean()]).transform(String)).safeParse(parsed)
    if (!checked.success) throw invalid('metadata', 'metadata must be a JSON object of strings')
    metadata = checked.data
  }
  for (const code of q.status_code ?? []) if (!/^\d{3}$/.test(code)) throw invalid('status_code', 'status_code must be comma-separated three-digit codes')
  const rollupable = LOG_ONLY_FILTERS.every((name) => q[name] === undefined)
  return { fromMs, toMs, query: q, metadata, rollupable }
}

/** Column names per source for the filterable dimensions (rollups store '' where logs store NULL). */
const COLUMN: Record<string, { logs: string; rollup: string }> = {
  api_key: { logs: 'api_key_id', rollup: 'api_key_id' },
  provider: { logs: 'provider_id', rollup: 'provider_id' },
  ai_service: { logs: 'provider_kind', rollup: 'provider_kind' },
  model: { logs: "coalesce(model_served, model_requested, '')", rollup: 'model' },
  config: { logs: 'config_id', rollup: 'config_id' },
  prompt: { logs: 'prompt_id', rollup: 'prompt_id' },
  status_code: { logs: 'status_code', rollup: 'status_code' },
  workspace: { logs: 'workspace_id', rollup: 'workspace_id' },
  user: { logs: 'user_id', rollup: '' },
}

export function columnOf(dimension: string, source: Source): string {
  const entry = COLUMN[dimension]
  if (!entry) throw new Error(`unknown dimension ${dimension}`)
  return source === 'logs' ? entry.logs : entry.rollup
}

/**
 * The WHERE of a query: organisation, time range, what the principal may read, and the filters.
 * `timeColumn` is `created_at` (logs) or `bucket_start` (rollups).
 */
export function whereOf(organizationId: string, filters: ParsedFilters, reach: WorkspaceReach[] | null, source: Source, into = new Conditions()): Conditions {
  const c = into
  const logs = source === 'logs'
  const time = logs ? 'created_at' : 'bucket_start'
  c.add(`organization_id = ${c.param(organizationId)}`)
  if (!logs) c.add(`period = ${c.param(source)}`)
  if (filters.fromMs !== null) c.add(`${time} >= ${c.param(new Date(filters.fromMs))}`)
  if (filters.toMs !== null) c.add(`${time} < ${c.param(new Date(filters.toMs))}`)
  if (reach !== null) {
    const whole = reach.filter((r) => r.onlyUserId === null).map((r) => r.workspaceId)
    const own = reach.filter((r) => r.onlyUserId !== null)
    const alternatives: string[] = []
    if (whole.length > 0) alternatives.push(`workspace_id = ANY(${c.param(whole)}::text[])`)
    // Only log rows know their user; a reach limited to one user never reads rollups (see `sourceFor`).
    for (const r of own) alternatives.push(`(workspace_id = ${c.param(r.workspaceId)} AND user_id = ${c.param(r.onlyUserId)})`)
    c.add(alternatives.length > 0 ? `(${alternatives.join(' OR ')})` : 'FALSE')
  }
  const q = filters.query
  const anyOf = (dimension: string, values: readonly string[] | undefined, cast = 'text'): void => {
    if (!values || values.length === 0) return
    const column = columnOf(dimension, source)
    c.add(`${column} = ANY(${c.param(cast === 'int' ? values.map(Number) : values)}::${cast}[])`)
  }
  anyOf('api_key', q.api_key_ids)
  anyOf('provider', q.providers)
  anyOf('ai_service', q.ai_service)
  anyOf('model', q.ai_model)
  anyOf('config', q.configs)
  anyOf('prompt', q.prompt_slug)
  anyOf('status_code', q.status_code, 'int')
  if (!logs) return c
  if (q.virtual_keys?.length) c.add(`provider_slug = ANY(${c.param(q.virtual_keys)}::text[])`)
  if (q.ai_org_model?.length) c.add(`(provider_kind || '__' || coalesce(model_served, model_requested, '')) = ANY(${c.param(q.ai_org_model)}::text[])`)
  if (q.trace_id !== undefined) c.add(`trace_id = ${c.param(q.trace_id)}`)
  if (q.span_id !== undefined) c.add(`span_id = ${c.param(q.span_id)}`)
  if (q.user !== undefined) c.add(`user_id = ${c.param(q.user)}`)
  if (filters.metadata !== null) c.add(`metadata @> ${c.param(JSON.stringify(filters.metadata))}::jsonb`)
  const range = (expression: string, min: number | undefined, max: number | undefined, scale = 1): void => {
    if (min !== undefined) c.add(`${expression} >= ${c.param(min * scale)}`)
    if (max !== undefined) c.add(`${expression} <= ${c.param(max * scale)}`)
  }
  range('coalesce(cost_usd, 0)', q.cost_min, q.cost_max, 0.01)
  range('(input_tokens + output_tokens)', q.total_units_min, q.total_units_max)
  range('input_tokens', q.prompt_token_min, q.prompt_token_max)
  range('output_tokens', q.completion_token_min, q.completion_token_max)
  range('latency_ms', q.latency_min, q.latency_max)
  // Qualified: this condition also runs inside queries that join feedback (feedback.ts).
  range(`(SELECT sum(f.value * f.weight) / nullif(sum(f.weight), 0) FROM feedback f
    WHERE f.organization_id = usage_logs.organization_id AND f.workspace_id = usage_logs.workspace_id AND f.trace_id = usage_logs.trace_id)`,
  q.weighted_feedback_min, q.weighted_feedback_max)
  return c
}

/** Time buckets `intervalParam` milliseconds wide (the parameter holds them as text), aligned to the epoch. */
export function bucketOn(timeColumn: string, intervalParam: string): string {
  return `date_bin((${intervalParam} || ' milliseconds')::interval, ${timeColumn}, TIMESTAMPTZ '1970-01-01 00:00:00+00')`
}

const MINUTE_MS = 60_000
const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/**
 * Which table answers: rollups when the filters allow it and the range sits on their buckets
 * (hours; minutes within the minute rollups' week), raw logs otherwise (exact, within the logs'
 * retention). A reach limited to a user's own requests always reads logs.
 */
export function sourceFor(filters: ParsedFilters, reach: WorkspaceReach[] | null, nowMs: number, extra: { needsLogs?: boolean } = {}): Source {
  if (!filters.rollupable || extra.needsLogs || reach?.some((r) => r.onlyUserId !== null)) return 'logs'
  const { fromMs, toMs } = filters
  if (fromMs === null || toMs === null) return 'hour'
  if (fromMs % HOUR_MS === 0 && toMs % HOUR_MS === 0) return 'hour'
  if (fromMs % MINUTE_MS === 0 && toMs % MINUTE_MS === 0 && fromMs >= nowMs - 7 * DAY_MS) return 'minute'
  return 'logs'
}
