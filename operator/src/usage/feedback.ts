/**
 * Feedback joined to usage: the feedback graphs, the feedback columns of grouped analytics and the
 * feedback shown on logs. Feedback is given on a trace id by a workspace key, so it joins the logs
 * of that trace in the same workspace only (another workspace naming the same trace id never shows
 * up on these logs).
 *
 * Graphs count each feedback once, on the first request of its trace that the filters select (its
 * time is that request's time, so feedback lines up with the traffic it judges). Group columns are
 * per request: a request "has feedback" when its trace has any, and its weighted feedback is that
 * trace's. The weighted average is sum(value × weight) / sum(weight), null without weight.
 */
import type { SqlExecutor } from '../store/sql.ts'
import { bucketOn, type Conditions } from './filters.ts'

/** Feedback columns of grouped analytics; they are read from raw logs (rollups know no feedback). */
export const FEEDBACK_COLUMNS = ['avg_weighted_feedback', 'requests_with_feedback', 'feedback_count'] as const
export type FeedbackColumn = (typeof FEEDBACK_COLUMNS)[number]

export interface FeedbackSums {
  /** Requests whose trace has feedback (group columns) or feedback rows (graphs). */
  count: number
  /** Feedback rows on the requests (group columns; equals `count` on graphs). */
  feedbacks: number
  weighted: number
  weight: number
}

export const weightedAverage = (sums: Pick<FeedbackSums, 'weighted' | 'weight'>): number | null => (sums.weight > 0 ? round(sums.weighted / sums.weight) : null)
const round = (value: number): number => Math.round(value * 1e6) / 1e6

/**
 * The FROM clause of feedback over the logs `where` selects: each feedback row once, as `f`
 * (value, weight), with the first selected request of its trace (created_at, model). A hash join
 * of the selected logs against the feedback, not a probe per feedback row. `where` is not changed.
 */
function feedbackOnLogs(organizationId: string, where: Conditions): { from: string; params: unknown[] } {
  const params = [...where.params, organizationId]
  const from = `(SELECT DISTINCT ON (fb.id) fb.value, fb.weight, l.created_at, l.model
      FROM feedback fb JOIN (
        SELECT trace_id, workspace_id, created_at, id, coalesce(model_served, model_requested, '') AS model FROM usage_logs WHERE ${where.sql}
      ) l ON l.trace_id = fb.trace_id AND l.workspace_id = fb.workspace_id
      WHERE fb.organization_id = $${params.length}
      ORDER BY fb.id, l.created_at, l.id) f`
  return { from, params }
}

const SUMS = 'count(*)::float8 AS n, coalesce(sum(f.value * f.weight), 0)::float8 AS weighted, coalesce(sum(f.weight), 0)::float8 AS weight'
interface SumsRow {
  n: number
  weighted: number
  weight: number
}
const sumsOf = (row: SumsRow | undefined): FeedbackSums => ({ count: row?.n ?? 0, feedbacks: row?.n ?? 0, weighted: row?.weighted ?? 0, weight: row?.weight ?? 0 })

/** Feedback over everything selected. */
export async function feedbackTotals(db: SqlExecutor, organizationId: string, where: Conditions): Promise<FeedbackSums> {
  const { from, params } = feedbackOnLogs(organizationId, where)
  const [row] = await db.query<SumsRow>(`SELECT ${SUMS} FROM ${from}`, params)
  return sumsOf(row)
}

/** Feedback per time bucket (`bucketMs` wide, aligned to the epoch), by its request's time. */
export async function feedbackSeries(db: SqlExecutor, organizationId: string, where: Conditions, bucketMs: number): Promise<Array<{ timestamp: string; sums: FeedbackSums }>> {
  const { from, params } = feedbackOnLogs(organizationId, where)
  params.push(String(bucketMs))
  const rows = await db.query<SumsRow & { t: Date }>(
    `SELECT ${bucketOn('f.created_at', `$${params.length}`)} AS t, ${SUMS}
     FROM ${from} GROUP BY 1 ORDER BY 1`,
    params,
  )
  return rows.map((row) => ({ timestamp: new Date(row.t).toISOString(), sums: sumsOf(row) }))
}

/** Feedback count per score value, lowest first. */
export async function feedbackScores(db: SqlExecutor, organizationId: string, where: Conditions): Promise<Array<{ score: number; total: number }>> {
  const { from, params } = feedbackOnLogs(organizationId, where)
  const rows = await db.query<{ score: number; total: number }>(`SELECT f.value AS score, count(*)::float8 AS total FROM ${from} GROUP BY 1 ORDER BY 1`, params)
  return rows.map((row) => ({ score: Number(row.score), total: row.total }))
}

