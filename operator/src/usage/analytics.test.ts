/**
 * Analytics answers checked against the raw records of a generated data set: 100,000 records over
 * 30 days (see countFor), on PGlite and PostgreSQL, through the admin API. Every column of every groupBy is
 * compared with the same sums computed here from the records themselves; percentiles from the
 * rollups must be within their stated error (5 %) of the exact nearest-rank value, and from the
 * raw logs exact.
 */
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UsageRecord } from '@gatehouse/gateway/snapshot'
import { buildAdminApp } from '../admin/app.ts'
import { TEST_PEPPER } from '../admin/testing.ts'
import { ensureBootstrapAdminKey } from '../identity/bootstrap.ts'
import type { Store } from '../store/index.ts'
import { testBackends } from '../store/testing.ts'
import { GROUP_COLUMNS } from './aggregate.ts'
import { PERCENTILE_RELATIVE_ERROR } from '../store/histogram.ts'
import { generateUsageRecords } from './testing.ts'

/**
 * 100,000 records on PostgreSQL; PGlite (single-threaded WASM, ~4 s per 1,000 records of this
 * worst-case spread on the project's 2-core machine) gets 25,000 unless GATEHOUSE_ANALYTICS_TEST_RECORDS says otherwise.
 */
const countFor = (backend: string): number => Number(process.env.GATEHOUSE_ANALYTICS_TEST_RECORDS ?? (backend === 'postgres' ? 100_000 : 25_000))
const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000
const END_MS = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - HOUR_MS
const START_MS = END_MS - 30 * DAY_MS

const DIMENSION: Record<string, (r: UsageRecord) => string | number | null> = {
  ai_service: (r) => r.providerKind,
  model: (r) => r.modelServed ?? r.modelRequested,
  status_code: (r) => r.statusCode,
  api_key: (r) => r.apiKeyId,
  config: (r) => r.configId,
  workspace: (r) => r.workspaceId,
  provider: (r) => r.providerId,
  prompt: (r) => r.promptId,
}

function nearestRank(sorted: readonly number[], q: number): number {
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!
}

function expectedGroups(records: readonly UsageRecord[], key: (r: UsageRecord) => string | number | null) {
  const groups = new Map<string | number | null, UsageRecord[]>()
  for (const record of records) {
    const value = key(record)
    const list = groups.get(value) ?? []
    list.push(record)
    groups.set(value, list)
  }
  return new Map([...groups].map(([value, list]) => {
    const latencies = list.map((r) => r.latencyMs).sort((a, b) => a - b)
    const tokens = list.reduce((s, r) => s + r.inputTokens + r.outputTokens, 0)
    const times = list.map((r) => Date.parse(r.createdAt))
    return [value, {
      requests: list.length,
      cost: list.reduce((s, r) => s + (r.costUsd ?? 0), 0),
      total_tokens: tokens,
      avg_tokens: tokens / list.length,
      avg_input_tokens: list.reduce((s, r) => s + r.inputTokens, 0) / list.length,
      avg_output_tokens: list.reduce((s, r) => s + r.outputTokens, 0) / list.length,
      avg_latency: list.reduce((s, r) => s + r.latencyMs, 0) / list.length,
      p95_latency: nearestRank(latencies, 0.95),
      p99_latency: nearestRank(latencies, 0.99),
      error_count: list.filter((r) => r.statusCode >= 400).length,
      success_rate: list.filter((r) => r.statusCode < 400).length / list.length,
      cache_hit_rate: list.filter((r) => r.cacheStatus === 'HIT' || r.cacheStatus === 'SEMANTIC HIT').length / list.length,
      first_seen: new Date(Math.min(...times)).toISOString(),
      last_seen: new Date(Math.max(...times)).toISOString(),
    }] as const
  }))
}

const backends = await testBackends()

