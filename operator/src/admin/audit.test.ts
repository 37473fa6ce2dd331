/**
 * Audit of every admin write, the audit query API, and the secrecy guarantee: no raw key (nor its
 * hash, nor a provider secret) in any stored row, log line or error body.
 */
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pino } from 'pino'
import { hashApiKey } from '@gatehouse/gateway/snapshot'
import type { LightMyRequestResponse } from 'fastify'
import { compileSnapshot } from '../compile/snapshot.ts'
import { createHarness, TEST_PEPPER, type Harness } from './testing.ts'

const logLines: string[] = []
const PROVIDER_SECRET = 'sk-provider-secret-0123456789'
let h: Harness
const rawKeys: string[] = []
const responses: LightMyRequestResponse[] = []

async function call(...args: Parameters<Harness['call']>): Promise<LightMyRequestResponse> {
  const response = await h.call(...args)
  responses.push(response)
  const body = response.headers['content-type']?.toString().includes('json') ? response.json() as Record<string, unknown> : {}
  if (typeof body.key === 'string' && body.key.startsWith('ghk_')) rawKeys.push(body.key)
  return response
}

beforeAll(async () => {
  const sink = new Writable({ write(chunk, _encoding, done) { logLines.push(String(chunk)); done() } })
  h = await createHarness({ logger: pino({ level: 'trace' }, sink) })
  rawKeys.push(h.ownerKey)
})
afterAll(() => h.close())