/** Feedback per model of the request it was given on, most feedback first. */
export async function feedbackByModel(db: SqlExecutor, organizationId: string, where: Conditions): Promise<Array<{ model: string; sums: FeedbackSums }>> {
  const { from, params } = feedbackOnLogs(organizationId, where)
  const rows = await db.query<SumsRow & { model: string }>(`SELECT f.model AS model, ${SUMS} FROM ${from} GROUP BY 1 ORDER BY n DESC, model`, params)
  return rows.map((row) => ({ model: row.model, sums: sumsOf(row) }))
}

/**
 * A join that gives each `usage_logs` row its trace's feedback as `fb` (n, weighted, weight),
 * for grouped columns over raw logs. `param` adds the organisation as a parameter of the query.
 */
export function feedbackPerRequestJoin(organizationId: string, param: (value: unknown) => string): string {
  return `LEFT JOIN (
      SELECT workspace_id AS fb_workspace, trace_id AS fb_trace, count(*)::float8 AS n, sum(value * weight)::float8 AS weighted, sum(weight)::float8 AS weight
      FROM feedback WHERE organization_id = ${param(organizationId)} GROUP BY 1, 2) fb
    ON fb.fb_trace = usage_logs.trace_id AND fb.fb_workspace = usage_logs.workspace_id`
}

/** The sums over rows of `feedbackPerRequestJoin`. */
export const FEEDBACK_PER_REQUEST_SUMS = `(count(*) FILTER (WHERE fb.n IS NOT NULL))::float8 AS fb_requests, coalesce(sum(fb.n), 0)::float8 AS fb_feedbacks,
  coalesce(sum(fb.weighted), 0)::float8 AS fb_weighted, coalesce(sum(fb.weight), 0)::float8 AS fb_weight`

export interface FeedbackSumRow {
  fb_requests?: number
  fb_feedbacks?: number
  fb_weighted?: number
  fb_weight?: number
}

export function perRequestSums(row: FeedbackSumRow): FeedbackSums | null {
  if (row.fb_requests === undefined) return null
  return { count: row.fb_requests, feedbacks: row.fb_feedbacks ?? 0, weighted: row.fb_weighted ?? 0, weight: row.fb_weight ?? 0 }
}

/** The feedback columns of one group. */
export function feedbackColumns(sums: FeedbackSums | null, columns: ReadonlySet<string>): Record<string, number | null> {
  const out: Record<string, number | null> = {}
  if (columns.has('avg_weighted_feedback')) out.avg_weighted_feedback = sums ? weightedAverage(sums) : null
  if (columns.has('requests_with_feedback')) out.requests_with_feedback = sums?.count ?? 0
  if (columns.has('feedback_count')) out.feedback_count = sums?.feedbacks ?? 0
  return out
}

export interface FeedbackView {
  id: string
  value: number
  weight: number
  metadata: Record<string, unknown>
  created_at: string
}

/** The feedback of each (workspace, trace) of a page of logs, keyed `workspace\0trace`. */
export async function feedbackForLogs(db: SqlExecutor, organizationId: string, logs: ReadonlyArray<{ workspace_id: string | null; trace_id: string }>): Promise<Map<string, FeedbackView[]>> {
  const out = new Map<string, FeedbackView[]>()
  const traces = [...new Set(logs.map((log) => log.trace_id))]
  if (traces.length === 0) return out
  const rows = await db.query<{ id: string; workspace_id: string; trace_id: string; value: number; weight: number; metadata: Record<string, unknown>; created_at: Date }>(
    `SELECT id, workspace_id, trace_id, value, weight, metadata, created_at FROM feedback
     WHERE organization_id = $1 AND trace_id = ANY($2::text[]) ORDER BY created_at, id`,
    [organizationId, traces],
  )
  for (const row of rows) {
    const key = feedbackKey(row.workspace_id, row.trace_id)
    const list = out.get(key) ?? []
    list.push({ id: row.id, value: row.value, weight: row.weight, metadata: row.metadata, created_at: new Date(row.created_at).toISOString() })
    out.set(key, list)
  }
  return out
}

export const feedbackKey = (workspaceId: string | null, traceId: string): string => `${workspaceId ?? ''}\u0000${traceId}`
