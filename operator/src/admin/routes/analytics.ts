/**
 * Analytics (the spec's Graphs, Groups, Summary): /v1/analytics/groups/{groupBy} (and
 * /v1/logs/groups/{groupBy}) with the `columns` the spec lists, /v1/analytics/groups/users,
 * /ai-models and /metadata/{key}, /v1/analytics/graphs/* time series whose bucket is chosen from
 * the range, and /v1/analytics/summary (+ /summary/cache). Needs `analytics.view` (log groups:
 * `logs.list`); reads rollups where the filters allow, raw logs otherwise (filters.ts).
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { invalid } from '../../errors.ts'
import { GROUP_BY, GROUP_COLUMNS, groupColumns, groupTotals, overallTotals, percentile, seriesTotals, type GroupBy, type GroupColumn, type Totals } from '../../usage/aggregate.ts'
import { Conditions, sourceFor, whereOf } from '../../usage/filters.ts'
import type { AdminContext } from '../context.ts'
import { pagination, parse } from '../http.ts'
import { usageScope } from './usage-scope.ts'

const columnsQuery = z.object({ columns: z.string().max(1000).optional() }).loose()

function columnsOf(query: unknown): Set<GroupColumn> {
  const raw = parse(columnsQuery, query).columns
  const out = new Set<GroupColumn>()
  for (const name of (raw ?? '').split(',').map((c) => c.trim()).filter(Boolean)) {
    if (!(GROUP_COLUMNS as readonly string[]).includes(name)) throw invalid('columns', `columns: unknown column '${name}'; one of ${GROUP_COLUMNS.join(', ')}`)
    out.add(name as GroupColumn)
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
    const source = sourceFor(scope.filters, scope.reach, Date.now(), { needsLogs: groupBy === 'user' })
    const where = whereOf(scope.organizationId, scope.filters, scope.reach, source)
    const withHistograms = columns.has('p95_latency') || columns.has('p99_latency')
    const result = await groupTotals(ctx.store.usageLogs.reader, source, groupBy as GroupBy, where, { offset: page * pageSize, limit: pageSize }, withHistograms)
    return {
      object: 'list',
      total: result.total,
      source,
      data: result.groups.map((group) => ({ object: 'analytics-group', [groupBy]: group.key, ...groupColumns(group.totals, columns) })),
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
  'cache/hit-rate': { point: (t) => ({ hits: t.cacheHits, rate: t.requests ? (100 * t.cacheHits) / t.requests : 0 }), summary: (t) => ({ total: t.cacheHits, rate: t.requests ? (100 * t.cacheHits) / t.requests : 0 }) },
  users: { point: (t) => ({ total: t.users }), summary: (t) => ({ total: t.users }), users: true },
  'users/requests': { point: (t) => ({ avg: t.users ? t.requests / t.users : 0 }), summary: (t) => ({ total: t.requests, unique: t.users, avg: t.users ? t.requests / t.users : 0 }), users: true },
}

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
    const params = [...where.params, pageSize, page * pageSize]
    const rows = await db.query<{ value: string; requests: number; cost: number; tokens: number; last_seen: Date }>(
      `SELECT metadata->>${key} AS value, count(*)::float8 AS requests, coalesce(sum(cost_usd), 0)::float8 AS cost,
              coalesce(sum(input_tokens + output_tokens), 0)::float8 AS tokens, max(created_at) AS last_seen
       FROM usage_logs WHERE ${where.sql} AND metadata ? ${key} GROUP BY 1 ORDER BY requests DESC, value LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    )
    return {
      object: 'list',
      total: count?.n ?? 0,
      data: rows.map((row) => ({ object: 'analytics-group', metadata_value: row.value, requests: row.requests, cost: row.cost, avg_tokens: row.requests ? row.tokens / row.requests : 0, last_seen: new Date(row.last_seen).toISOString() })),
    }
  })

  app.get<{ Params: { '*': string } }>('/graphs/*', async (request) => {
    const name = request.params['*']
    const graph = GRAPHS[name]
    if (!graph) throw invalid('graph', `no graph '${name}'; one of ${Object.keys(GRAPHS).join(', ')}`)
    parse(graphQuery, request.query)
    const scope = await usageScope(ctx, request, 'analytics', 'analytics.view')
    const bucketMs = bucketFor(scope.filters.fromMs!, scope.filters.toMs!)
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
    const totals = await overallTotals(ctx.store.usageLogs.reader, source, whereOf(scope.organizationId, scope.filters, scope.reach, source))
    return {
      object: 'analytics-summary',
      source,
      summary: {
        ...groupColumns(totals, new Set(GROUP_COLUMNS)),
        input_tokens: totals.inputTokens,
        output_tokens: totals.outputTokens,
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
