/** Logs, feedback, model pricing and the usage ingest through the admin API, with the access rules. */
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UsageRecord } from '@gatehouse/gateway/snapshot'
import { compileSnapshot } from '../compile/snapshot.ts'
import { registerUsageIngestRoute } from '../distribution/usage-routes.ts'
import { generateUsageRecords } from '../usage/testing.ts'
import { createHarness, type Harness } from './testing.ts'

let h: Harness
let wsA: string
let wsB: string
let memberId: string
let memberKey: string
let serviceKey: string
let exportKey: string
let records: UsageRecord[]

const NOW = Date.now()

beforeAll(async () => {
  h = await createHarness()
  wsA = (await h.workspace('Alpha')).id
  wsB = (await h.workspace('Beta')).id
  memberId = await h.user('member@example.com', 'member', { id: wsA, role: 'member' })
  memberKey = await h.key('workspace/user', { name: 'member', workspace_id: wsA, user_id: memberId, scopes: ['logs.list', 'logs.view', 'analytics.view', 'completions.write'] })
  serviceKey = await h.key('workspace/service', { name: 'svc', workspace_id: wsA, scopes: ['logs.list', 'logs.view', 'logs.write', 'analytics.view'] })
  exportKey = await h.key('workspace/service', { name: 'exporter', workspace_id: wsA, scopes: ['logs.list', 'logs.export'] })
  records = generateUsageRecords({ count: 7, fromMs: NOW - 3_600_000, toMs: NOW - 60_000, organizationId: h.orgId, workspaceIds: [wsA], seed: 3 })
  records.forEach((record, index) => {
    record.workspaceId = index < 5 ? wsA : wsB
    record.userId = index < 3 ? memberId : 'someone-else'
    record.requestBody = { messages: [{ role: 'user', content: `question ${index}` }] }
    record.logLevel = 'full'
  })
  // A transcription billed by the second and a speech request billed by the character.
  Object.assign(records[1]!, { audioSeconds: 3.5, inputCharacters: 42, images: 2, imageInputTokens: 300 })
  await h.store.usageLogs.ingest(records)
})
afterAll(async () => {
  await h?.close()
})

type LogList = { data: Array<{ id: string; workspace_id: string; user: string }>; has_more: boolean; next_cursor: string | null }

describe('logs', () => {
  it('lists newest first with a cursor that visits every row once', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: LogList = (await h.call('GET', `/v1/logs?limit=2${cursor ? `&cursor=${cursor}` : ''}`, h.ownerKey)).json()
      seen.push(...page.data.map((log) => log.id))
      cursor = page.next_cursor
    } while (cursor !== null)
    expect(seen).toHaveLength(7)
    expect(new Set(seen).size).toBe(7)
    const byTime = [...records].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id)).map((r) => r.id)
    expect(seen).toEqual(byTime)
    expect((await h.call('GET', '/v1/logs?cursor=garbage', h.ownerKey)).statusCode).toBe(400)
  })

  it('filters by workspace, status, metadata and latency', async () => {
    const beta: LogList = (await h.call('GET', `/v1/logs?workspace_id=${wsB}`, h.ownerKey)).json()
    expect(beta.data.map((l) => l.workspace_id)).toEqual([wsB, wsB])
    const team = records[0]!.metadata.team!
    const meta: LogList = (await h.call('GET', `/v1/logs?metadata=${encodeURIComponent(JSON.stringify({ team }))}`, h.ownerKey)).json()
    expect(meta.data.length).toBe(records.filter((r) => r.metadata.team === team).length)
    const slowest = Math.max(...records.map((r) => r.latencyMs))
    const slow: LogList = (await h.call('GET', `/v1/logs?latency_min=${slowest}`, h.ownerKey)).json()
    expect(slow.data).toHaveLength(1)
    expect((await h.call('GET', `/v1/logs?status_code=abc`, h.ownerKey)).statusCode).toBe(400)
  })

  it('confines workspace keys to their workspace, and members to their own requests when the workspace says so', async () => {
    const service: LogList = (await h.call('GET', `/v1/logs?workspace_slug=${wsB}`, serviceKey)).json()
    expect(service.data).toHaveLength(5)
    expect(service.data.every((l) => l.workspace_id === wsA)).toBe(true)
    expect(((await h.call('GET', '/v1/logs', memberKey)).json() as LogList).data).toHaveLength(5)

    await h.store.workspaces.update(h.orgId, wsA, { settings: { security_settings: { data_visibility: { request_response_bodies: 'managers_and_admins' }, analytics_access: { view: 'managers_and_admins' } } } })
    const own: LogList = (await h.call('GET', '/v1/logs', memberKey)).json()
    expect(own.data).toHaveLength(3)
    expect(own.data.every((l) => l.user === memberId)).toBe(true)
    const other = records.find((r) => r.workspaceId === wsA && r.userId !== memberId)!
    expect((await h.call('GET', `/v1/logs/${other.id}`, memberKey)).statusCode).toBe(404)
    expect((await h.call('GET', `/v1/analytics/summary`, memberKey)).statusCode).toBe(403)
    // The workspace's service key (a manager) still sees everything.
    expect(((await h.call('GET', '/v1/logs', serviceKey)).json() as LogList).data).toHaveLength(5)
    await h.store.workspaces.update(h.orgId, wsA, { settings: {} })
  })

  it('answers one log with its bodies and log_format, and 404 across workspaces', async () => {
    const one = (await h.call('GET', `/v1/logs/${records[1]!.id}`, serviceKey)).json()
    expect(one).toMatchObject({ id: records[1]!.id, log_format: 'gatehouse.v1', request: { body: { messages: [{ content: 'question 1' }] } } })
    expect(one.usage).toMatchObject({ audio_seconds: 3.5, input_characters: 42, images: 2, image_input_tokens: 300 })
    expect((await h.call('GET', `/v1/logs/${records[0]!.id}`, serviceKey)).json().usage).toMatchObject({ audio_seconds: null, input_characters: 0, images: 0, image_input_tokens: 0 })
    expect((await h.call('GET', `/v1/logs/${records[6]!.id}`, serviceKey)).statusCode).toBe(404)
  })

  it('exports a filtered range as CSV or JSONL with logs.export only', async () => {
    expect((await h.call('GET', '/v1/logs/export?format=csv', serviceKey)).statusCode).toBe(403)
    const csv = await h.call('GET', '/v1/logs/export?format=csv', exportKey)
    expect(csv.statusCode).toBe(200)
    expect(csv.headers['content-type']).toContain('text/csv')
    const lines = csv.body.trim().split('\n')
    expect(lines[0]!.startsWith('id,created_at,')).toBe(true)
    expect(lines).toHaveLength(6)
    const jsonl = await h.call('GET', '/v1/logs/export', h.ownerKey)
    expect(jsonl.body.trim().split('\n').map((line) => JSON.parse(line).id).sort()).toEqual(records.map((r) => r.id).sort())
  })
})

