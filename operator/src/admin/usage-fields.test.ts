/**
 * Usage fields of the reference: reset_usage and last_reset_at on providers, last_reset_at and the
 * object form of usage_limits on integration workspaces, usage_limits.current_usage on API keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './testing.ts'

let h: Harness
let ws: string

beforeAll(async () => {
  h = await createHarness()
  ws = (await h.workspace('Usage')).id
})
afterAll(() => h.close())

const limit = { credit_limit: 10, type: 'cost', periodic_reset: 'monthly' }

describe('providers', () => {
  it('start a new usage period with reset_usage and answer last_reset_at', async () => {
    const created = await h.call('POST', '/v1/providers', h.ownerKey, { name: 'Metered', provider: 'openai', key: 'sk-meter-1234567890', workspace_id: ws, usage_limits: limit })
    expect(created.statusCode, created.body).toBe(200)
    const read = async () => (await h.call('GET', `/v1/providers/metered?workspace_id=${ws}`, h.ownerKey)).json()
    expect(await read()).toMatchObject({ usage_limits: limit, last_reset_at: null })
    h.clock.advance(60_000)
    expect((await h.call('PUT', `/v1/providers/metered?workspace_id=${ws}`, h.ownerKey, { reset_usage: true })).statusCode).toBe(200)
    const resetAt = h.clock.now.toISOString()
    expect((await read()).last_reset_at).toBe(resetAt)
    h.clock.advance(60_000)
    expect((await h.call('PUT', `/v1/virtual-keys/metered?workspace_id=${ws}`, h.ownerKey, { note: 'kept' })).statusCode).toBe(200)
    expect((await read()).last_reset_at).toBe(resetAt)
    expect((await h.call('PUT', `/v1/providers/metered?workspace_id=${ws}`, h.ownerKey, { reset_usage: 'yes' })).json().error).toMatchObject({ code: 'AB01', param: 'reset_usage' })
  })
})

describe('integration workspaces', () => {
  it('take usage_limits as one object or a list, and record last_reset_at on reset_usage', async () => {
    expect((await h.call('POST', '/v1/integrations', h.ownerKey, { name: 'Shared', ai_provider_id: 'openai', slug: 'shared', key: 'sk-shared-1234567890', create_default_provider: false })).statusCode).toBe(200)
    const put = (entry: Record<string, unknown>) => h.call('PUT', '/v1/integrations/shared/workspaces', h.ownerKey, { workspaces: [{ id: ws, enabled: true, ...entry }], create_default_provider: false })
    const entry = async () => (await h.call('GET', '/v1/integrations/shared/workspaces', h.ownerKey)).json().workspaces[0]
    expect((await put({ usage_limits: limit })).statusCode).toBe(200)
    expect(await entry()).toMatchObject({ id: ws, usage_limits: [limit], last_reset_at: null })
    expect((await put({ usage_limits: [limit], reset_usage: true })).statusCode).toBe(200)
    const resetAt = h.clock.now.toISOString()
    expect((await entry()).last_reset_at).toBe(resetAt)
    h.clock.advance(60_000)
    expect((await put({ usage_limits: { ...limit, credit_limit: 20 } })).statusCode).toBe(200)
    expect(await entry()).toMatchObject({ usage_limits: [{ ...limit, credit_limit: 20 }], last_reset_at: resetAt })
    const bad = await put({ usage_limits: { credit_limit: -1 } })
    expect(bad.json().error).toMatchObject({ code: 'AB01', param: 'workspaces[0].usage_limits[0].credit_limit' })
  })
})
