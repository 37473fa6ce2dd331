/** API keys over HTTP: who may create what, scope escalation, rotation, expiry and user-key settings. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashApiKey } from '@gatehouse/gateway/snapshot'
import { createKeyExpiryWorker } from '../workers/key-expiry.ts'
import { createKeyRotationWorker } from '../workers/key-rotation.ts'
import type { RotatedKey } from '../identity/api-keys.ts'
import { createHarness, TEST_PEPPER, type Harness } from './testing.ts'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

let h: Harness
let wsA: string
let wsB: string
let adminUserKey: string
let managerKey: string
let memberKey: string
let memberId: string
let managerId: string

async function keyCount(): Promise<number> {
  return (await h.store.apiKeys.list(h.orgId, {}, 0, 100)).total
}

beforeAll(async () => {
  h = await createHarness()
  wsA = (await h.workspace('Alpha')).id
  wsB = (await h.workspace('Beta')).id
  const adminId = await h.user('admin@example.com', 'admin')
  managerId = await h.user('manager@example.com', 'member', { id: wsA, role: 'manager' })
  memberId = await h.user('member@example.com', 'member', { id: wsA, role: 'member' })
  adminUserKey = await h.key('organisation/user', { name: 'admin key', user_id: adminId, scopes: ['organisation_service_api_keys.create', 'workspace_service_api_keys.create', 'workspaces.list', 'completions.write'] })
  managerKey = await h.key('workspace/user', { name: 'manager key', workspace_id: wsA, user_id: managerId, scopes: ['workspace_service_api_keys.create', 'workspace_user_api_keys.create', 'completions.write', 'configs.read'] })
  memberKey = await h.key('workspace/user', { name: 'member key', workspace_id: wsA, user_id: memberId, scopes: ['completions.write', 'workspace_service_api_keys.create', 'workspace_user_api_keys.list'] })
})
afterAll(() => h.close())

describe('roles and key rights (spec table)', () => {
  const adminKeyBody = { name: 'new admin', scopes: ['workspaces.list'] }
  const wsKeyBody = (workspace_id: string) => ({ name: 'new ws', workspace_id, scopes: ['completions.write'] })

  it('organisation owner: admin keys yes, workspace keys in any workspace yes', async () => {
    expect((await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, adminKeyBody)).statusCode).toBe(200)
    expect((await h.call('POST', '/v1/api-keys/workspace/service', h.ownerKey, wsKeyBody(wsA))).statusCode).toBe(200)
    expect((await h.call('POST', '/v1/api-keys/workspace/service', h.ownerKey, wsKeyBody(wsB))).statusCode).toBe(200)
  })

  it('organisation admin: admin keys yes, workspace keys in any workspace yes', async () => {
    expect((await h.call('POST', '/v1/api-keys/organisation/service', adminUserKey, adminKeyBody)).statusCode).toBe(200)
    expect((await h.call('POST', '/v1/api-keys/workspace/service', adminUserKey, wsKeyBody(wsA))).statusCode).toBe(200)
    expect((await h.call('POST', '/v1/api-keys/workspace/service', adminUserKey, wsKeyBody(wsB))).statusCode).toBe(200)
  })

  it('workspace manager: no admin keys, workspace keys only in the managed workspace', async () => {
    const before = await keyCount()
    const admin = await h.call('POST', '/v1/api-keys/organisation/service', managerKey, adminKeyBody)
    expect(admin.statusCode).toBe(403)
    expect(admin.json().error.code).toBe('AB03')
    expect((await h.call('POST', '/v1/api-keys/workspace/service', managerKey, wsKeyBody(wsB))).statusCode).toBe(403)
    expect(await keyCount()).toBe(before)
    expect((await h.call('POST', '/v1/api-keys/workspace/service', managerKey, wsKeyBody(wsA))).statusCode).toBe(200)
    // Workspace defaults to the caller's own.
    expect((await h.call('POST', '/v1/api-keys/workspace/service', managerKey, { name: 'implicit', scopes: ['completions.write'] })).statusCode).toBe(200)
  })

  it('workspace member: neither admin nor workspace keys, whatever the key\'s scopes say', async () => {
    const before = await keyCount()
    expect((await h.call('POST', '/v1/api-keys/organisation/service', memberKey, adminKeyBody)).statusCode).toBe(403)
    expect((await h.call('POST', '/v1/api-keys/workspace/service', memberKey, wsKeyBody(wsA))).statusCode).toBe(403)
    expect((await h.call('POST', '/v1/api-keys/workspace/user', memberKey, { ...wsKeyBody(wsA), user_id: memberId })).statusCode).toBe(403)
    expect(await keyCount()).toBe(before)
  })

  it('a workspace service key acts as its workspace\'s manager', async () => {
    const service = await h.key('workspace/service', { name: 'svc', workspace_id: wsA, scopes: ['workspace_user_api_keys.create', 'completions.write'] })
    expect((await h.call('POST', '/v1/api-keys/workspace/user', service, { name: 'for member', user_id: memberId, scopes: ['completions.write'] })).statusCode).toBe(200)
    expect((await h.call('POST', '/v1/api-keys/workspace/user', service, { name: 'elsewhere', workspace_id: wsB, user_id: memberId, scopes: ['completions.write'] })).statusCode).toBe(403)
  })

  it('user_id: managers create keys for another user; an admin key cannot belong to a member', async () => {
    const forMember = await h.call('POST', '/v1/api-keys/workspace/user', managerKey, { name: 'on behalf', user_id: memberId, scopes: ['completions.write'] })
    expect(forMember.statusCode).toBe(200)
    const created = await h.call('GET', `/v1/api-keys/${forMember.json().id}`, h.ownerKey)
    expect(created.json().user_id).toBe(memberId)
    const adminForMember = await h.call('POST', '/v1/api-keys/organisation/user', h.ownerKey, { name: 'x', user_id: memberId, scopes: ['workspaces.list'] })
    expect(adminForMember.statusCode).toBe(400)
    expect(adminForMember.json().error).toMatchObject({ code: 'AB01', param: 'user_id' })
    const outsider = await h.user('outsider@example.com', 'member')
    const notMember = await h.call('POST', '/v1/api-keys/workspace/user', managerKey, { name: 'x', user_id: outsider, scopes: ['completions.write'] })
    expect(notMember.statusCode).toBe(400)
  })
})

describe('scopes', () => {
  it('refuses scopes beyond the creator\'s own (escalation), storing nothing', async () => {
    const narrow = await h.key('organisation/service', { name: 'narrow', scopes: ['organisation_service_api_keys.create', 'workspaces.list'] })
    const before = await keyCount()
    const escalate = await h.call('POST', '/v1/api-keys/organisation/service', narrow, { name: 'wider', scopes: ['workspaces.list', 'organisation_settings.update'] })
    expect(escalate.statusCode).toBe(403)
    expect(escalate.json().error.message).toContain('organisation_settings.update')
    const fromManager = await h.call('POST', '/v1/api-keys/workspace/service', managerKey, { name: 'wider', scopes: ['configs.delete'] })
    expect(fromManager.statusCode).toBe(403)
    expect(await keyCount()).toBe(before)
    expect((await h.call('POST', '/v1/api-keys/organisation/service', narrow, { name: 'same', scopes: ['workspaces.list'] })).statusCode).toBe(200)
  })

  it('refuses unknown scopes and organisation scopes on workspace keys with AB01 and the field path', async () => {
    const unknown = await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'x', scopes: ['workspaces.list', 'everything'] })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json().error).toMatchObject({ code: 'AB01', param: 'scopes[1]' })
    const orgScope = await h.call('POST', '/v1/api-keys/workspace/service', h.ownerKey, { name: 'x', workspace_id: wsA, scopes: ['workspaces.create'] })
    expect(orgScope.statusCode).toBe(400)
    expect(orgScope.json().error.param).toBe('scopes[0]')
  })

  it('accepts deployments.create and answers the spec spelling deployments:create', async () => {
    const created = await h.call('POST', '/v1/api-keys/workspace/service', h.ownerKey, { name: 'deploy', workspace_id: wsA, scopes: ['deployments.create', 'deployments:list'] })
    expect(created.statusCode).toBe(200)
    expect((await h.call('GET', `/v1/api-keys/${created.json().id}`, h.ownerKey)).json().scopes).toEqual(['deployments:create', 'deployments:list'])
  })

  it('a key cannot raise its own scopes; an owner may change them within its own', async () => {
    const self = await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'self', scopes: ['organisation_service_api_keys.update', 'workspaces.list'] })
    const raw = self.json().key as string
    const selfUpdate = await h.call('PUT', `/v1/api-keys/${self.json().id}`, raw, { scopes: ['organisation_service_api_keys.update', 'workspaces.list', 'workspaces.create'] })
    expect(selfUpdate.statusCode).toBe(403)
    expect((await h.call('PUT', `/v1/api-keys/${self.json().id}`, h.ownerKey, { scopes: ['workspaces.read'] })).statusCode).toBe(200)
    expect((await h.store.apiKeys.get(h.orgId, self.json().id))!.scopes).toEqual(['workspaces.read'])
  })
})

describe('raw keys', () => {
  it('are returned once at creation, stored only as HMAC, and never listed', async () => {
    const created = await h.call('POST', '/v1/api-keys/workspace/service', h.ownerKey, { name: 'once', workspace_id: wsA, scopes: ['completions.write'] })
    const { id, key } = created.json() as { id: string; key: string }
    expect(key).toMatch(/^ghk_ws_/)
    const row = (await h.store.apiKeys.get(h.orgId, id))!
    expect(row.keyHash).toBe(hashApiKey(key, TEST_PEPPER))
    const one = await h.call('GET', `/v1/api-keys/${id}`, h.ownerKey)
    const list = await h.call('GET', '/v1/api-keys?page_size=100', h.ownerKey)
    for (const response of [one, list]) {
      expect(response.body).not.toContain(key)
      expect(response.body).not.toContain(row.keyHash)
    }
    expect(one.json().key).toBe(row.keyHint)
  })

  it('lists only what the caller may see: a member sees only their own user keys', async () => {
    const list = await h.call('GET', '/v1/api-keys', memberKey)
    expect(list.statusCode).toBe(200)
    const items = list.json().data as Array<{ user_id: string; type: string }>
    expect(items.length).toBeGreaterThan(0)
    expect(items.every((k) => k.user_id === memberId && k.type === 'workspace-user')).toBe(true)
    const other = await h.call('GET', `/v1/api-keys?workspace_id=${wsB}`, memberKey)
    expect(other.statusCode).toBe(403)
    const managerKeyId = (await h.store.apiKeys.findByHash(hashApiKey(managerKey, TEST_PEPPER), h.clock.read()))!.key.id
    expect((await h.call('GET', `/v1/api-keys/${managerKeyId}`, memberKey)).statusCode).toBe(404)
  })

  it('pages consistently', async () => {
    const page0 = (await h.call('GET', '/v1/api-keys?current_page=0&page_size=2', h.ownerKey)).json()
    const page1 = (await h.call('GET', '/v1/api-keys?current_page=1&page_size=2', h.ownerKey)).json()
    expect(page0).toMatchObject({ object: 'list' })
    expect(page0.data).toHaveLength(2)
    expect(page1.total).toBe(page0.total)
    expect(page1.data[0].id).not.toBe(page0.data[0].id)
    expect((await h.call('GET', '/v1/api-keys?page_size=0', h.ownerKey)).statusCode).toBe(400)
  })
})

describe('rotation', () => {
  it('keeps old and new keys valid during the transition and refuses the old one after it', async () => {
    const created = await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'rotating', scopes: ['workspaces.list', 'organisation_service_api_keys.rotate'] })
    const { id, key: oldKey } = created.json() as { id: string; key: string }
    const rotated = await h.call('POST', `/v1/api-keys/${id}/rotate`, h.ownerKey, { key_transition_period_ms: 30 * MINUTE })
    expect(rotated.statusCode).toBe(200)
    const { key: newKey, key_transition_expires_at } = rotated.json() as { key: string; key_transition_expires_at: string }
    expect(newKey).not.toBe(oldKey)
    expect(key_transition_expires_at).toBe(new Date(h.clock.now.getTime() + 30 * MINUTE).toISOString())
    expect((await h.call('GET', '/v1/admin/workspaces', oldKey)).statusCode).toBe(200)
    expect((await h.call('GET', '/v1/admin/workspaces', newKey)).statusCode).toBe(200)
    h.clock.advance(30 * MINUTE)
    const refused = await h.call('GET', '/v1/admin/workspaces', oldKey)
    expect(refused.statusCode).toBe(401)
    expect(refused.json().error.code).toBe('AB05')
    expect((await h.call('GET', '/v1/admin/workspaces', newKey)).statusCode).toBe(200)
  })

  it('works without a policy, and refuses a transition shorter than 30 minutes changing nothing', async () => {
    const created = await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'r2', scopes: ['workspaces.list'] })
    const before = (await h.store.apiKeys.get(h.orgId, created.json().id))!
    const short = await h.call('POST', `/v1/api-keys/${before.id}/rotate`, h.ownerKey, { key_transition_period_ms: 30 * MINUTE - 1 })
    expect(short.statusCode).toBe(400)
    expect(short.json().error).toMatchObject({ code: 'AB01', param: 'key_transition_period_ms' })
    expect((await h.store.apiKeys.get(h.orgId, before.id))!.keyHash).toBe(before.keyHash)
    const rotated = await h.call('POST', `/v1/api-keys/${before.id}/rotate`, h.ownerKey)
    expect(rotated.statusCode).toBe(200)
    // Without a policy or request value, the old key has a 24 h transition.
    expect(rotated.json().key_transition_expires_at).toBe(new Date(h.clock.now.getTime() + DAY).toISOString())
  })

  it('validates rotation_policy on create and update: 30-minute minimum, a period or a date; nothing stored', async () => {
    const before = await keyCount()
    const cases = [
      { rotation_period: 'weekly', key_transition_period_ms: 30 * MINUTE - 1 },
      { key_transition_period_ms: HOUR },
      { rotation_period: 'weekly', key_transition_period_ms: 7 * DAY },
      { rotation_period: 'daily', key_transition_period_ms: HOUR },
      { next_rotation_at: '2020-01-01T00:00:00Z', key_transition_period_ms: HOUR },
    ]
    for (const rotation_policy of cases) {
      const response = await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'p', scopes: ['workspaces.list'], rotation_policy })
      expect(response.statusCode, JSON.stringify(rotation_policy)).toBe(400)
      expect(response.json().error.code).toBe('AB01')
      expect(response.json().error.param).toMatch(/^rotation_policy/)
    }
    expect(await keyCount()).toBe(before)
    const ok = await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'p', scopes: ['workspaces.list'], rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 30 * MINUTE } })
    expect(ok.statusCode).toBe(200)
    const update = await h.call('PUT', `/v1/api-keys/${ok.json().id}`, h.ownerKey, { rotation_policy: { rotation_period: 'monthly', key_transition_period_ms: 1000 } })
    expect(update.statusCode).toBe(400)
    expect((await h.store.apiKeys.get(h.orgId, ok.json().id))!.rotationPolicy).toEqual({ rotation_period: 'weekly', key_transition_period_ms: 30 * MINUTE })
  })

  it('rotates on schedule with the policy\'s transition, handing the new key to the notifier only', async () => {
    const created = await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'weekly', scopes: ['workspaces.list'], rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: HOUR } })
    const { id, key: oldKey } = created.json() as { id: string; key: string }
    const view = (await h.call('GET', `/v1/api-keys/${id}`, h.ownerKey)).json()
    expect(view.rotation_policy.next_rotation_at).toBe(new Date(h.clock.now.getTime() + 7 * DAY).toISOString())
    const delivered: RotatedKey[] = []
    const worker = createKeyRotationWorker({ store: h.store, pepper: TEST_PEPPER, clock: h.clock.read, onRotated: (r) => void delivered.push(r) })
    expect(await worker.runOnce()).not.toContain(id)
    h.clock.advance(7 * DAY)
    expect(await worker.runOnce()).toContain(id)
    const mine = delivered.find((r) => r.key.id === id)!
    expect((await h.call('GET', '/v1/admin/workspaces', oldKey)).statusCode).toBe(200)
    expect((await h.call('GET', '/v1/admin/workspaces', mine.rawKey)).statusCode).toBe(200)
    expect((await h.store.apiKeys.get(h.orgId, id))!.nextRotationAt).toBe(new Date(h.clock.now.getTime() + 7 * DAY).toISOString())
    h.clock.advance(HOUR)
    expect((await h.call('GET', '/v1/admin/workspaces', oldKey)).statusCode).toBe(401)
    const audit = await h.store.audit.list(h.orgId, { action: 'api_key.rotate', resourceId: id }, 0, 10)
    expect(audit.data[0]).toMatchObject({ actorType: 'system', actorId: 'key-rotation-worker' })
  })
})

describe('expiry', () => {
  it('refuses a key past expires_at at once and the worker marks it expired', async () => {
    const expiresAt = new Date(h.clock.now.getTime() + HOUR).toISOString()
    const created = await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'short-lived', scopes: ['workspaces.list'], expires_at: expiresAt })
    const { id, key } = created.json() as { id: string; key: string }
    expect((await h.call('GET', '/v1/admin/workspaces', key)).statusCode).toBe(200)
    h.clock.advance(HOUR)
    const refused = await h.call('GET', '/v1/admin/workspaces', key)
    expect(refused.statusCode).toBe(401)
    expect(refused.json().error.message).toContain('expired')
    const result = await createKeyExpiryWorker({ store: h.store, clock: h.clock.read }).runOnce()
    expect(result.expired).toContain(id)
    expect((await h.call('GET', `/v1/api-keys/${id}`, h.ownerKey)).json().status).toBe('expired')
    expect((await h.store.audit.list(h.orgId, { action: 'api_key.expire', resourceId: id }, 0, 1)).total).toBe(1)
  })

  it('refuses an expires_at in the past', async () => {
    const response = await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'x', scopes: ['workspaces.list'], expires_at: '2000-01-01T00:00:00Z' })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.param).toBe('expires_at')
  })
})

describe('user key settings', () => {
  it('applies the per-workspace cap and default/maximum expiry of user keys', async () => {
    const ws = (await h.workspace('Capped')).id
    const user = await h.user('capped@example.com', 'member', { id: ws, role: 'member' })
    const settings = await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { api_key_settings: { user_key_default_expiry_days: 30, user_key_max_expiry_days: 60 } })
    expect(settings.statusCode).toBe(200)
    const capped = await h.call('PUT', `/v1/admin/workspaces/${ws}`, h.ownerKey, { settings: { api_key_settings: { user_keys_per_workspace_max: 1 } } })
    expect(capped.statusCode).toBe(200)
    const body = { name: 'u', workspace_id: ws, user_id: user, scopes: ['completions.write'] }
    const first = await h.call('POST', '/v1/api-keys/workspace/user', h.ownerKey, body)
    expect(first.statusCode).toBe(200)
    expect((await h.store.apiKeys.get(h.orgId, first.json().id))!.expiresAt).toBe(new Date(h.clock.now.getTime() + 30 * DAY).toISOString())
    const second = await h.call('POST', '/v1/api-keys/workspace/user', h.ownerKey, body)
    expect(second.statusCode).toBe(409)
    expect(second.json().error.code).toBe('AB07')
    await h.call('DELETE', `/v1/api-keys/${first.json().id}`, h.ownerKey)
    const tooLong = await h.call('POST', '/v1/api-keys/workspace/user', h.ownerKey, { ...body, expires_at: new Date(h.clock.now.getTime() + 61 * DAY).toISOString() })
    expect(tooLong.statusCode).toBe(400)
    expect(tooLong.json().error.param).toBe('expires_at')
    const never = await h.call('POST', '/v1/api-keys/workspace/user', h.ownerKey, { ...body, expires_at: null })
    expect(never.statusCode).toBe(400)
    await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { api_key_settings: { user_key_default_expiry_days: null, user_key_max_expiry_days: null } })
  })
})

describe('limits on keys', () => {
  it('validates usage_limits and rate_limits strictly, storing nothing on error', async () => {
    const before = await keyCount()
    const bad = [
      { usage_limits: { credit_limit: 10, periodic_reset: 'monthly', periodic_reset_days: 30 } },
      { usage_limits: { credit_limit: 10, periodic_reset_days: 0 } },
      { usage_limits: { credit_limit: 10, periodic_reset_days: 366 } },
      { rate_limits: [{ type: 'requests', unit: 'rpm', value: 10, extra: 1 }] },
      { rate_limits: [{ type: 'requests', unit: 'rpy', value: 10 }] },
      { rate_limits: [{ type: 'requests', unit: 'rpm', value: -1 }] },
    ]
    for (const extra of bad) {
      const response = await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'l', scopes: ['workspaces.list'], ...extra })
      expect(response.statusCode, JSON.stringify(extra)).toBe(400)
    }
    expect(await keyCount()).toBe(before)
    const ok = await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, {
      name: 'l', scopes: ['workspaces.list'], usage_limits: { credit_limit: 10, periodic_reset_days: 365 }, rate_limits: [{ type: 'tokens', unit: 'rpw', value: 1000 }],
    })
    expect(ok.statusCode).toBe(200)
    const reset = await h.call('PUT', `/v1/api-keys/${ok.json().id}`, h.ownerKey, { reset_usage: true })
    expect(reset.statusCode).toBe(200)
    const view = (await h.call('GET', `/v1/api-keys/${ok.json().id}`, h.ownerKey)).json()
    expect(view.last_reset_at).toBe(h.clock.now.toISOString())
    expect(view.usage_limits).toMatchObject({ credit_limit: 10, periodic_reset_days: 365 })
  })

  it('rejects a name over 255 characters and accepts 255', async () => {
    expect((await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'n'.repeat(256), scopes: ['workspaces.list'] })).statusCode).toBe(400)
    expect((await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'n'.repeat(255), scopes: ['workspaces.list'] })).statusCode).toBe(200)
  })
})

describe('revocation', () => {
  it('DELETE revokes at once: the key stops authenticating and disappears from reads', async () => {
    const created = await h.call('POST', '/v1/api-keys/organisation/service', h.ownerKey, { name: 'doomed', scopes: ['workspaces.list'] })
    const { id, key } = created.json() as { id: string; key: string }
    expect((await h.call('DELETE', `/v1/api-keys/${id}`, h.ownerKey)).statusCode).toBe(200)
    const refused = await h.call('GET', '/v1/admin/workspaces', key)
    expect(refused.statusCode).toBe(401)
    expect(refused.json().error.message).toContain('revoked')
    expect((await h.call('GET', `/v1/api-keys/${id}`, h.ownerKey)).statusCode).toBe(404)
    expect((await h.call('DELETE', `/v1/api-keys/${id}`, h.ownerKey)).statusCode).toBe(404)
  })

  it('revokes a leaked key by its secret, whoever reports it, without telling whether it was live', async () => {
    const leaked = await h.key('workspace/service', { name: 'leaked', workspace_id: wsA, scopes: ['completions.write', 'workspaces.read'] })
    const report = await h.call('POST', '/v1/api-keys/revoke', memberKey, { key: leaked })
    expect(report.json()).toEqual({ revoked: true, object: 'api-key-revocation' })
    expect((await h.call('GET', `/v1/admin/workspaces/${wsA}`, leaked)).statusCode).toBe(401)
    expect((await h.call('POST', '/v1/api-keys/revoke', memberKey, { key: leaked })).json().revoked).toBe(false)
    expect((await h.call('POST', '/v1/api-keys/revoke', memberKey, { key: 'not-a-key' })).statusCode).toBe(400)
    const audit = await h.store.audit.list(h.orgId, { action: 'api_key.revoke_by_secret' }, 0, 10)
    expect(JSON.stringify(audit.data)).not.toContain(leaked)
  })

  it('refuses malformed keys before any lookup and unknown ones after', async () => {
    const malformed = await h.call('GET', '/v1/admin/workspaces', "ghk_adm_' OR 1=1 --")
    expect(malformed.statusCode).toBe(401)
    expect(malformed.json().error.message).toContain('malformed')
    const flipped = h.ownerKey.slice(0, -1) + (h.ownerKey.endsWith('A') ? 'B' : 'A')
    expect((await h.call('GET', '/v1/admin/workspaces', flipped)).json().error.message).toContain('malformed')
    expect((await h.call('GET', '/v1/admin/workspaces', null)).statusCode).toBe(401)
    const twice = await h.app.inject({ method: 'GET', url: '/v1/admin/workspaces', headers: { 'x-gateway-api-key': [h.ownerKey, h.ownerKey] } })
    expect(twice.statusCode).toBe(401)
    expect((await h.call('GET', '/v1/admin/workspaces', null, undefined, { authorization: `Bearer ${h.ownerKey}` })).statusCode).toBe(200)
  })
})
