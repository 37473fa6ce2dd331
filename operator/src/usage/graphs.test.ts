/**
 * The graphs with their own queries (rescued requests, cache hits and savings, cache-hit latency, errors by status code)
 * and feedback joined to logs and analytics, checked through the admin API against sums computed
 * here from the raw records and feedback rows, on PGlite and PostgreSQL.
 *
 * Breaks tried, each failing a test here: counting fallbacks as `attempts > 1` (retries at one
 * target then counted as fallbacks); dropping the same-workspace condition from the feedback join
 * (the other workspace's feedback on a shared trace id is counted); attributing a feedback to every
 * request of its trace instead of the first (the two-request trace counts twice); averaging
 * `value × weight` per row instead of dividing by the summed weight; filtering on the plain average
 * of the trace's feedback instead of the weighted one.
 */
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UsageRecord } from '@gatehouse/gateway/snapshot'
import { buildAdminApp } from '../admin/app.ts'
import { TEST_PEPPER } from '../admin/testing.ts'
import { ensureBootstrapAdminKey } from '../identity/bootstrap.ts'
import type { FeedbackRecord, Store } from '../store/index.ts'
import { testBackends } from '../store/testing.ts'
import { generateUsageRecords } from './testing.ts'

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000
const END_MS = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - HOUR_MS
const START_MS = END_MS - 3 * DAY_MS
const COUNT = 3000

const isHit = (r: UsageRecord): boolean => r.cacheStatus === 'HIT' || r.cacheStatus === 'SEMANTIC HIT'
const hourOf = (iso: string): string => new Date(Math.floor(Date.parse(iso) / HOUR_MS) * HOUR_MS).toISOString()

/** Per bucket, the values `pick` gives for the records it keeps. */
function byHour<T>(records: readonly UsageRecord[], pick: (r: UsageRecord) => T | undefined): Map<string, T[]> {
  const out = new Map<string, T[]>()
  for (const record of records) {
    const value = pick(record)
    if (value === undefined) continue
    const key = hourOf(record.createdAt)
    out.set(key, [...(out.get(key) ?? []), value])
  }
  return out
}

const weighted = (list: ReadonlyArray<{ value: number; weight: number }>): number | null => {
  const weight = list.reduce((s, f) => s + f.weight, 0)
  return weight > 0 ? list.reduce((s, f) => s + f.value * f.weight, 0) / weight : null
}

const backends = await testBackends()

