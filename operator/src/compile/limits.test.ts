/** Every place a limit is declared, created through the admin API, compiled into snapshot.limits. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SnapshotLimit } from '@gatehouse/gateway/snapshot'
import { createHarness, type Harness } from '../admin/testing.ts'
import { compileSnapshot } from './snapshot.ts'

let h: Harness
let ws: string

beforeAll(async () => {
  h = await createHarness()
  ws = (await h.workspace('Limits')).id
})
afterAll(() => h.close())

async function limits(): Promise<SnapshotLimit[]> {
  return (await compileSnapshot(h.store, { generation: 1, clock: h.clock.read })).limits
}

async function ok(method: 'POST' | 'PUT', path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await h.call(method, path, h.ownerKey, body)
  expect(response.statusCode, response.body).toBe(200)
  return response.json()
}

describe('compileLimits', () => {
  it('compiles a rate-limit policy: conditions grouped by key, group_by, unit, shadow and failure mode', async () => {
    const { id } = await ok('POST', '/v1/policies/rate-limits', {
      name: 'team rpm', workspace_id: ws, type: 'requests', unit: 'rpm', value: 60, shadow: true, failure_mode: 'closed',
      conditions: [{ key: 'endpoint_type', value: 'chatComplete' }, { key: 'endpoint_type', value: 'messages' }, { key: 'metadata.team', value: 'red' }],
      group_by: [{ key: 'api_key' }, { key: 'metadata.user' }],
    })
    const limit = (await limits()).find((l) => l.ownerId === id)
    expect(limit).toMatchObject({
      id: `policy:${id}`, source: 'policy', kind: 'rate', name: 'team rpm', workspaceId: ws, type: 'requests', unit: 'rpm', value: 60,
      conditions: [{ key: 'endpoint_type', values: ['chatComplete', 'messages'] }, { key: 'metadata.team', values: ['red'] }],
      groupBy: ['api_key', 'metadata.user'], shadow: true, failureMode: 'closed', creditLimit: null,
    })
  })

  it('compiles a usage-limit policy with credit limit, alert threshold and periodic reset; archived policies are skipped', async () => {
    const { id } = await ok('POST', '/v1/policies/usage-limits', {
      name: 'budget', workspace_id: ws, type: 'cost', credit_limit: 25.5, alert_threshold: 20, periodic_reset: 'monthly',
      conditions: [{ key: 'workspace_id', value: ws }], group_by: [{ key: 'api_key' }],
    })
    const limit = (await limits()).find((l) => l.ownerId === id)
    expect(limit).toMatchObject({ kind: 'usage', type: 'cost', creditLimit: 25.5, alertThreshold: 20, periodicReset: 'monthly', shadow: false, failureMode: null, unit: null })
    expect(limit?.periodEndsAt).toMatch(/-01T00:00:00.000Z$/)
    const archived = await h.store.policies.create({ organizationId: h.orgId, workspaceId: ws, kind: 'rate_limits', conditions: [{ key: 'api_key', value: '*' }], groupBy: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 1 })
    await h.store.policies.update(h.orgId, archived.id, { status: 'archived' })
    expect((await limits()).some((l) => l.ownerId === archived.id)).toBe(false)
  })

  it('compiles an API key\'s rate and usage limits, keyed stably so raising a limit keeps its counter', async () => {
    const created = await ok('POST', '/v1/api-keys/workspace/service', {
      name: 'limited', workspace_id: ws, scopes: ['completions.write'],
      rate_limits: [{ type: 'requests', unit: 'rpm', value: 10 }, { type: 'tokens', unit: 'rph', value: 5000 }],
      usage_limits: { credit_limit: 3, type: 'tokens', periodic_reset_days: 7 },
    })
    const id = created.id as string
    const own = (await limits()).filter((l) => l.ownerId === id)
    expect(own.map((l) => l.id).sort()).toEqual([`api_key:${id}:rate:requests:rpm`, `api_key:${id}:rate:tokens:rph`, `api_key:${id}:usage:tokens`])
    expect(own.find((l) => l.kind === 'usage')).toMatchObject({ source: 'api_key', conditions: [{ key: 'api_key', values: [id] }], creditLimit: 3, periodicResetDays: 7, type: 'tokens' })
    await ok('PUT', `/v1/api-keys/${id}`, { usage_limits: { credit_limit: 9, type: 'tokens', periodic_reset_days: 7 } })
    expect((await limits()).find((l) => l.id === `api_key:${id}:usage:tokens`)?.creditLimit).toBe(9)
  })

  it('compiles workspace and provider limits, and an integration\'s per-workspace limits onto its providers', async () => {
    await ok('PUT', `/v1/admin/workspaces/${ws}`, { usage_limits: [{ credit_limit: 100, type: 'cost' }], rate_limits: [{ type: 'tokens', unit: 'rpd', value: 1000 }] })
    const integration = await ok('POST', '/v1/integrations', {
      name: 'Shared OpenAI', slug: 'shared-oa', ai_provider_id: 'openai', key: 'sk-test',
    })
    const integrationId = integration.id as string
    const provider = await h.store.providers.upsert({ organizationId: h.orgId, workspaceId: ws, slug: 'oa-limited', name: 'OA', kind: 'openai', integrationId, usageLimits: { credit_limit: 5, type: 'cost' }, rateLimits: [{ type: 'requests', unit: 'rph', value: 100 }] })
    await h.store.integrations.update(h.orgId, integrationId, { globalWorkspaceAccess: { enabled: false }, workspaceAccess: [{ id: ws, enabled: true, usage_limits: [{ credit_limit: 50, type: 'cost' }], rate_limits: [{ type: 'requests', unit: 'rpm', value: 30 }] }] })
    const all = await limits()
    expect(all.filter((l) => l.source === 'workspace' && l.ownerId === ws).map((l) => [l.kind, l.type, l.unit, l.value ?? l.creditLimit])).toEqual([['rate', 'tokens', 'rpd', 1000], ['usage', 'cost', null, 100]])
    expect(all.filter((l) => l.source === 'provider' && l.ownerId === provider.id).map((l) => [l.kind, l.conditions])).toEqual([
      ['rate', [{ key: 'provider', values: [provider.id] }]], ['usage', [{ key: 'provider', values: [provider.id] }]],
    ])
    const viaIntegration = all.filter((l) => l.source === 'integration')
    expect(viaIntegration.map((l) => [l.kind, l.value ?? l.creditLimit, l.workspaceId])).toEqual([['rate', 30, ws], ['usage', 50, ws]])
    // The provider onto the integration (and the default provider its creation made) are covered.
    expect(viaIntegration[0]!.conditions[0]).toEqual({ key: 'workspace_id', values: [ws] })
    expect(viaIntegration[0]!.conditions[1]).toMatchObject({ key: 'provider', values: expect.arrayContaining([provider.id]) })
  })

  it('reports a malformed stored limits field and compiles the rest', async () => {
    const problems: string[] = []
    const other = (await h.workspace('Broken limits')).id
    await h.store.workspaces.update(h.orgId, other, { rateLimits: [{ type: 'requests', unit: 'fortnightly', value: 1 }, { type: 'requests', unit: 'rpm', value: 2 }] })
    const snapshot = await compileSnapshot(h.store, { generation: 1, clock: h.clock.read, onProblem: (p) => problems.push(p.path) })
    expect(snapshot.limits.filter((l) => l.ownerId === other).map((l) => l.value)).toEqual([2])
    expect(problems.some((p) => p.endsWith('rate_limits.0'))).toBe(true)
  })
})
