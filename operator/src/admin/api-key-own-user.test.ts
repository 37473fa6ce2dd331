/**
 * POST /v1/api-keys/workspace/user by a workspace key without user_id creates the key for the
 * calling key's user (the spec's capability table); user_id stays the on-behalf-of case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './testing.ts'

let h: Harness
let ws: string
let managerId: string
let memberId: string
let managerKey: string

beforeAll(async () => {
  h = await createHarness()
  ws = (await h.workspace('Own keys')).id
  managerId = await h.user('own-manager@example.com', 'member', { id: ws, role: 'manager' })
  memberId = await h.user('own-member@example.com', 'member', { id: ws, role: 'member' })
  managerKey = await h.key('workspace/user', { name: 'manager', workspace_id: ws, user_id: managerId, scopes: ['workspace_user_api_keys.create', 'workspace_service_api_keys.create', 'completions.write'] })
})
afterAll(() => h.close())

const body = { name: 'mine', scopes: ['completions.write'] }

describe('workspace user keys without user_id', () => {
  it('belong to the calling user key\'s user', async () => {
    const created = await h.call('POST', '/v1/api-keys/workspace/user', managerKey, { ...body, workspace_id: ws })
    expect(created.statusCode, created.body).toBe(200)
    expect((await h.store.apiKeys.get(h.orgId, created.json().id))!.userId).toBe(managerId)
  })

  it('belong to the user behind a calling service key (its creator)', async () => {
    const service = await h.key('workspace/service', { name: 'svc', workspace_id: ws, scopes: ['workspace_user_api_keys.create', 'completions.write'] }, managerKey)
    const created = await h.call('POST', '/v1/api-keys/workspace/user', service, body)
    expect(created.statusCode, created.body).toBe(200)
    expect(created.json()).toMatchObject({ object: 'api-key' })
    expect((await h.store.apiKeys.get(h.orgId, created.json().id))!.userId).toBe(managerId)
  })

  it('still honour user_id as the on-behalf-of case', async () => {
    const created = await h.call('POST', '/v1/api-keys/workspace/user', managerKey, { ...body, user_id: memberId })
    expect((await h.store.apiKeys.get(h.orgId, created.json().id))!.userId).toBe(memberId)
  })

  it('are refused, naming user_id, when the calling key belongs to no user', async () => {
    const orphan = await h.key('workspace/service', { name: 'orphan', workspace_id: ws, scopes: ['workspace_user_api_keys.create', 'completions.write'] })
    // Its creator is gone: no user anywhere behind it.
    await h.db.query("UPDATE api_keys SET created_by = 'deleted-creator' WHERE name = 'orphan'")
    const before = (await h.store.apiKeys.list(h.orgId, {}, 0, 100)).total
    const refused = await h.call('POST', '/v1/api-keys/workspace/user', orphan, body)
    expect(refused.statusCode).toBe(400)
    expect(refused.json().error).toMatchObject({ code: 'AB01', param: 'user_id' })
    expect((await h.store.apiKeys.list(h.orgId, {}, 0, 100)).total).toBe(before)
  })
})
