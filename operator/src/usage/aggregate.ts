/**
 * Analytics over usage: grouped columns, time series and summaries, read from the rollups where the
 * filters allow (a year of data is a year of hourly rows, not of requests) and from the raw logs
 * otherwise. Percentiles come from the rollups' latency histograms (within 5 %) or, on raw logs,
 * exactly (percentile_disc).
 */
import type { SqlExecutor } from '../store/sql.ts'
import { bucketOn, columnOf, type Conditions, type Source } from './filters.ts'
import { emptyHistogram, quantile } from '../store/histogram.ts'
import { FEEDBACK_PER_REQUEST_SUMS, feedbackPerRequestJoin, perRequestSums, type FeedbackSumRow, type FeedbackSums } from './feedback.ts'

/** The spec's `columns` of grouped analytics. */
export const GROUP_COLUMNS = ['cost', 'total_tokens', 'avg_tokens', 'avg_input_tokens', 'avg_output_tokens', 'avg_latency', 'p95_latency', 'p99_latency',
  'success_rate', 'error_count', 'cache_hit_rate', 'last_seen', 'first_seen'] as const
export type GroupColumn = (typeof GROUP_COLUMNS)[number]

/** The spec's groupBy values (plus `user`, read from logs). */
export const GROUP_BY = ['ai_service', 'model', 'status_code', 'api_key', 'config', 'workspace', 'provider', 'prompt', 'user'] as const
export type GroupBy = (typeof GROUP_BY)[number]

export interface Totals {
  requests: number
  errors: number
  cacheHits: number
  inputTokens: number
  outputTokens: number
  costUsd: number
  latencySumMs: number
  firstSeen: string | null
  lastSeen: string | null
  /** Exact percentiles (logs) or null (rollups: read from `histogram`). */
  p50: number | null
  p90: number | null
  p95: number | null
  p99: number | null
  histogram: number[] | null
  users: number | null
  /** Feedback on the requests (raw logs, when asked for). */
  feedback: FeedbackSums | null
}

function sums(source: Source): string {
  if (source === 'logs') {
    return `count(*)::float8 AS requests, (count(*) FILTER (WHERE status_code >= 400))::float8 AS errors,
      (count(*) FILTER (WHERE cache_status IN ('HIT', 'SEMANTIC HIT')))::float8 AS cache_hits,
      coalesce(sum(input_tokens), 0)::float8 AS input_tokens, coalesce(sum(output_tokens), 0)::float8 AS output_tokens,
      coalesce(sum(cost_usd), 0)::float8 AS cost_usd, coalesce(sum(latency_ms), 0)::float8 AS latency_sum,
      min(created_at) AS first_seen, max(created_at) AS last_seen,
      percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50, percentile_disc(0.9) WITHIN GROUP (ORDER BY latency_ms) AS p90,
      percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95, percentile_disc(0.99) WITHIN GROUP (ORDER BY latency_ms) AS p99,
      count(DISTINCT user_id)::float8 AS users`
  }
  return `coalesce(sum(requests), 0)::float8 AS requests, coalesce(sum(errors), 0)::float8 AS errors, coalesce(sum(cache_hits), 0)::float8 AS cache_hits,
    coalesce(sum(input_tokens), 0)::float8 AS input_tokens, coalesce(sum(output_tokens), 0)::float8 AS output_tokens,
    coalesce(sum(cost_usd), 0)::float8 AS cost_usd, coalesce(sum(latency_ms_sum), 0)::float8 AS latency_sum,
    min(first_seen) AS first_seen, max(last_seen) AS last_seen,
    NULL::float8 AS p50, NULL::float8 AS p90, NULL::float8 AS p95, NULL::float8 AS p99, NULL::float8 AS users`
}

interface SumRow extends FeedbackSumRow {
  key?: unknown
  t?: Date
  requests: number
  errors: number
  cache_hits: number
  input_tokens: number
  output_tokens: number
  cost_usd: number
  latency_sum: number
  first_seen: Date | null
  last_seen: Date | null
  p50: number | null
  p90: number | null
  p95: number | null
  p99: number | null
  users: number | null
}

