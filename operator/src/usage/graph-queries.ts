/**
 * The analytics graphs that are not plain sums per bucket: requests rescued by retries or
 * fallbacks, cache hits and what they saved, cache-hit latency, errors stacked by status code and
 * errors per status code.
 *
 * A request is rescued by a retry when it succeeded (status below 400) after `retries` > 0 retries
 * at the target that answered; by a fallback when it succeeded at a target other than the first
 * it tried (it made more attempts than its retries there account for: `attempts > retries + 1`).
 * One request may be both. A cache hit saved what its stored answer first cost
 * (`cache_saved_cost_usd` on the hit's record); the savings are summed from the range's start.
 * Rescues, cache hits and cache latency need the raw logs (the rollups know neither attempts,
 * simple from semantic hits, savings nor per-status latency); the error graphs read the rollups where the filters allow.
 */
import type { SqlExecutor } from '../store/sql.ts'
import { bucketOf } from './aggregate.ts'
import type { Conditions, Source } from './filters.ts'

const CACHE_HIT = "cache_status IN ('HIT', 'SEMANTIC HIT')"

export interface Graph {
  summary: Record<string, unknown>
  data_points: Array<Record<string, unknown>>
}

/** `count(*)` on logs, the summed request counts on rollups. */
const countOf = (source: Source): string => (source === 'logs' ? 'count(*)' : 'coalesce(sum(requests), 0)')
const tableOf = (source: Source): string => (source === 'logs' ? 'usage_logs' : 'usage_rollups')

export async function rescuedGraph(db: SqlExecutor, where: Conditions, bucketMs: number): Promise<Graph> {
  const params = [...where.params, String(bucketMs)]
  const rows = await db.query<{ t: Date; retries: number; retry: number; fallback: number }>(
    `SELECT ${bucketOf('logs', `$${params.length}`)} AS t, retries,
            (count(*) FILTER (WHERE retries > 0))::float8 AS retry, (count(*) FILTER (WHERE attempts > retries + 1))::float8 AS fallback
     FROM usage_logs WHERE ${where.sql} AND status_code < 400 AND (retries > 0 OR attempts > retries + 1)
     GROUP BY 1, 2 ORDER BY 1, 2`,
    params,
  )
  const points = new Map<string, { timestamp: string; retry: Array<{ retry_success_count: number; count: number }>; fallback: number }>()
  let retry = 0
  let fallback = 0
  for (const row of rows) {
    const timestamp = new Date(row.t).toISOString()
    let point = points.get(timestamp)
    if (!point) points.set(timestamp, (point = { timestamp, retry: [], fallback: 0 }))
    if (row.retry > 0) point.retry.push({ retry_success_count: Number(row.retries), count: row.retry })
    point.fallback += row.fallback
    retry += row.retry
    fallback += row.fallback
  }
  return { summary: { retry, fallback }, data_points: [...points.values()] }
}

export async function cacheHitRateGraph(db: SqlExecutor, where: Conditions, bucketMs: number): Promise<Graph> {
  const params = [...where.params, String(bucketMs)]
  const rows = await db.query<{ t: Date; requests: number; simple_hits: number; semantic_hits: number; simple_saved: number; semantic_saved: number }>(
    `SELECT ${bucketOf('logs', `$${params.length}`)} AS t, count(*)::float8 AS requests,
            (count(*) FILTER (WHERE cache_status = 'HIT'))::float8 AS simple_hits,
            (count(*) FILTER (WHERE cache_status = 'SEMANTIC HIT'))::float8 AS semantic_hits,
            coalesce(sum(cache_saved_cost_usd) FILTER (WHERE cache_status = 'HIT'), 0)::float8 AS simple_saved,
            coalesce(sum(cache_saved_cost_usd) FILTER (WHERE cache_status = 'SEMANTIC HIT'), 0)::float8 AS semantic_saved
     FROM usage_logs WHERE ${where.sql} GROUP BY 1 ORDER BY 1`,
    params,
  )
  let requests = 0
  let hits = 0
  let simpleSavings = 0
  let semanticSavings = 0
  const points = rows.map((row) => {
    requests += row.requests
    hits += row.simple_hits + row.semantic_hits
    simpleSavings += row.simple_saved
    semanticSavings += row.semantic_saved
    return {
      timestamp: new Date(row.t).toISOString(),
      simple_hits: row.simple_hits,
      semantic_hits: row.semantic_hits,
      rate: row.requests ? (100 * (row.simple_hits + row.semantic_hits)) / row.requests : 0,
      cumulative_simple_cache_savings: simpleSavings,
      cumulative_semantic_cache_savings: semanticSavings,
    }
  })
  return { summary: { total: hits, rate: requests ? (100 * hits) / requests : 0 }, data_points: points }
}

export async function cacheLatencyGraph(db: SqlExecutor, where: Conditions, bucketMs: number): Promise<Graph> {
  const params = [...where.params, String(bucketMs)]
  const rows = await db.query<{ t: Date; avg: number }>(
    `SELECT ${bucketOf('logs', `$${params.length}`)} AS t, avg(latency_ms)::float8 AS avg
     FROM usage_logs WHERE ${where.sql} AND ${CACHE_HIT} GROUP BY 1 ORDER BY 1`,
    params,
  )
  return { summary: {}, data_points: rows.map((row) => ({ timestamp: new Date(row.t).toISOString(), avg: row.avg })) }
}

export async function errorStacksGraph(db: SqlExecutor, source: Source, where: Conditions, bucketMs: number): Promise<Graph> {
  const params = [...where.params, String(bucketMs)]
  const rows = await db.query<{ t: Date; status_code: number; count: number }>(
    `SELECT ${bucketOf(source, `$${params.length}`)} AS t, status_code, ${countOf(source)}::float8 AS count
     FROM ${tableOf(source)} WHERE ${where.sql} AND status_code >= 400 GROUP BY 1, 2 ORDER BY 1, 2`,
    params,
  )
  const points = new Map<string, { timestamp: string; stats: Array<{ response_status_code: number; count: number }> }>()
  let total = 0
  for (const row of rows) {
    const timestamp = new Date(row.t).toISOString()
    let point = points.get(timestamp)
    if (!point) points.set(timestamp, (point = { timestamp, stats: [] }))
    point.stats.push({ response_status_code: Number(row.status_code), count: row.count })
    total += row.count
  }
  return { summary: { total }, data_points: [...points.values()] }
}

export async function errorStatusCodesGraph(db: SqlExecutor, source: Source, where: Conditions): Promise<Graph> {
  const rows = await db.query<{ status_code: number; count: number }>(
    `SELECT status_code, ${countOf(source)}::float8 AS count FROM ${tableOf(source)} WHERE ${where.sql} AND status_code >= 400
     GROUP BY 1 ORDER BY count DESC, status_code`,
    where.params,
  )
  return {
    summary: { total_errors: rows.reduce((sum, row) => sum + row.count, 0), unique_error_codes: rows.length },
    data_points: rows.map((row) => ({ status_code: Number(row.status_code), count: row.count })),
  }
}
