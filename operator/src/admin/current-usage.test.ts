/**
 * `usage_limits.current_usage` on key, workspace, provider and integration answers, read from the
 * budget counters under the keys the gateway counts in (limitCounterKey): cost in fractional USD,
 * tokens as counted, null when the counters cannot be read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { limitCounterKey, type SnapshotLimit } from '@gatehouse/gateway/snapshot'
import { createHarness, type Harness } from './testing.ts'

const counters = new Map<string, number>()
let failing = false
let h: Harness
let ws: string

beforeAll(async () => {
  h = await createHarness({
    limitCounters: {
      keyPrefix: 'gh:',
      usage: async (keys) => {
        if (failing) throw new Error('redis down')
        return keys.map((key) => counters.get(key) ?? 0)
      },
    },
  })
  ws = (await h.workspace('Usage')).id
})
afterAll(() => h.close())

/** Spends on a budget the way the gateway would (nano-USD for cost). */
function spend(limit: Pick<SnapshotLimit, 'id' | 'periodicReset' | 'periodicResetDays' | 'periodStartedAt'>, amount: number): void {
  counters.set(limitCounterKey('gh:', h.orgId, { kind: 'usage', ...limit }, [], h.clock.now.getTime()), amount)
}

describe('current usage on admin answers', () => {
  it('shows an API key\'s cost budget spend in fractional USD, and null when the counters are unreachable', async () => {
    const created = await h.call('POST', '/v1/api-keys/workspace/service', h.ownerKey, { name: 'spender', workspace_id: ws, scopes: ['completions.write'], usage_limits: { credit_limit: 10, type: 'cost', periodic_reset: 'monthly' } })
    const { id } = created.json() as { id: string }
    const key = (await h.store.apiKeys.get(h.orgId, id))!
    spend({ id: `api_key:${id}:usage:cost`, periodicReset: 'monthly', periodicResetDays: null, periodStartedAt: key.lastResetAt ?? key.createdAt }, 1_234_567_890)
    const view = (await h.call('GET', `/v1/api-keys/${id}`, h.ownerKey)).json()
    expect(view.usage_limits).toMatchObject({ credit_limit: 10, type: 'cost', current_usage: 1.23456789 })
    failing = true
    expect((await h.call('GET', `/v1/api-keys/${id}`, h.ownerKey)).json().usage_limits.current_usage).toBeNull()
    failing = false
  })

  it('shows each workspace usage limit\'s own counter (tokens and cost)', async () => {
    await h.call('PUT', `/v1/admin/workspaces/${ws}`, h.ownerKey, { usage_limits: [{ credit_limit: 100, type: 'cost' }, { credit_limit: 5000, type: 'tokens' }] })
    const workspace = (await h.store.workspaces.get(h.orgId, ws))!
    const anchor = workspace.lastResetAt ?? workspace.createdAt
    spend({ id: `workspace:${ws}:usage:tokens`, periodicReset: null, periodicResetDays: null, periodStartedAt: anchor }, 1234)
    spend({ id: `workspace:${ws}:usage:cost`, periodicReset: null, periodicResetDays: null, periodStartedAt: anchor }, 500_000_000)
    const view = (await h.call('GET', `/v1/admin/workspaces/${ws}`, h.ownerKey)).json()
    expect(view.usage_limits.map((l: { type: string; current_usage: number }) => [l.type, l.current_usage])).toEqual([['cost', 0.5], ['tokens', 1234]])
  })

  it('shows a provider\'s and an integration workspace\'s budget usage', async () => {
    const provider = await h.store.providers.upsert({ organizationId: h.orgId, workspaceId: ws, slug: 'metered', name: 'M', kind: 'openai', credentials: { apiKey: 'sk' }, usageLimits: { credit_limit: 3, type: 'tokens' } })
    spend({ id: `provider:${provider.id}:usage:tokens`, periodicReset: null, periodicResetDays: null, periodStartedAt: provider.createdAt }, 2)
    const providerView = (await h.call('GET', `/v1/providers/metered?workspace_id=${ws}`, h.ownerKey)).json()
    expect(providerView.usage_limits).toMatchObject({ credit_limit: 3, current_usage: 2 })

    const integration = (await h.call('POST', '/v1/integrations', h.ownerKey, { name: 'Metered OA', slug: 'metered-oa', ai_provider_id: 'openai', key: 'sk' })).json() as { id: string }
    const update = await h.call('PUT', '/v1/integrations/metered-oa/workspaces', h.ownerKey, { workspaces: [{ id: ws, enabled: true, usage_limits: [{ credit_limit: 7, type: 'cost' }] }] })
    expect(update.statusCode, update.body).toBe(200)
    spend({ id: `integration:${integration.id}:${ws}:usage:cost`, periodicReset: null, periodicResetDays: null, periodStartedAt: null }, 2_500_000_000)
    const access = (await h.call('GET', '/v1/integrations/metered-oa/workspaces', h.ownerKey)).json()
    expect(access.workspaces[0].usage_limits[0]).toMatchObject({ credit_limit: 7, current_usage: 2.5 })
  })
})
