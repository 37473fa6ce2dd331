/**
 * Analytics (the spec's Graphs, Groups, Summary): /v1/analytics/groups/{groupBy} (and
 * /v1/logs/groups/{groupBy}) with the `columns` the spec lists, /v1/analytics/groups/users,
 * /ai-models and /metadata/{key}, /v1/analytics/graphs/* time series whose bucket is chosen from
 * the range (the rescued, cache-latency, error-code and feedback graphs run their own queries:
 * graph-queries.ts, feedback.ts), and /v1/analytics/summary (+ /summary/cache). Needs
 * `analytics.view` (log groups: `logs.list`); reads rollups where the filters allow, raw logs
 * otherwise (filters.ts); feedback columns always read raw logs.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { invalid } from '../../errors.ts'
import { GROUP_BY, GROUP_COLUMNS, groupColumns, groupTotals, overallTotals, percentile, seriesTotals, type GroupBy, type Totals } from '../../usage/aggregate.ts'
import {
  FEEDBACK_COLUMNS, FEEDBACK_PER_REQUEST_SUMS, feedbackByModel, feedbackColumns, feedbackPerRequestJoin, feedbackScores, feedbackSeries, feedbackTotals,
  perRequestSums, weightedAverage, type FeedbackSumRow,
} from '../../usage/feedback.ts'
import { Conditions, sourceFor, whereOf, type Source } from '../../usage/filters.ts'
import { cacheHitRateGraph, cacheLatencyGraph, errorStacksGraph, errorStatusCodesGraph, rescuedGraph, type Graph as QueryGraph } from '../../usage/graph-queries.ts'
import type { SqlExecutor } from '../../store/sql.ts'
import type { AdminContext } from '../context.ts'
import { pagination, parse } from '../http.ts'
import { usageScope, type UsageScope } from './usage-scope.ts'

const columnsQuery = z.object({ columns: z.string().max(1000).optional() }).loose()

const ALL_COLUMNS: readonly string[] = [...GROUP_COLUMNS, ...FEEDBACK_COLUMNS]

function columnsOf(query: unknown): Set<string> {
  const raw = parse(columnsQuery, query).columns
  const out = new Set<string>()
  for (const name of (raw ?? '').split(',').map((c) => c.trim()).filter(Boolean)) {
    if (!ALL_COLUMNS.includes(name)) throw invalid('columns', `columns: unknown column '${name}'; one of ${ALL_COLUMNS.join(', ')}`)
    out.add(name)
  }
  return out
}

const ALIASES: Record<string, GroupBy> = { users: 'user', 'ai-models': 'model', providers: 'provider', workspaces: 'workspace' }

/** The grouped analytics route, mounted under analytics and logs. */
export function registerGroupRoute(app: FastifyInstance, ctx: AdminContext, path: string, kind: 'logs' | 'analytics'): void {
  app.get<{ Params: { groupBy: string } }>(path, async (request) => {
    const groupBy = ALIASES[request.params.groupBy] ?? request.params.groupBy
    if (!(GROUP_BY as readonly string[]).includes(groupBy)) throw invalid('groupBy', `groupBy must be one of ${GROUP_BY.join(', ')}`)
    const scope = await usageScope(ctx, request, kind, kind === 'logs' ? 'logs.list' : 'analytics.view')
    const columns = columnsOf(request.query)
    const { page, pageSize } = pagination(request.query)
    // Feedback is joined to raw log rows; the rollups know nothing of it.
    const withFeedback = FEEDBACK_COLUMNS.some((column) => columns.has(column))
    const source = sourceFor(scope.filters, scope.reach, Date.now(), { needsLogs: groupBy === 'user' || withFeedback })
    const where = whereOf(scope.organizationId, scope.filters, scope.reach, source)
    const withHistograms = columns.has('p95_latency') || columns.has('p99_latency')
    const result = await groupTotals(ctx.store.usageLogs.reader, source, groupBy as GroupBy, where, { offset: page * pageSize, limit: pageSize }, {
      withHistograms,
      ...(withFeedback ? { feedbackOf: scope.organizationId } : {}),
    })
    return {
      object: 'list',
      total: result.total,
      source,
      data: result.groups.map((group) => ({
        object: 'analytics-group',
        [groupBy]: group.key,
        ...groupColumns(group.totals, columns),
        ...(withFeedback ? feedbackColumns(group.totals.feedback, columns) : {}),
      })),
    }
  })
}