describe.each(backends)('graphs and feedback on $name against the raw rows', (backend) => {
  let store: Store
  let dispose: () => Promise<void>
  let app: FastifyInstance
  let key: string
  let records: UsageRecord[]
  let wsA: string
  let wsB: string
  /** Feedback with the request it counts on (the first of its trace, in its workspace). */
  const given: Array<FeedbackRecord & { record: UsageRecord }> = []
  /** The trace that two requests share, and the feedback of another workspace naming a trace of wsA. */
  let sharedTrace: string
  let foreignTrace: string

  beforeAll(async () => {
    if (backend.skip) return
    ;({ store, dispose } = await backend.open())
    key = (await ensureBootstrapAdminKey(store, TEST_PEPPER)).rawKey!
    app = buildAdminApp({ store, pepper: TEST_PEPPER })
    await app.ready()
    const workspace = async (name: string) => {
      const response = await app.inject({ method: 'POST', url: '/v1/admin/workspaces', headers: { 'x-gateway-api-key': key }, payload: { name } })
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{ id: string }>().id
    }
    wsA = await workspace('Graphs A')
    wsB = await workspace('Graphs B')
    const orgId = (await store.organizations.first())!.id
    records = generateUsageRecords({ count: COUNT, fromMs: START_MS, toMs: END_MS, organizationId: orgId, workspaceIds: [wsA, wsB], seed: 77 })
    // Retries and fallbacks, on successes and failures alike: only successes are rescues.
    records.forEach((record, index) => {
      if (index % 7 === 0) Object.assign(record, { attempts: 2, retries: 1 })
      else if (index % 11 === 0) Object.assign(record, { attempts: 3, retries: 2 })
      else if (index % 13 === 0) Object.assign(record, { attempts: 2, retries: 0 })
      else if (index % 17 === 0) Object.assign(record, { attempts: 3, retries: 1 })
    })
    // A second request on the trace of the first one, later: feedback on that trace counts once, on the first.
    sharedTrace = records[0]!.traceId
    const second = { ...records[1]!, id: 'second-on-trace', traceId: sharedTrace, workspaceId: records[0]!.workspaceId, createdAt: new Date(Date.parse(records[0]!.createdAt) + 1000).toISOString() }
    records.push(second)
    for (let index = 0; index < records.length; index += 1000) await store.usageLogs.ingest(records.slice(index, index + 1000))

    for (const [index, record] of records.entries()) {
      if (index % 5 !== 0 || record.id === second.id) continue
      const feedback = await store.feedback.create({
        organizationId: orgId, workspaceId: record.workspaceId!, traceId: record.traceId, value: (index % 21) - 10, weight: ((index % 4) + 1) / 4,
        metadata: {}, apiKeyId: null,
      })
      given.push({ ...feedback, record })
      // Some traces get a second opinion with another weight: the weighted average differs from the plain one.
      if (index % 10 === 0 && index > 0) {
        const second = await store.feedback.create({
          organizationId: orgId, workspaceId: record.workspaceId!, traceId: record.traceId, value: 10 - (index % 7), weight: index % 20 === 0 ? 1 : 0.1, metadata: {}, apiKeyId: null,
        })
        given.push({ ...second, record })
      }
    }
    // The other workspace names a trace of this one: it must not count, nor show on that log.
    const target = records.find((r, index) => index > 0 && index % 5 === 0 && r.workspaceId === wsA)!
    foreignTrace = target.traceId
    await store.feedback.create({ organizationId: orgId, workspaceId: wsB, traceId: foreignTrace, value: 10, weight: 1, metadata: { foreign: true }, apiKeyId: null })
  }, 300_000)
  afterAll(async () => {
    await app?.close()
    await dispose?.()
  })

  const range = `time_of_generation_min=${encodeURIComponent(new Date(START_MS).toISOString())}&time_of_generation_max=${encodeURIComponent(new Date(END_MS).toISOString())}`
  const get = async <T>(url: string): Promise<T> => {
    const response = await app.inject({ method: 'GET', url, headers: { 'x-gateway-api-key': key } })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<T>()
  }
  const graph = <P>(name: string, query = '') => get<{ object: string; bucket_ms: number; summary: Record<string, number | null>; data_points: P[] }>(`/v1/analytics/graphs/${name}?${range}${query}`)

  it.skipIf(backend.skip)('requests rescued by retries and by fallbacks, per bucket and per retry count', async () => {
    const answer = await graph<{ timestamp: string; retry: Array<{ retry_success_count: number; count: number }>; fallback: number }>('requests/rescued')
    expect(answer.object).toBe('analytics-graph')
    expect(answer.bucket_ms).toBe(HOUR_MS)
    const ok = records.filter((r) => r.statusCode < 400)
    const retried = ok.filter((r) => r.retries > 0)
    const fellBack = ok.filter((r) => r.attempts > r.retries + 1)
    expect(retried.length).toBeGreaterThan(100)
    expect(fellBack.length).toBeGreaterThan(50)
    expect(answer.summary).toEqual({ retry: retried.length, fallback: fellBack.length })
    const retryByHour = byHour(retried, (r) => r.retries)
    const fallbackByHour = byHour(fellBack, () => 1)
    for (const point of answer.data_points) {
      const counts = new Map<number, number>()
      for (const retries of retryByHour.get(point.timestamp) ?? []) counts.set(retries, (counts.get(retries) ?? 0) + 1)
      expect(point.retry).toEqual([...counts].sort(([a], [b]) => a - b).map(([retries, count]) => ({ retry_success_count: retries, count })))
      expect(point.fallback).toBe(fallbackByHour.get(point.timestamp)?.length ?? 0)
    }
    expect(answer.data_points.length).toBe(new Set([...retryByHour.keys(), ...fallbackByHour.keys()]).size)
  })

  it.skipIf(backend.skip)('cache-hit latency per bucket', async () => {
    const answer = await graph<{ timestamp: string; avg: number }>('cache/latency')
    const hits = byHour(records.filter(isHit), (r) => r.latencyMs)
    expect(answer.summary).toEqual({})
    expect(answer.data_points.length).toBe(hits.size)
    for (const point of answer.data_points) {
      const list = hits.get(point.timestamp)!
      expect(point.avg).toBeCloseTo(list.reduce((s, v) => s + v, 0) / list.length, 6)
    }
  })

  it.skipIf(backend.skip)('cache hits per bucket, simple and semantic apart, with the rate and the savings summed from the start of the range', async () => {
    // Breaks tried: summing savings per bucket instead of cumulatively, and counting a semantic
    // hit's savings as simple (both fail here).
    type Point = { timestamp: string; simple_hits: number; semantic_hits: number; rate: number; cumulative_simple_cache_savings: number; cumulative_semantic_cache_savings: number }
    const answer = await graph<Point>('cache/hit-rate')
    const simple = records.filter((r) => r.cacheStatus === 'HIT')
    const semantic = records.filter((r) => r.cacheStatus === 'SEMANTIC HIT')
    expect(simple.length).toBeGreaterThan(100)
    expect(semantic.length).toBeGreaterThan(50)
    expect(semantic.some((r) => (r.cacheSavedCostUsd ?? 0) > 0)).toBe(true)
    expect(answer.summary.total).toBe(simple.length + semantic.length)
    expect(answer.summary.rate).toBeCloseTo((100 * (simple.length + semantic.length)) / records.length, 9)
    const all = byHour(records, () => 1)
    const simpleByHour = byHour(simple, (r) => r.cacheSavedCostUsd ?? 0)
    const semanticByHour = byHour(semantic, (r) => r.cacheSavedCostUsd ?? 0)
    expect(answer.data_points.map((p) => p.timestamp)).toEqual([...all.keys()].sort())
    let simpleSaved = 0
    let semanticSaved = 0
    for (const point of answer.data_points) {
      const simpleHere = simpleByHour.get(point.timestamp) ?? []
      const semanticHere = semanticByHour.get(point.timestamp) ?? []
      simpleSaved += simpleHere.reduce((s, v) => s + v, 0)
      semanticSaved += semanticHere.reduce((s, v) => s + v, 0)
      expect(point.simple_hits).toBe(simpleHere.length)
      expect(point.semantic_hits).toBe(semanticHere.length)
      expect(point.rate).toBeCloseTo((100 * (simpleHere.length + semanticHere.length)) / all.get(point.timestamp)!.length, 9)
      expect(point.cumulative_simple_cache_savings).toBeCloseTo(simpleSaved, 9)
      expect(point.cumulative_semantic_cache_savings).toBeCloseTo(semanticSaved, 9)
    }
    expect(simpleSaved).toBeGreaterThan(0)
    // A workspace filter narrows the savings too.
    const narrowed = await graph<Point>('cache/hit-rate', `&workspace_id=${wsB}`)
    const savedB = semantic.filter((r) => r.workspaceId === wsB).reduce((s, r) => s + (r.cacheSavedCostUsd ?? 0), 0)
    expect(narrowed.data_points.at(-1)!.cumulative_semantic_cache_savings).toBeCloseTo(savedB, 9)
  })

  it.skipIf(backend.skip)('errors stacked by status code per bucket, and errors per status code, from the rollups and from logs alike', async () => {
    const errors = records.filter((r) => r.statusCode >= 400)
    const codes = new Map<number, number>()
    for (const r of errors) codes.set(r.statusCode, (codes.get(r.statusCode) ?? 0) + 1)
    // Hour-aligned: rollups; a metadata filter: raw logs. Both must agree with the records.
    for (const [query, subset] of [['', errors], [`&metadata=${encodeURIComponent('{"team":"ads"}')}`, errors.filter((r) => r.metadata.team === 'ads')]] as const) {
      const stacks = await graph<{ timestamp: string; stats: Array<{ response_status_code: number; count: number }> }>('errors/stacks', query)
      expect(stacks.summary).toEqual({ total: subset.length })
      const perHour = byHour(subset, (r) => r.statusCode)
      expect(stacks.data_points.length).toBe(perHour.size)
      for (const point of stacks.data_points) {
        const counts = new Map<number, number>()
        for (const code of perHour.get(point.timestamp)!) counts.set(code, (counts.get(code) ?? 0) + 1)
        expect(point.stats).toEqual([...counts].sort(([a], [b]) => a - b).map(([code, count]) => ({ response_status_code: code, count })))
      }
    }
    const statusCodes = await graph<{ status_code: number; count: number }>('errors/status-codes')
    expect(statusCodes.summary).toEqual({ total_errors: errors.length, unique_error_codes: codes.size })
    expect(new Map(statusCodes.data_points.map((p) => [p.status_code, p.count]))).toEqual(codes)
  })

  it.skipIf(backend.skip)('feedback count, weighted average and scores, each feedback once on the first request of its trace', async () => {
    // Own workspace only, once per feedback.
    const feedback = given
    const count = await graph<{ timestamp: string; total: number }>('feedbacks')
    expect(count.summary).toEqual({ total: feedback.length })
    const perHour = byHour(feedback.map((f) => f.record), (r) => r.id)
    expect(new Map(count.data_points.map((p) => [p.timestamp, p.total]))).toEqual(new Map([...perHour].map(([hour, ids]) => [hour, ids.length])))

    const average = await graph<{ timestamp: string; avg: number }>('feedbacks/weighted')
    expect(average.summary.avg).toBeCloseTo(weighted(feedback)!, 5)
    for (const point of average.data_points) {
      const inHour = feedback.filter((f) => hourOf(f.record.createdAt) === point.timestamp)
      expect(point.avg).toBeCloseTo(weighted(inHour)!, 5)
    }

    const scores = await graph<{ score: number; total: number }>('feedbacks/scores')
    const byScore = new Map<number, number>()
    for (const f of feedback) byScore.set(f.value, (byScore.get(f.value) ?? 0) + 1)
    expect(scores.summary).toEqual({ total: feedback.length })
    expect(new Map(scores.data_points.map((p) => [p.score, p.total]))).toEqual(byScore)

    const models = await graph<{ ai_model: string; total: number; avg_weighted_feedback: number }>('feedbacks/ai-models')
    const perModel = new Map<string, typeof feedback>()
    for (const f of feedback) {
      const model = f.record.modelServed ?? f.record.modelRequested!
      perModel.set(model, [...(perModel.get(model) ?? []), f])
    }
    expect(models.data_points.length).toBe(perModel.size)
    for (const point of models.data_points) {
      expect(point.total).toBe(perModel.get(point.ai_model)!.length)
      expect(point.avg_weighted_feedback).toBeCloseTo(weighted(perModel.get(point.ai_model)!)!, 5)
    }
  })

  it.skipIf(backend.skip)('feedback in grouped analytics, the metadata groups and the summary', async () => {
    // Per request: a request has its trace's feedback (the shared trace's second request too).
    const perTrace = new Map<string, Array<{ value: number; weight: number }>>()
    for (const f of given) perTrace.set(`${f.workspaceId}/${f.traceId}`, [...(perTrace.get(`${f.workspaceId}/${f.traceId}`) ?? []), f])
    const feedbackOf = (r: UsageRecord) => perTrace.get(`${r.workspaceId}/${r.traceId}`) ?? []
    const groups = await get<{ data: Array<Record<string, unknown>> }>(`/v1/analytics/groups/workspace?${range}&columns=cost,avg_weighted_feedback,requests_with_feedback,feedback_count`)
    expect(groups.data).toHaveLength(2)
    for (const group of groups.data) {
      const mine = records.filter((r) => r.workspaceId === group.workspace)
      const feedback = mine.flatMap(feedbackOf)
      expect(group.requests).toBe(mine.length)
      expect(group.requests_with_feedback).toBe(mine.filter((r) => feedbackOf(r).length > 0).length)
      expect(group.feedback_count).toBe(feedback.length)
      expect(group.avg_weighted_feedback as number).toBeCloseTo(weighted(feedback)!, 5)
      expect(group.cost as number).toBeCloseTo(mine.reduce((s, r) => s + (r.costUsd ?? 0), 0), 6)
    }
    expect((groups as unknown as { source: string }).source).toBe('logs')

    const teams = await get<{ data: Array<Record<string, unknown>> }>(`/v1/analytics/groups/metadata/team?${range}&page_size=10`)
    for (const group of teams.data) {
      const mine = records.filter((r) => r.metadata.team === group.metadata_value)
      expect(group.requests).toBe(mine.length)
      expect(group.requests_with_feedback).toBe(mine.filter((r) => feedbackOf(r).length > 0).length)
      expect(group.avg_weighted_feedback as number).toBeCloseTo(weighted(mine.flatMap(feedbackOf))!, 5)
    }

    const summary = (await get<{ summary: Record<string, number> }>(`/v1/analytics/summary?${range}`)).summary
    expect(summary.feedback_count).toBe(given.length)
    expect(summary.avg_weighted_feedback).toBeCloseTo(weighted(given)!, 5)
  })

  it.skipIf(backend.skip)('logs show the feedback of their trace from their own workspace, in the list and one by one', async () => {
    type Log = { id: string; trace_id: string; feedback: Array<{ id: string; value: number; weight: number; metadata: Record<string, unknown> }> }
    const target = records.find((r) => r.traceId === foreignTrace)!
    const list = await get<{ data: Log[] }>(`/v1/logs?${range}&trace_id=${encodeURIComponent(foreignTrace)}`)
    const own = given.filter((f) => f.traceId === foreignTrace && f.workspaceId === target.workspaceId)
    expect(own.length).toBeGreaterThan(0)
    expect(list.data.map((l) => l.feedback)).toEqual([own.map((f) => expect.objectContaining({ id: f.id, value: f.value, weight: f.weight }))])
    const one = await get<Log>(`/v1/logs/${target.id}`)
    expect(one.feedback.map((f) => f.id)).toEqual(own.map((f) => f.id))

    const shared = await get<{ data: Log[] }>(`/v1/logs?${range}&trace_id=${encodeURIComponent(sharedTrace)}`)
    expect(shared.data).toHaveLength(2)
    const sharedFeedback = given.filter((f) => f.traceId === sharedTrace).map((f) => f.id)
    expect(sharedFeedback).toHaveLength(1)
    for (const log of shared.data) expect(log.feedback.map((f) => f.id)).toEqual(sharedFeedback)
  })

  it.skipIf(backend.skip)('filters by the weighted feedback of the trace, in logs and in feedback analytics', async () => {
    const perTrace = new Map<string, Array<{ value: number; weight: number }>>()
    for (const f of given) perTrace.set(`${f.workspaceId}/${f.traceId}`, [...(perTrace.get(`${f.workspaceId}/${f.traceId}`) ?? []), f])
    const scoreOf = (r: UsageRecord): number | null => weighted(perTrace.get(`${r.workspaceId}/${r.traceId}`) ?? [])
    const wanted = records.filter((r) => { const score = scoreOf(r); return score !== null && score >= 2 && score <= 6 })
    expect(wanted.length).toBeGreaterThan(10)
    const groups = await get<{ data: Array<{ requests: number }> }>(`/v1/logs/groups/workspace?${range}&weighted_feedback_min=2&weighted_feedback_max=6`)
    expect(groups.data.reduce((s, g) => s + g.requests, 0)).toBe(wanted.length)
    const count = await graph<{ total: number }>('feedbacks', '&weighted_feedback_min=2&weighted_feedback_max=6')
    expect(count.summary.total).toBe(given.filter((f) => { const score = scoreOf(f.record); return score !== null && score >= 2 && score <= 6 }).length)
  })

  it.skipIf(backend.skip)('names every graph of the spec and refuses unknown ones', async () => {
    for (const name of ['requests', 'cost', 'latency', 'tokens', 'users', 'users/requests', 'errors', 'errors/rate', 'errors/stacks', 'errors/status-codes',
      'requests/rescued', 'cache/hit-rate', 'cache/latency', 'feedbacks', 'feedbacks/scores', 'feedbacks/weighted', 'feedbacks/ai-models']) {
      expect((await graph(name)).object).toBe('analytics-graph')
    }
    const unknown = await app.inject({ method: 'GET', url: `/v1/analytics/graphs/nope?${range}`, headers: { 'x-gateway-api-key': key } })
    expect(unknown.statusCode).toBe(400)
    const badColumn = await app.inject({ method: 'GET', url: `/v1/analytics/groups/model?${range}&columns=avg_feedbackz`, headers: { 'x-gateway-api-key': key } })
    expect(badColumn.statusCode).toBe(400)
  })
})