function totalsOf(row: SumRow): Totals {
  return {
    requests: row.requests, errors: row.errors, cacheHits: row.cache_hits, inputTokens: row.input_tokens, outputTokens: row.output_tokens,
    costUsd: row.cost_usd, latencySumMs: row.latency_sum,
    firstSeen: row.first_seen ? new Date(row.first_seen).toISOString() : null, lastSeen: row.last_seen ? new Date(row.last_seen).toISOString() : null,
    p50: row.p50 === null ? null : Number(row.p50), p90: row.p90 === null ? null : Number(row.p90),
    p95: row.p95 === null ? null : Number(row.p95), p99: row.p99 === null ? null : Number(row.p99),
    histogram: null, users: row.users, feedback: perRequestSums(row),
  }
}

function table(source: Source): string {
  return source === 'logs' ? 'usage_logs' : 'usage_rollups'
}

/** Sums per group value, largest request count first, one page of them. */
export async function groupTotals(
  db: SqlExecutor,
  source: Source,
  groupBy: GroupBy,
  where: Conditions,
  page: { offset: number; limit: number },
  options: { withHistograms: boolean; feedbackOf?: string },
): Promise<{ total: number; groups: Array<{ key: string | number | null; totals: Totals }> }> {
  const { withHistograms, feedbackOf } = options
  const key = columnOf(groupBy, source)
  const [count] = await db.query<{ n: number }>(`SELECT count(DISTINCT ${key})::int AS n FROM ${table(source)} WHERE ${where.sql}`, where.params)
  const params = [...where.params]
  const param = (value: unknown): string => `$${params.push(value)}`
  // Feedback columns join each log row to its trace's feedback (callers ask for them on raw logs only).
  const feedback = feedbackOf !== undefined && source === 'logs'
  const join = feedback ? feedbackPerRequestJoin(feedbackOf, param) : ''
  const rows = await db.query<SumRow>(
    `SELECT ${key} AS key, ${sums(source)}${feedback ? `, ${FEEDBACK_PER_REQUEST_SUMS}` : ''} FROM ${table(source)} ${join} WHERE ${where.sql}
     GROUP BY ${key} ORDER BY requests DESC, key ASC NULLS LAST LIMIT ${param(page.limit)} OFFSET ${param(page.offset)}`,
    params,
  )
  const groups = rows.map((row) => ({ key: normaliseKey(row.key), totals: totalsOf(row) }))
  if (withHistograms && source !== 'logs' && groups.length > 0) {
    const histograms = await histogramsBy(db, key, where.sql, where.params)
    for (const group of groups) group.totals.histogram = histograms.get(String(group.key ?? '')) ?? emptyHistogram()
  }
  return { total: count?.n ?? 0, groups }
}

function normaliseKey(value: unknown): string | number | null {
  if (value === null || value === undefined || value === '') return null
  return typeof value === 'number' ? value : String(value)
}

/** Latency histograms summed per value of `keyExpression` (rollups only). */
async function histogramsBy(db: SqlExecutor, keyExpression: string, whereSql: string, params: readonly unknown[]): Promise<Map<string, number[]>> {
  const rows = await db.query<{ key: unknown; n: number; c: number }>(
    `SELECT ${keyExpression}::text AS key, e.bin::int AS n, sum(e.count::bigint)::float8 AS c
     FROM usage_rollups, jsonb_each_text(latency_hist) AS e(bin, count) WHERE ${whereSql} GROUP BY 1, 2`,
    params,
  )
  const out = new Map<string, number[]>()
  for (const row of rows) {
    const key = String(row.key ?? '')
    let histogram = out.get(key)
    if (!histogram) out.set(key, (histogram = emptyHistogram()))
    histogram[row.n] = row.c
  }
  return out
}