const MINUTE_MS = 60_000
const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/** The server picks the bucket: minutes up to 3 hours, hours up to 7 days, days beyond. */
export function bucketFor(fromMs: number, toMs: number): number {
  const span = toMs - fromMs
  if (span <= 3 * HOUR_MS) return MINUTE_MS
  if (span <= 7 * DAY_MS) return HOUR_MS
  return DAY_MS
}

type Graph = (totals: Totals) => Record<string, unknown>
const GRAPHS: Record<string, { point: Graph; summary: Graph; latency?: boolean; users?: boolean }> = {
  requests: { point: (t) => ({ total: t.requests }), summary: (t) => ({ total: t.requests }) },
  cost: { point: (t) => ({ total: t.costUsd, avg: t.requests ? t.costUsd / t.requests : 0 }), summary: (t) => ({ total: t.costUsd, avg: t.requests ? t.costUsd / t.requests : 0 }) },
  tokens: {
    point: (t) => ({ total: t.inputTokens + t.outputTokens, avg: t.requests ? (t.inputTokens + t.outputTokens) / t.requests : 0 }),
    summary: (t) => ({ total: t.inputTokens + t.outputTokens, avg: t.requests ? (t.inputTokens + t.outputTokens) / t.requests : 0 }),
  },
  latency: {
    point: (t) => ({ avg: t.requests ? t.latencySumMs / t.requests : null, p50: percentile(t, 0.5), p90: percentile(t, 0.9), p99: percentile(t, 0.99) }),
    summary: (t) => ({ avg: t.requests ? t.latencySumMs / t.requests : null, p50: percentile(t, 0.5), p90: percentile(t, 0.9), p99: percentile(t, 0.99) }),
    latency: true,
  },
  errors: { point: (t) => ({ total: t.errors }), summary: (t) => ({ total: t.errors }) },
  'errors/rate': { point: (t) => ({ rate: t.requests ? (100 * t.errors) / t.requests : 0 }), summary: (t) => ({ rate: t.requests ? (100 * t.errors) / t.requests : 0 }) },
  users: { point: (t) => ({ total: t.users }), summary: (t) => ({ total: t.users }), users: true },
  'users/requests': { point: (t) => ({ avg: t.users ? t.requests / t.users : 0 }), summary: (t) => ({ total: t.requests, unique: t.users, avg: t.users ? t.requests / t.users : 0 }), users: true },
}

/** What a graph that runs its own query gets: the scope, the bucket, the database. */
interface GraphInput {
  db: SqlExecutor
  scope: UsageScope
  bucketMs: number
}

const logsWhere = (scope: UsageScope): Conditions => whereOf(scope.organizationId, scope.filters, scope.reach, 'logs')
const errorsSource = (scope: UsageScope): Source => sourceFor(scope.filters, scope.reach, Date.now())