describe('audit log', () => {
  it('records every admin write with actor, action, target, time, IP and redacted details', async () => {
    const ws = (await call('POST', '/v1/admin/workspaces', h.ownerKey, { name: 'Audited' })).json().id as string
    const user = (await call('POST', '/v1/admin/users', h.ownerKey, { email: 'audited@example.com', role: 'member' })).json().id as string
    const writes: Array<Parameters<Harness['call']>> = [
      ['PUT', `/v1/admin/workspaces/${ws}`, h.ownerKey, { description: 'changed' }],
      ['POST', `/v1/admin/workspaces/${ws}/users`, h.ownerKey, { users: [{ id: user, role: 'member' }] }],
      ['PUT', `/v1/admin/workspaces/${ws}/users/${user}`, h.ownerKey, { role: 'manager' }],
      ['PUT', `/v1/admin/users/${user}`, h.ownerKey, { first_name: 'Ann' }],
      ['POST', '/v1/admin/users/invites', h.ownerKey, { email: 'inv@example.com', role: 'member' }],
      ['PUT', '/v1/organisation/settings', h.ownerKey, { session_settings: { max_session_ttl: 1800 } }],
      ['POST', '/v1/api-keys/workspace/service', h.ownerKey, { name: 'svc', workspace_id: ws, scopes: ['completions.write'] }],
      ['POST', '/v1/api-keys/workspace/user', h.ownerKey, { name: 'usr', workspace_id: ws, user_id: user, scopes: ['completions.write'] }],
      ['POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'adm', scopes: ['workspaces.list'] }],
    ]
    for (const write of writes) expect((await call(...write)).statusCode).toBe(200)
    const keyId = responses.at(-1)!.json().id as string
    const more: Array<Parameters<Harness['call']>> = [
      // Refused by the key-rights table: a workspace key creating an admin key.
      ['POST', '/v1/api-keys/organisation/service', rawKeys[1]!, { name: 'escalate', scopes: ['workspaces.list'] }],
      ['PUT', `/v1/api-keys/${keyId}`, h.ownerKey, { name: 'adm 2' }],
      ['POST', `/v1/api-keys/${keyId}/rotate`, h.ownerKey, { key_transition_period_ms: 3_600_000 }],
      ['DELETE', `/v1/api-keys/${keyId}`, h.ownerKey],
      ['DELETE', `/v1/admin/workspaces/${ws}/users/${user}`, h.ownerKey],
      ['DELETE', `/v1/admin/users/${user}`, h.ownerKey],
      ['DELETE', `/v1/admin/workspaces/${ws}`, h.ownerKey],
      // Refused writes are audited too.
      ['POST', '/v1/admin/workspaces', h.ownerKey, { name: 'x'.repeat(256) }],
      ['DELETE', `/v1/admin/workspaces/${ws}`, null],
    ]
    for (const write of more) await call(...write)
    const writesMade = responses.filter((r) => r.raw.req.method !== 'GET')
    const audit = await h.store.audit.list(h.orgId, {}, 0, 100)
    for (const response of writesMade) {
      const requestId = response.headers['x-request-id'] as string
      const record = audit.data.find((r) => r.requestId === requestId)
      expect(record, `${response.raw.req.method} ${response.raw.req.url}`).toBeDefined()
      expect(record).toMatchObject({ method: response.raw.req.method, responseStatusCode: response.statusCode, clientIp: '127.0.0.1' })
      if (response.statusCode !== 401) expect(record!.actorId).toBeTruthy()
      expect(record!.occurredAt).toMatch(/^\d{4}-/)
    }
    const create = audit.data.find((r) => r.action === 'api_key.create' && r.resourceType === 'api_key')!
    expect(create).toMatchObject({ actorType: 'api_key', uri: '/v1/api-keys/:type/:subtype' })
    expect(audit.data.find((r) => r.action === 'api_key.rotate')?.resourceId).toBe(keyId)
    expect(audit.data.find((r) => r.action === 'workspace.delete')?.resourceId).toBe(ws)
  })

  it('answers GET /v1/audit-logs with filters and pages', async () => {
    const all = (await call('GET', '/v1/audit-logs?page_size=100', h.ownerKey)).json()
    expect(all.object).toBe('list')
    expect(all.total).toBeGreaterThan(10)
    const rotations = (await call('GET', '/v1/audit-logs?action=api_key.rotate', h.ownerKey)).json()
    expect(rotations.data.map((r: { action: string }) => r.action)).toEqual(['api_key.rotate'])
    const refused = (await call('GET', '/v1/audit-logs?response_status_code=403&method=POST', h.ownerKey)).json()
    expect(refused.total).toBe(1)
    const window = (await call('GET', `/v1/audit-logs?start_time=${encodeURIComponent('2000-01-01T00:00:00Z')}&end_time=${encodeURIComponent('2001-01-01T00:00:00Z')}`, h.ownerKey)).json()
    expect(window.total).toBe(0)
    const page = (await call('GET', '/v1/audit-logs?page_size=2&current_page=1&resource_type=api_key', h.ownerKey)).json()
    expect(page.data).toHaveLength(2)
    expect((await call('GET', '/v1/audit-logs?start_time=yesterday', h.ownerKey)).statusCode).toBe(400)
  })
})

describe('secrecy', () => {
  it('keeps raw keys, key hashes and provider secrets out of every stored row, log line and error body', async () => {
    await h.store.providers.upsert({ organizationId: h.orgId, workspaceId: null, slug: 'openai', name: 'OpenAI', kind: 'openai', credentials: { apiKey: PROVIDER_SECRET } })
    const snapshot = await compileSnapshot(h.store, { generation: 1, clock: h.clock.read })
    expect(snapshot.providers[0]?.credentials).toEqual({ apiKey: PROVIDER_SECRET })
    // Provoke error bodies that could echo credentials.
    await call('GET', '/v1/admin/workspaces', rawKeys[1]!.slice(0, -2) + 'zz')
    await call('GET', '/v1/admin/workspaces', null, undefined, { authorization: `Bearer ${rawKeys[1]}x` })
    await call('POST', '/v1/admin/workspaces', h.ownerKey, { name: 'leak', description: rawKeys[1], api_key: rawKeys[2] })
    await call('POST', '/v1/admin/workspaces', h.ownerKey, '{"name": "' + rawKeys[1] as unknown as object, { 'content-type': 'application/json' })

    expect(rawKeys.length).toBeGreaterThanOrEqual(5)
    const secrets = [...rawKeys, ...rawKeys.map((raw) => hashApiKey(raw, TEST_PEPPER)), PROVIDER_SECRET]
    const tables = (await h.db.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).map((t) => t.tablename)
    expect(tables).toEqual(expect.arrayContaining(['api_keys', 'audit_log', 'providers', 'workspaces', 'users']))
    for (const table of tables) {
      const rows = JSON.stringify(await h.db.query(`SELECT * FROM ${table}`))
      for (const [index, raw] of rawKeys.entries()) expect(rows, `raw key ${index} in ${table}`).not.toContain(raw)
      expect(rows, `provider secret in ${table}`).not.toContain(PROVIDER_SECRET)
      if (table !== 'api_keys') {
        for (const secret of secrets) expect(rows, `hash or secret in ${table}`).not.toContain(secret)
      }
    }
    expect(logLines.length).toBeGreaterThan(0)
    const logs = logLines.join('\n')
    for (const secret of secrets) expect(logs).not.toContain(secret)
    const errorBodies = responses.filter((r) => r.statusCode >= 400).map((r) => r.body)
    expect(errorBodies.length).toBeGreaterThan(3)
    for (const body of errorBodies) {
      expect(body).toMatch(/^\{"error":\{"message":/)
      for (const secret of secrets) expect(body).not.toContain(secret)
    }
  })
})

describe('store outage', () => {
  it('answers 503 with Retry-After, never 401, when the store is down', async () => {
    await h.store.close()
    const response = await h.call('GET', '/v1/admin/workspaces', h.ownerKey)
    expect(response.statusCode).toBe(503)
    expect(response.headers['retry-after']).toBe('2')
    expect(response.json().error).toMatchObject({ code: 'dependency_unavailable', type: 'service_unavailable_error' })
  })
})