describe.each(backends)('analytics on $name against the raw records', (backend) => {
  let store: Store
  let dispose: () => Promise<void>
  let app: FastifyInstance
  let key: string
  let records: UsageRecord[]

  beforeAll(async () => {
    if (backend.skip) return
    ;({ store, dispose } = await backend.open())
    key = (await ensureBootstrapAdminKey(store, TEST_PEPPER)).rawKey!
    const orgId = (await store.organizations.first())!.id
    records = generateUsageRecords({ count: countFor(backend.name), fromMs: START_MS, toMs: END_MS, organizationId: orgId, workspaceIds: ['ws-a', 'ws-b', 'ws-c'], seed: 2026 })
    for (let index = 0; index < records.length; index += 1000) await store.usageLogs.ingest(records.slice(index, index + 1000))
    app = buildAdminApp({ store, pepper: TEST_PEPPER })
    await app.ready()
  }, 600_000)
  afterAll(async () => {
    await app?.close()
    await dispose?.()
  })

  const get = async (url: string) => {
    const response = await app.inject({ method: 'GET', url, headers: { 'x-gateway-api-key': key } })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<{ source: string; total: number; data: Array<Record<string, unknown>> }>()
  }
  const range = (fromMs: number, toMs: number) =>
    `time_of_generation_min=${encodeURIComponent(new Date(fromMs).toISOString())}&time_of_generation_max=${encodeURIComponent(new Date(toMs).toISOString())}`

  function compare(answer: Array<Record<string, unknown>>, groupBy: string, expected: ReturnType<typeof expectedGroups>, exactPercentiles: boolean) {
    expect(answer.length).toBe(expected.size)
    for (const item of answer) {
      const want = expected.get(item[groupBy] as string | number | null)
      expect(want, `group ${String(item[groupBy])}`).toBeDefined()
      expect(item.requests).toBe(want!.requests)
      expect(item.cost as number).toBeCloseTo(want!.cost, 6)
      expect(item.total_tokens).toBe(want!.total_tokens)
      expect(item.avg_tokens as number).toBeCloseTo(want!.avg_tokens, 3)
      expect(item.avg_input_tokens as number).toBeCloseTo(want!.avg_input_tokens, 3)
      expect(item.avg_output_tokens as number).toBeCloseTo(want!.avg_output_tokens, 3)
      expect(item.avg_latency as number).toBeCloseTo(want!.avg_latency, 3)
      expect(item.error_count).toBe(want!.error_count)
      expect(item.success_rate as number).toBeCloseTo(want!.success_rate, 5)
      expect(item.cache_hit_rate as number).toBeCloseTo(want!.cache_hit_rate, 5)
      expect(item.first_seen).toBe(want!.first_seen)
      expect(item.last_seen).toBe(want!.last_seen)
      for (const column of ['p95_latency', 'p99_latency'] as const) {
        if (exactPercentiles) expect(item[column]).toBe(want![column])
        else expect(Math.abs((item[column] as number) - want![column]) / want![column]).toBeLessThanOrEqual(PERCENTILE_RELATIVE_ERROR)
      }
    }
  }

  const columns = `columns=${GROUP_COLUMNS.join(',')}&page_size=100`

  it.skipIf(backend.skip).each(Object.keys(DIMENSION))('groups by %s over 30 days from the hourly rollups', async (groupBy) => {
    const answer = await get(`/v1/analytics/groups/${groupBy}?${range(START_MS, END_MS)}&${columns}`)
    expect(answer.source).toBe('hour')
    compare(answer.data, groupBy, expectedGroups(records, DIMENSION[groupBy]!), false)
  })

  it.skipIf(backend.skip)('answers a minute-aligned range from the minute rollups, and a filtered one from raw logs exactly', async () => {
    const fromMs = END_MS - 2 * DAY_MS + 17 * 60_000
    const toMs = END_MS - 5 * 60_000
    const inRange = records.filter((r) => Date.parse(r.createdAt) >= fromMs && Date.parse(r.createdAt) < toMs)
    const minute = await get(`/v1/analytics/groups/model?${range(fromMs, toMs)}&${columns}`)
    expect(minute.source).toBe('minute')
    compare(minute.data, 'model', expectedGroups(inRange, DIMENSION.model!), false)

    const filtered = inRange.filter((r) => r.metadata.team === 'search')
    const logs = await get(`/v1/logs/groups/provider?${range(fromMs, toMs)}&${columns}&metadata=${encodeURIComponent('{"team":"search"}')}`)
    expect(logs.source).toBe('logs')
    compare(logs.data, 'provider', expectedGroups(filtered, DIMENSION.provider!), true)
  })

  it.skipIf(backend.skip)('graphs and the summary add up to the records', async () => {
    const requests = await app.inject({ method: 'GET', url: `/v1/analytics/graphs/requests?${range(START_MS, END_MS)}`, headers: { 'x-gateway-api-key': key } })
    const graph = requests.json<{ summary: { total: number }; bucket_ms: number; data_points: Array<{ timestamp: string; total: number }> }>()
    expect(graph.summary.total).toBe(records.length)
    expect(graph.bucket_ms).toBe(DAY_MS)
    expect(graph.data_points.reduce((s, p) => s + p.total, 0)).toBe(records.length)
    const firstDay = graph.data_points[0]!
    const dayStart = Date.parse(firstDay.timestamp)
    expect(firstDay.total).toBe(records.filter((r) => Date.parse(r.createdAt) >= dayStart && Date.parse(r.createdAt) < dayStart + DAY_MS).length)

    const summary = (await app.inject({ method: 'GET', url: `/v1/analytics/summary?${range(START_MS, END_MS)}`, headers: { 'x-gateway-api-key': key } })).json<{ summary: Record<string, number> }>().summary
    const all = expectedGroups(records, () => 'all').get('all')!
    expect(summary.requests).toBe(all.requests)
    expect(summary.cost).toBeCloseTo(all.cost, 6)
    expect(summary.error_count).toBe(all.error_count)

    const users = (await app.inject({ method: 'GET', url: `/v1/analytics/graphs/users?${range(END_MS - DAY_MS, END_MS)}`, headers: { 'x-gateway-api-key': key } })).json<{ summary: { total: number } }>()
    const lastDay = records.filter((r) => Date.parse(r.createdAt) >= END_MS - DAY_MS)
    expect(users.summary.total).toBe(new Set(lastDay.map((r) => r.userId).filter((u) => u !== null)).size)
  })
})