/** Graphs with their own query (graph-queries.ts, feedback.ts). */
const QUERY_GRAPHS: Record<string, (input: GraphInput) => Promise<QueryGraph>> = {
  'requests/rescued': ({ db, scope, bucketMs }) => rescuedGraph(db, logsWhere(scope), bucketMs),
  'cache/hit-rate': async ({ db, scope, bucketMs }) => ({ source: 'logs', ...(await cacheHitRateGraph(db, logsWhere(scope), bucketMs)) }),
  'cache/latency': ({ db, scope, bucketMs }) => cacheLatencyGraph(db, logsWhere(scope), bucketMs),
  'errors/stacks': ({ db, scope, bucketMs }) => {
    const source = errorsSource(scope)
    return errorStacksGraph(db, source, whereOf(scope.organizationId, scope.filters, scope.reach, source), bucketMs)
  },
  'errors/status-codes': ({ db, scope }) => {
    const source = errorsSource(scope)
    return errorStatusCodesGraph(db, source, whereOf(scope.organizationId, scope.filters, scope.reach, source))
  },
  feedbacks: async ({ db, scope, bucketMs }) => {
    const [series, totals] = await Promise.all([feedbackSeries(db, scope.organizationId, logsWhere(scope), bucketMs), feedbackTotals(db, scope.organizationId, logsWhere(scope))])
    return { summary: { total: totals.count }, data_points: series.map((point) => ({ timestamp: point.timestamp, total: point.sums.count })) }
  },
  'feedbacks/weighted': async ({ db, scope, bucketMs }) => {
    const [series, totals] = await Promise.all([feedbackSeries(db, scope.organizationId, logsWhere(scope), bucketMs), feedbackTotals(db, scope.organizationId, logsWhere(scope))])
    return { summary: { avg: weightedAverage(totals) }, data_points: series.map((point) => ({ timestamp: point.timestamp, avg: weightedAverage(point.sums) })) }
  },
  'feedbacks/scores': async ({ db, scope }) => {
    const scores = await feedbackScores(db, scope.organizationId, logsWhere(scope))
    return { summary: { total: scores.reduce((sum, score) => sum + score.total, 0) }, data_points: scores }
  },
  'feedbacks/ai-models': async ({ db, scope }) => {
    const models = await feedbackByModel(db, scope.organizationId, logsWhere(scope))
    return {
      summary: {},
      data_points: models.map((model) => ({ ai_model: model.model === '' ? null : model.model, total: model.sums.count, avg_weighted_feedback: weightedAverage(model.sums) })),
    }
  },
}

const GRAPH_NAMES = [...Object.keys(GRAPHS), ...Object.keys(QUERY_GRAPHS)]

const graphQuery = z.object({ time_of_generation_min: z.string(), time_of_generation_max: z.string() }).loose()

