/**
 * rotation_policy: rotation_period (recurring), next_rotation_at (the next date), or both (first on
 * that date, then every period); a scheduled rotation under a period schedules the next one, again
 * and again; a one-time date is consumed by its rotation but not by an earlier manual one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKeyRotationWorker } from '../workers/key-rotation.ts'
import { createHarness, TEST_PEPPER, type Harness } from './testing.ts'

const HOUR = 3_600_000
const DAY = 24 * HOUR

let h: Harness

beforeAll(async () => {
  h = await createHarness()
})
afterAll(() => h.close())

async function createKey(rotation_policy: Record<string, unknown>) {
  return h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'rp', scopes: ['workspaces.list'], rotation_policy })
}

describe('rotation_policy', () => {
  it('refuses a policy naming neither a period nor a date, on create and update, storing nothing', async () => {
    const before = (await h.store.apiKeys.list(h.orgId, {}, 0, 100)).total
    const neither = { key_transition_period_ms: HOUR }
    const created = await createKey(neither)
    expect(created.statusCode).toBe(400)
    expect(created.json().error).toMatchObject({ code: 'AB01', param: 'rotation_policy.rotation_period' })
    expect((await h.store.apiKeys.list(h.orgId, {}, 0, 100)).total).toBe(before)
    const ok = await createKey({ rotation_period: 'weekly', key_transition_period_ms: HOUR })
    const updated = await h.call('PUT', `/v1/api-keys/${ok.json().id}`, h.ownerKey, { rotation_policy: neither })
    expect(updated.statusCode).toBe(400)
    expect((await h.store.apiKeys.get(h.orgId, ok.json().id))!.rotationPolicy).toEqual({ rotation_period: 'weekly', key_transition_period_ms: HOUR })
  })

  it('takes rotation_period together with next_rotation_at: the first rotation on that date, then every period', async () => {
    const first = '2030-02-10T00:00:00.000Z'
    const startedAt = h.clock.now
    const { id } = (await createKey({ rotation_period: 'weekly', next_rotation_at: first, key_transition_period_ms: HOUR })).json() as { id: string }
    const worker = createKeyRotationWorker({ store: h.store, pepper: TEST_PEPPER, clock: h.clock.read })
    const view = async () => (await h.call('GET', `/v1/api-keys/${id}`, h.ownerKey)).json()
    expect((await view()).rotation_policy).toMatchObject({ rotation_period: 'weekly', next_rotation_at: first })
    h.clock.now = new Date(first)
    expect(await worker.runOnce()).toContain(id)
    expect(await view()).toMatchObject({ last_rotated_at: first, rotation_policy: { rotation_period: 'weekly', next_rotation_at: '2030-02-17T00:00:00.000Z' } })
    h.clock.now = startedAt
  })

  it('schedules the next rotation after every scheduled rotation of a period policy', async () => {
    const { id } = (await createKey({ rotation_period: 'monthly', key_transition_period_ms: HOUR })).json() as { id: string }
    const worker = createKeyRotationWorker({ store: h.store, pepper: TEST_PEPPER, clock: h.clock.read })
    const view = async () => (await h.call('GET', `/v1/api-keys/${id}`, h.ownerKey)).json()
    expect((await view()).rotation_policy.next_rotation_at).toBe('2030-02-01T00:00:00.000Z')
    for (const [at, next] of [['2030-02-01T00:00:00.000Z', '2030-03-01T00:00:00.000Z'], ['2030-03-01T00:00:00.000Z', '2030-04-01T00:00:00.000Z']] as const) {
      h.clock.now = new Date(at)
      expect(await worker.runOnce()).toContain(id)
      const after = await view()
      expect(after.last_rotated_at).toBe(at)
      expect(after.rotation_policy).toMatchObject({ rotation_period: 'monthly', next_rotation_at: next })
    }
  })

  it('keeps a one-time rotation date through an earlier manual rotation, and consumes it when it runs', async () => {
    const at = new Date(h.clock.now.getTime() + 2 * DAY).toISOString()
    const { id } = (await createKey({ next_rotation_at: at, key_transition_period_ms: HOUR })).json() as { id: string }
    expect((await h.call('POST', `/v1/api-keys/${id}/rotate`, h.ownerKey)).statusCode).toBe(200)
    expect((await h.store.apiKeys.get(h.orgId, id))!.nextRotationAt).toBe(at)
    const worker = createKeyRotationWorker({ store: h.store, pepper: TEST_PEPPER, clock: h.clock.read })
    h.clock.advance(2 * DAY)
    expect(await worker.runOnce()).toContain(id)
    expect((await h.store.apiKeys.get(h.orgId, id))!.nextRotationAt).toBeNull()
    h.clock.advance(30 * DAY)
    expect(await worker.runOnce()).not.toContain(id)
  })
})
