/**
 * The spec's key-capability table, row by row, for an admin key and a workspace key (both holding
 * every scope their type may hold), over HTTP where the admin API serves the row and through
 * `can` for rows whose routes live in other modules (configs, providers, analytics, feedback).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authenticateApiKey, type AuthenticatorDeps } from '../identity/authenticate.ts'
import { can } from '../identity/capabilities.ts'
import type { Principal } from '../identity/principal.ts'
import { ALL_SCOPES, WORKSPACE_SCOPES } from '../identity/scopes.ts'
import { createHarness, TEST_PEPPER, type Harness } from './testing.ts'

let h: Harness
let adminKey: string
let workspaceKey: string
let wsA: string
let wsB: string
let admin: Principal
let workspace: Principal
let manager: Principal
let member: Principal
let orgAdminKey: string
let managerRaw: string
let memberRaw: string

beforeAll(async () => {
  h = await createHarness()
  wsA = (await h.workspace('Cap A')).id
  wsB = (await h.workspace('Cap B')).id
  adminKey = await h.key('organisation/service', { name: 'all admin', scopes: [...ALL_SCOPES] })
  workspaceKey = await h.key('workspace/service', { name: 'all ws', workspace_id: wsA, scopes: [...WORKSPACE_SCOPES] })
  const managerId = await h.user('cap-manager@example.com', 'member', { id: wsA, role: 'manager' })
  const memberId = await h.user('cap-member@example.com', 'member', { id: wsA, role: 'member' })
  const managerKey = await h.key('workspace/user', { name: 'mgr', workspace_id: wsA, user_id: managerId, scopes: [...WORKSPACE_SCOPES] })
  const memberKey = await h.key('workspace/user', { name: 'mbr', workspace_id: wsA, user_id: memberId, scopes: [...WORKSPACE_SCOPES] })
  const deps: AuthenticatorDeps = { store: h.store, pepper: TEST_PEPPER, clock: h.clock.read, jwt: null, organizationId: async () => h.orgId }
  const orgAdminId = await h.user('cap-admin@example.com', 'admin')
  orgAdminKey = await h.key('organisation/user', { name: 'org admin', user_id: orgAdminId, scopes: [...ALL_SCOPES] })
  managerRaw = managerKey
  memberRaw = memberKey
  admin = await authenticateApiKey(deps, adminKey)
  workspace = await authenticateApiKey(deps, workspaceKey)
  manager = await authenticateApiKey(deps, managerKey)
  member = await authenticateApiKey(deps, memberKey)
})
afterAll(() => h.close())

describe('key capabilities over HTTP', () => {
  it('manage organisation settings: admin key yes, workspace key no', async () => {
    expect((await h.call('GET', '/v1/organisation/settings', adminKey)).statusCode).toBe(200)
    expect((await h.call('PUT', '/v1/organisation/settings', adminKey, { session_settings: { max_session_ttl: 3600 } })).statusCode).toBe(200)
    expect((await h.call('GET', '/v1/organisation/settings', workspaceKey)).statusCode).toBe(403)
    const refused = await h.call('PUT', '/v1/organisation/settings', workspaceKey, { session_settings: { max_session_ttl: 7200 } })
    expect(refused.statusCode).toBe(403)
    expect(refused.json().error.code).toBe('AB03')
    expect((await h.store.organizations.get(h.orgId))!.settings).toMatchObject({ session_settings: { max_session_ttl: 3600 } })
  })

  it('create or manage workspaces: admin key yes, workspace key no', async () => {
    const created = await h.call('POST', '/v1/admin/workspaces', adminKey, { name: 'By admin' })
    expect(created.statusCode).toBe(200)
    const id = created.json().id as string
    expect((await h.call('PUT', `/v1/admin/workspaces/${id}`, adminKey, { name: 'By admin 2' })).statusCode).toBe(200)
    expect((await h.call('POST', '/v1/admin/workspaces', workspaceKey, { name: 'By ws key' })).statusCode).toBe(403)
    expect((await h.call('PUT', `/v1/admin/workspaces/${wsA}`, workspaceKey, { name: 'renamed' })).statusCode).toBe(403)
    expect((await h.call('DELETE', `/v1/admin/workspaces/${wsA}`, workspaceKey)).statusCode).toBe(403)
    expect((await h.call('DELETE', `/v1/admin/workspaces/${id}`, adminKey)).statusCode).toBe(200)
    // Reading its own workspace is not managing it.
    expect((await h.call('GET', `/v1/admin/workspaces/${wsA}`, workspaceKey)).statusCode).toBe(200)
    expect((await h.call('GET', `/v1/admin/workspaces/${wsB}`, workspaceKey)).statusCode).toBe(404)
  })

  it('manage users and permissions: admin key yes, workspace key no', async () => {
    const created = await h.call('POST', '/v1/admin/users', adminKey, { email: 'by-admin@example.com', role: 'member' })
    expect(created.statusCode).toBe(200)
    expect((await h.call('GET', '/v1/admin/users', adminKey)).statusCode).toBe(200)
    expect((await h.call('POST', `/v1/admin/workspaces/${wsA}/users`, adminKey, { users: [{ id: created.json().id, role: 'member' }] })).statusCode).toBe(200)
    expect((await h.call('GET', '/v1/admin/users', workspaceKey)).statusCode).toBe(403)
    expect((await h.call('POST', '/v1/admin/users', workspaceKey, { email: 'by-ws@example.com', role: 'member' })).statusCode).toBe(403)
    expect((await h.call('POST', `/v1/admin/workspaces/${wsA}/users`, workspaceKey, { users: [{ id: created.json().id, role: 'admin' }] })).statusCode).toBe(403)
    expect((await h.call('DELETE', `/v1/admin/users/${created.json().id}`, workspaceKey)).statusCode).toBe(403)
  })

  it('audit logs: admin key yes, workspace key no', async () => {
    expect((await h.call('GET', '/v1/audit-logs', adminKey)).statusCode).toBe(200)
    expect((await h.call('GET', '/v1/audit-logs', workspaceKey)).statusCode).toBe(403)
  })
})

describe('key capabilities through can()', () => {
  for (const capability of ['configs', 'providers'] as const) {
    it(`create or manage ${capability}: admin key in all workspaces, workspace key in its own only`, () => {
      for (const action of ['create', 'read', 'update', 'delete', 'list'] as const) {
        expect(can(admin, capability, action, wsA)).toBe(true)
        expect(can(admin, capability, action, wsB)).toBe(true)
        expect(can(workspace, capability, action, wsA)).toBe(true)
        expect(can(workspace, capability, action)).toBe(true)
        expect(can(workspace, capability, action, wsB)).toBe(false)
      }
    })
  }

  it('access analytics: admin key in all workspaces, workspace key in its own only', () => {
    expect(can(admin, 'analytics', 'view', wsA)).toBe(true)
    expect(can(admin, 'analytics', 'view', wsB)).toBe(true)
    expect(can(workspace, 'analytics', 'view', wsA)).toBe(true)
    expect(can(workspace, 'analytics', 'view', wsB)).toBe(false)
  })

  it('create or update feedback: admin key no (even with logs.write), workspace key yes', () => {
    expect(admin.has('logs.write', wsA)).toBe(true)
    expect(can(admin, 'feedback', 'create', wsA)).toBe(false)
    expect(can(admin, 'feedback', 'update', wsA)).toBe(false)
    expect(can(workspace, 'feedback', 'create')).toBe(true)
    expect(can(workspace, 'feedback', 'update', wsA)).toBe(true)
  })

  it('organisation-wide rows are refused to every workspace credential', () => {
    for (const principal of [workspace, manager, member]) {
      for (const capability of ['organisation_settings', 'workspaces', 'users', 'audit_logs'] as const) {
        expect(can(principal, capability, 'update')).toBe(false)
        expect(can(principal, capability, 'list')).toBe(false)
      }
    }
  })
})

describe('roles against the organisation rows over HTTP', () => {
  it('owner and organisation admin: yes; workspace manager and member: no', async () => {
    const rows = (suffix: string): Array<[string, string, unknown]> => [
      ['PUT', '/v1/organisation/settings', { session_settings: { max_session_ttl: 1800 } }],
      ['POST', '/v1/admin/workspaces', { name: `Role ws ${suffix}` }],
      ['POST', '/v1/admin/users', { email: `role-${suffix}@example.com`, role: 'member' }],
      ['GET', '/v1/audit-logs', undefined],
    ]
    for (const [who, key, allowed] of [['owner', h.ownerKey, true], ['admin', orgAdminKey, true], ['manager', managerRaw, false], ['member', memberRaw, false]] as const) {
      for (const [method, url, body] of rows(who)) {
        const response = await h.call(method as 'GET' | 'POST' | 'PUT', url, key, body)
        expect(response.statusCode, `${who} ${method} ${url}`).toBe(allowed ? 200 : 403)
      }
    }
  })
})

describe('roles: the scope column of the roles table', () => {
  it('a workspace manager manages its workspace; a member has limited access; neither reaches other workspaces', () => {
    expect(manager.authority(wsA)).toBe('manager')
    expect(can(manager, 'configs', 'create', wsA)).toBe(true)
    expect(can(manager, 'configs', 'create', wsB)).toBe(false)
    expect(member.authority(wsA)).toBe('member')
    // The member's key carries every workspace scope; the role still limits it.
    expect(can(member, 'configs', 'read', wsA)).toBe(true)
    expect(can(member, 'configs', 'create', wsA)).toBe(false)
    expect(can(member, 'providers', 'delete', wsA)).toBe(false)
    expect(can(member, 'feedback', 'create', wsA)).toBe(true)
  })

  it('demoting a user shrinks their keys at once', async () => {
    const userId = await h.user('demoted@example.com', 'admin')
    const raw = await h.key('organisation/user', { name: 'soon weaker', user_id: userId, scopes: ['workspaces.list'] })
    expect((await h.call('GET', '/v1/admin/workspaces', raw)).statusCode).toBe(200)
    await h.call('PUT', `/v1/admin/users/${userId}`, h.ownerKey, { role: 'member' })
    expect((await h.call('GET', '/v1/admin/workspaces', raw)).statusCode).toBe(403)
  })
})