export function analyticsRoutes(app: FastifyInstance, ctx: AdminContext): void {
  registerGroupRoute(app, ctx, '/groups/:groupBy', 'analytics')

  app.get<{ Params: { key: string } }>('/groups/metadata/:key', async (request) => {
    const scope = await usageScope(ctx, request, 'analytics', 'analytics.view')
    const { page, pageSize } = pagination(request.query)
    const where = whereOf(scope.organizationId, scope.filters, scope.reach, 'logs')
    const db = ctx.store.usageLogs.reader
    const key = where.param(request.params.key)
    const [count] = await db.query<{ n: number }>(`SELECT count(DISTINCT metadata->>${key})::int AS n FROM usage_logs WHERE ${where.sql} AND metadata ? ${key}`, where.params)
    const params = [...where.params]
    const param = (value: unknown): string => `$${params.push(value)}`
    const join = feedbackPerRequestJoin(scope.organizationId, param)
    const rows = await db.query<{ value: string; requests: number; cost: number; tokens: number; last_seen: Date } & FeedbackSumRow>(
      `SELECT metadata->>${key} AS value, count(*)::float8 AS requests, coalesce(sum(cost_usd), 0)::float8 AS cost,
              coalesce(sum(input_tokens + output_tokens), 0)::float8 AS tokens, max(created_at) AS last_seen, ${FEEDBACK_PER_REQUEST_SUMS}
       FROM usage_logs ${join} WHERE ${where.sql} AND metadata ? ${key} GROUP BY 1 ORDER BY requests DESC, value LIMIT ${param(pageSize)} OFFSET ${param(page * pageSize)}`,
      params,
    )
    return {
      object: 'list',
      total: count?.n ?? 0,
      data: rows.map((row) => {
        const feedback = perRequestSums(row)
        return {
          object: 'analytics-group', metadata_value: row.value, requests: row.requests, cost: row.cost, avg_tokens: row.requests ? row.tokens / row.requests : 0,
          avg_weighted_feedback: feedback ? weightedAverage(feedback) : null, requests_with_feedback: feedback?.count ?? 0, last_seen: new Date(row.last_seen).toISOString(),
        }
      }),
    }
  })

  app.get<{ Params: { '*': string } }>('/graphs/*', async (request) => {
    const name = request.params['*']
    const graph = GRAPHS[name]
    const queryGraph = QUERY_GRAPHS[name]
    if (!graph && !queryGraph) throw invalid('graph', `no graph '${name}'; one of ${GRAPH_NAMES.join(', ')}`)
    parse(graphQuery, request.query)
    const scope = await usageScope(ctx, request, 'analytics', 'analytics.view')
    const bucketMs = bucketFor(scope.filters.fromMs!, scope.filters.toMs!)
    if (!graph) {
      const answer = await queryGraph!({ db: ctx.store.usageLogs.reader, scope, bucketMs })
      return { object: 'analytics-graph', bucket_ms: bucketMs, ...answer }
    }
    const source = graph.users ? 'logs' : sourceFor(scope.filters, scope.reach, Date.now())
    const where = whereOf(scope.organizationId, scope.filters, scope.reach, source)
    const db = ctx.store.usageLogs.reader
    const [points, totals] = await Promise.all([
      seriesTotals(db, source, where, bucketMs, graph.latency === true),
      overallTotals(db, source, whereOf(scope.organizationId, scope.filters, scope.reach, source, new Conditions())),
    ])
    return {
      object: 'analytics-graph',
      bucket_ms: bucketMs,
      source,
      summary: graph.summary(totals),
      data_points: points.map((point) => ({ timestamp: point.timestamp, ...graph.point(point.totals) })),
    }
  })

  app.get('/summary', async (request) => {
    const scope = await usageScope(ctx, request, 'analytics', 'analytics.view')
    const source = sourceFor(scope.filters, scope.reach, Date.now())
    const db = ctx.store.usageLogs.reader
    const [totals, feedback] = await Promise.all([
      overallTotals(db, source, whereOf(scope.organizationId, scope.filters, scope.reach, source)),
      feedbackTotals(db, scope.organizationId, logsWhere(scope)),
    ])
    return {
      object: 'analytics-summary',
      source,
      summary: {
        ...groupColumns(totals, new Set(GROUP_COLUMNS)),
        input_tokens: totals.inputTokens,
        output_tokens: totals.outputTokens,
        feedback_count: feedback.count,
        avg_weighted_feedback: weightedAverage(feedback),
      },
    }
  })

  app.get('/summary/cache', async (request) => {
    const scope = await usageScope(ctx, request, 'analytics', 'analytics.view')
    const where = whereOf(scope.organizationId, scope.filters, scope.reach, 'logs')
    const [row] = await ctx.store.usageLogs.reader.query<{ hits: number; total: number; hit_latency: number | null; miss_latency: number | null }>(
      `SELECT (count(*) FILTER (WHERE cache_status IN ('HIT', 'SEMANTIC HIT')))::float8 AS hits, count(*)::float8 AS total,
              avg(latency_ms) FILTER (WHERE cache_status IN ('HIT', 'SEMANTIC HIT')) AS hit_latency,
              avg(latency_ms) FILTER (WHERE cache_status IS NULL OR cache_status NOT IN ('HIT', 'SEMANTIC HIT')) AS miss_latency
       FROM usage_logs WHERE ${where.sql}`,
      where.params,
    )
    const speedup = row?.hit_latency && row.miss_latency ? row.miss_latency / row.hit_latency : null
    return { object: 'analytics-summary', summary: { hits: row?.hits ?? 0, avg_latency: row?.hit_latency ?? null, total_requests: row?.total ?? 0, cache_speedup: speedup } }
  })
}