/** One row of sums over everything the conditions select. */
export async function overallTotals(db: SqlExecutor, source: Source, where: Conditions): Promise<Totals> {
  const [row] = await db.query<SumRow>(`SELECT ${sums(source)} FROM ${table(source)} WHERE ${where.sql}`, where.params)
  const totals = totalsOf(row!)
  if (source !== 'logs') totals.histogram = (await histogramsBy(db, "''", where.sql, where.params)).get('') ?? emptyHistogram()
  return totals
}

/** The time bucket of a row of `source`; `intervalParam` holds the bucket width in milliseconds, as text. */
export function bucketOf(source: Source, intervalParam: string): string {
  return bucketOn(source === 'logs' ? 'created_at' : 'bucket_start', intervalParam)
}

/** Sums per time bucket (`bucketMs` wide, aligned to the epoch). */
export async function seriesTotals(db: SqlExecutor, source: Source, where: Conditions, bucketMs: number, withHistograms: boolean): Promise<Array<{ timestamp: string; totals: Totals }>> {
  const params = [...where.params, String(bucketMs)]
  const bucket = bucketOf(source, `$${params.length}`)
  const rows = await db.query<SumRow>(`SELECT ${bucket} AS t, ${sums(source)} FROM ${table(source)} WHERE ${where.sql} GROUP BY 1 ORDER BY 1`, params)
  const series = rows.map((row) => ({ timestamp: new Date(row.t!).toISOString(), totals: totalsOf(row) }))
  if (withHistograms && source !== 'logs' && series.length > 0) {
    const histograms = await histogramsBy(db, `extract(epoch from ${bucket})::bigint`, where.sql, params)
    for (const point of series) point.totals.histogram = histograms.get(String(Date.parse(point.timestamp) / 1000)) ?? emptyHistogram()
  }
  return series
}

/** A latency percentile of totals: exact from logs, from the histogram on rollups. */
export function percentile(totals: Totals, q: 0.5 | 0.9 | 0.95 | 0.99): number | null {
  const exact = q === 0.5 ? totals.p50 : q === 0.9 ? totals.p90 : q === 0.95 ? totals.p95 : totals.p99
  if (exact !== null) return exact
  return totals.histogram ? quantile(totals.histogram, q) : null
}

const round = (value: number, digits = 6): number => Math.round(value * 10 ** digits) / 10 ** digits

/** The `columns` values of one group (the spec's grouped analytics). */
export function groupColumns(totals: Totals, columns: ReadonlySet<string>): Record<string, number | string | null> {
  const out: Record<string, number | string | null> = { requests: totals.requests }
  const per = (value: number) => (totals.requests === 0 ? 0 : round(value / totals.requests, 4))
  const tokens = totals.inputTokens + totals.outputTokens
  for (const column of columns) {
    // Other columns (feedback) are filled by their own module.
    switch (column as GroupColumn) {
      case 'cost': out.cost = round(totals.costUsd, 9); break
      case 'total_tokens': out.total_tokens = tokens; break
      case 'avg_tokens': out.avg_tokens = per(tokens); break
      case 'avg_input_tokens': out.avg_input_tokens = per(totals.inputTokens); break
      case 'avg_output_tokens': out.avg_output_tokens = per(totals.outputTokens); break
      case 'avg_latency': out.avg_latency = per(totals.latencySumMs); break
      case 'p95_latency': out.p95_latency = percentile(totals, 0.95); break
      case 'p99_latency': out.p99_latency = percentile(totals, 0.99); break
      case 'success_rate': out.success_rate = totals.requests === 0 ? null : round((totals.requests - totals.errors) / totals.requests, 6); break
      case 'error_count': out.error_count = totals.errors; break
      case 'cache_hit_rate': out.cache_hit_rate = totals.requests === 0 ? null : round(totals.cacheHits / totals.requests, 6); break
      case 'last_seen': out.last_seen = totals.lastSeen; break
      case 'first_seen': out.first_seen = totals.firstSeen; break
    }
  }
  return out
}