describe('feedback', () => {
  it('takes feedback from workspace keys only, validates it, and joins it to the log', async () => {
    const trace = records[0]!.traceId
    expect((await h.call('POST', '/v1/feedback', h.ownerKey, { trace_id: trace, value: 5 })).statusCode).toBe(403)
    const bad = await h.call('POST', '/v1/feedback', serviceKey, { trace_id: trace, value: 11 })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error.param).toBe('value')
    const created = await h.call('POST', '/v1/feedback', serviceKey, { trace_id: trace, value: 7, weight: 0.5, metadata: { reason: 'good' } })
    expect(created.json()).toMatchObject({ status: 'success', feedback_ids: [expect.any(String)] })
    const id = created.json().feedback_ids[0]
    expect((await h.call('PUT', `/v1/feedback/${id}`, serviceKey, { value: -2 })).statusCode).toBe(200)
    const log = (await h.call('GET', `/v1/logs/${records[0]!.id}`, serviceKey)).json()
    expect(log.feedback).toEqual([expect.objectContaining({ id, value: -2, weight: 0.5, metadata: { reason: 'good' } })])
    expect((await h.call('PUT', `/v1/feedback/${id}`, memberKey, { value: 1 })).statusCode).toBe(403)
  })
})

describe('model pricing', () => {
  it('versions overrides, compiles the newest into the snapshot and removes it on delete', async () => {
    const first = await h.call('PUT', '/v1/model-pricing/openai/gpt-4o', h.ownerKey, { input: 0.000001, output: 0.000002 })
    expect(first.json()).toMatchObject({ version: 1, provider: 'openai', model: 'gpt-4o' })
    expect((await h.call('PUT', '/v1/model-pricing/openai/gpt-4o', h.ownerKey, { input: 0.000003 })).json().version).toBe(2)
    expect((await h.call('PUT', '/v1/model-pricing/openai/gpt-4o', h.ownerKey, { input: -1 })).statusCode).toBe(400)
    expect((await h.call('PUT', '/v1/model-pricing/openai/gpt-4o', memberKey, { input: 1 })).statusCode).toBe(403)
    const versions = (await h.call('GET', '/v1/model-pricing/openai/gpt-4o/versions', h.ownerKey)).json()
    expect(versions.data.map((v: { version: number }) => v.version)).toEqual([2, 1])
    const wsPrice = await h.call('PUT', '/v1/model-pricing/anthropic/claude-3-5-haiku', serviceKey, { output: 0.00001 })
    expect(wsPrice.statusCode).toBe(403)

    let snapshot = await compileSnapshot(h.store, { generation: 1 })
    expect(snapshot.prices).toEqual([expect.objectContaining({ provider: 'openai', model: 'gpt-4o', input: 0.000003, output: null, version: expect.stringMatching(/:v2$/) })])
    expect((await h.call('DELETE', '/v1/model-pricing/openai/gpt-4o', h.ownerKey)).statusCode).toBe(200)
    snapshot = await compileSnapshot(h.store, { generation: 2 })
    expect(snapshot.prices).toEqual([])
    expect(snapshot.workspaces.find((w) => w.id === wsA)?.logLevel).toBe('full')
  })

  it('takes audio token prices in an override, versioned, into the snapshot', async () => {
    // Break tried: the compiler dropping the override's audio output price (the snapshot assertion fails).
    const put = await h.call('PUT', '/v1/model-pricing/openai/gpt-realtime', h.ownerKey, { audio_input: 0.00003, audio_output: 0.00006, cached_audio_input: 0.0000005 })
    expect(put.statusCode, put.body).toBe(200)
    expect(put.json()).toMatchObject({ version: 1, audio_input: 0.00003, audio_output: 0.00006, cached_audio_input: 0.0000005, input: null })
    expect((await h.call('PUT', '/v1/model-pricing/openai/gpt-realtime', h.ownerKey, { audio_output: -1 })).statusCode).toBe(400)
    expect((await h.call('PUT', '/v1/model-pricing/openai/gpt-realtime', h.ownerKey, { audio_output: 0.00007 })).json()).toMatchObject({ version: 2, audio_input: null, audio_output: 0.00007 })
    const versions = (await h.call('GET', '/v1/model-pricing/openai/gpt-realtime/versions', h.ownerKey)).json()
    expect(versions.data.map((v: { version: number; audio_output: number }) => [v.version, v.audio_output])).toEqual([[2, 0.00007], [1, 0.00006]])
    const snapshot = await compileSnapshot(h.store, { generation: 3 })
    expect(snapshot.prices).toEqual([expect.objectContaining({ provider: 'openai', model: 'gpt-realtime', audioInput: null, audioOutput: 0.00007, cachedAudioInput: null, version: expect.stringMatching(/:v2$/) })])
    expect((await h.call('DELETE', '/v1/model-pricing/openai/gpt-realtime', h.ownerKey)).statusCode).toBe(200)
  })

  it('takes a price per character (speech input) in an override, into the snapshot', async () => {
    const put = await h.call('PUT', '/v1/model-pricing/openai/tts-1', h.ownerKey, { per_character: 0.00002 })
    expect(put.json()).toMatchObject({ version: 1, per_character: 0.00002, input: null })
    expect((await h.call('PUT', '/v1/model-pricing/openai/tts-1', h.ownerKey, { per_character: -1 })).statusCode).toBe(400)
    const snapshot = await compileSnapshot(h.store, { generation: 4 })
    expect(snapshot.prices).toEqual([expect.objectContaining({ provider: 'openai', model: 'tts-1', perCharacter: 0.00002, perAudioSecond: null })])
    expect((await h.call('DELETE', '/v1/model-pricing/openai/tts-1', h.ownerKey)).statusCode).toBe(200)
    const lookup = (await h.call('GET', '/model-configs/pricing/openai/tts-1', null)).json()
    expect(lookup.pay_as_you_go.additional_units.characters.price).toBeCloseTo(0.0015, 12)
  })

  it('answers the public lookup without a key, in cents per token', async () => {
    const found = await h.call('GET', '/model-configs/pricing/openai/gpt-4o-mini', null)
    expect(found.statusCode).toBe(200)
    expect(found.json().pay_as_you_go.request_token.price).toBeCloseTo(0.000015, 12)
    const realtime = (await h.call('GET', '/model-configs/pricing/openai/gpt-realtime', null)).json()
    expect(realtime.pay_as_you_go.request_audio_token.price).toBeCloseTo(0.0032, 12)
    expect(realtime.pay_as_you_go.response_audio_token.price).toBeCloseTo(0.0064, 12)
    expect(realtime.pay_as_you_go.cache_read_audio_input_token.price).toBeCloseTo(0.00004, 12)
    const missing = await h.call('GET', '/model-configs/pricing/openai/no-such-model', null)
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toEqual({ error: 'Model not found' })
  })
})

describe('usage ingest route', () => {
  it('takes batches with the gateway token, stores each record once and names the ones it refuses', async () => {
    const app = Fastify()
    registerUsageIngestRoute(app, { store: h.store, gatewayToken: 'gw-token-0123456789' })
    const batch = generateUsageRecords({ count: 3, fromMs: NOW - 60_000, toMs: NOW, organizationId: h.orgId, workspaceIds: [wsA], seed: 11 })
    const post = (token: string, body: unknown) => app.inject({ method: 'POST', url: '/v1/gateway-usage/batches', headers: { authorization: `Bearer ${token}` }, payload: body as object })
    expect((await post('wrong', { records: batch })).statusCode).toBe(401)
    expect((await post('gw-token-0123456789', { records: [] })).statusCode).toBe(400)
    const first = await post('gw-token-0123456789', { records: [...batch, { id: 'broken' }] })
    expect(first.json()).toMatchObject({ accepted: 3, duplicates: 0, rejected: [{ index: 3 }] })
    expect((await post('gw-token-0123456789', { records: batch })).json()).toMatchObject({ accepted: 0, duplicates: 3 })
    await app.close()
  })
})
