/** Workspaces, members, users and organisation settings over HTTP, with the spec's bounds. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './testing.ts'

let h: Harness

async function workspaceCount(): Promise<number> {
  return (await h.store.workspaces.list(h.orgId, {}, 0, 100)).total
}

beforeAll(async () => {
  h = await createHarness()
})
afterAll(() => h.close())

describe('workspaces', () => {
  it('creates, reads (by id or slug), updates, archives and deletes', async () => {
    const created = await h.call('POST', '/v1/admin/workspaces', h.ownerKey, {
      name: 'Research', description: 'R&D', defaults: { metadata: { team: 'r' } },
      usage_limits: [{ credit_limit: 100, type: 'cost', periodic_reset: 'monthly' }], rate_limits: [{ type: 'requests', unit: 'rpm', value: 60 }],
    })
    expect(created.statusCode).toBe(200)
    const ws = created.json()
    expect(ws).toMatchObject({ object: 'workspace', slug: 'ws-research', status: 'active', next_usage_reset_at: '2030-02-01T00:00:00.000Z' })
    expect((await h.call('GET', `/v1/admin/workspaces/${ws.id}`, h.ownerKey)).json().name).toBe('Research')
    expect((await h.call('GET', '/v1/workspaces/ws-research', h.ownerKey)).json().id).toBe(ws.id)
    expect((await h.call('PUT', `/v1/admin/workspaces/${ws.id}`, h.ownerKey, { name: 'Research 2' })).json()).toEqual({})
    expect((await h.call('PUT', `/v1/workspaces/${ws.id}`, h.ownerKey, { status: 'archived' })).statusCode).toBe(200)
    expect((await h.call('GET', '/v1/admin/workspaces', h.ownerKey)).json().data.map((w: { id: string }) => w.id)).not.toContain(ws.id)
    expect((await h.call('DELETE', `/v1/admin/workspaces/${ws.id}`, h.ownerKey)).statusCode).toBe(200)
    expect((await h.call('GET', `/v1/admin/workspaces/${ws.id}`, h.ownerKey)).json().status).toBe('archived')
  })

  it('archives on DELETE: kept, listed with ?status=archived only, and refused new keys', async () => {
    const ws = await h.workspace('Archive me')
    expect((await h.call('DELETE', `/v1/workspaces/${ws.id}`, h.ownerKey)).statusCode).toBe(200)
    const ids = async (query: string) => (await h.call('GET', `/v1/admin/workspaces?${query}`, h.ownerKey)).json().data.map((w: { id: string }) => w.id)
    expect(await ids('status=archived')).toContain(ws.id)
    expect(await ids('')).not.toContain(ws.id)
    expect((await h.store.workspaces.get(h.orgId, ws.id))!.status).toBe('archived')
    const key = await h.call('POST', '/v1/api-keys/workspace/service', h.ownerKey, { name: 'late', workspace_id: ws.id, scopes: ['completions.write'] })
    expect(key.statusCode).toBe(409)
  })

  it('filters by status (archived only for owners and admins) and by name (substring and strict)', async () => {
    const a = (await h.workspace('Filter Alpha')).id
    const b = (await h.workspace('Filter Beta')).id
    await h.call('PUT', `/v1/admin/workspaces/${b}`, h.ownerKey, { status: 'archived' })
    const ids = async (query: string, key = h.ownerKey) => (await h.call('GET', `/v1/admin/workspaces?${query}`, key)).json().data.map((w: { id: string }) => w.id)
    expect(await ids('status=archived&name=Filter')).toEqual([b])
    expect(await ids('status=active,archived&name=Filter')).toEqual([a, b])
    expect(await ids('name=filter')).toEqual([])
    expect(await ids('exact_name=Filter')).toEqual([])
    expect(await ids('exact_name=Filter%20Alpha')).toEqual([a])
    expect((await h.call('GET', '/v1/admin/workspaces?status=deleted', h.ownerKey)).json().error).toMatchObject({ code: 'AB01', param: 'status' })
    const memberId = await h.user('filter-member@example.com', 'member', { id: a, role: 'member' })
    const memberKey = await h.key('workspace/user', { name: 'm', workspace_id: a, user_id: memberId, scopes: ['workspaces.list', 'workspaces.read'] })
    expect((await h.call('GET', '/v1/admin/workspaces?status=active,archived', memberKey)).statusCode).toBe(403)
    expect(await ids('', memberKey)).toEqual([a])
    expect((await h.call('GET', `/v1/admin/workspaces/${b}`, memberKey)).statusCode).toBe(404)
  })

  it('answers every bound with 400 AB01 naming the field and stores nothing', async () => {
    const before = await workspaceCount()
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ name: 'n'.repeat(256) }, 'name'],
      [{ name: 'ok', slug: 's'.repeat(256) }, 'slug'],
      [{ name: 'ok', usage_limits: [{ credit_limit: 1, periodic_reset_days: 0 }] }, 'usage_limits[0].periodic_reset_days'],
      [{ name: 'ok', usage_limits: [{ credit_limit: 1, periodic_reset_days: 366 }] }, 'usage_limits[0].periodic_reset_days'],
      [{ name: 'ok', usage_limits: [{ credit_limit: 1, periodic_reset_days: 1.5 }] }, 'usage_limits[0].periodic_reset_days'],
      [{ name: 'ok', usage_limits: [{ credit_limit: 1, periodic_reset: 'weekly', periodic_reset_days: 7 }] }, 'usage_limits[0].periodic_reset_days'],
      [{ name: 'ok', usage_limits: [{ credit_limit: 1, periodic_reset: 'daily' }] }, 'usage_limits[0].periodic_reset'],
      [{ name: 'ok', rate_limits: [{ type: 'requests', unit: 'rps', value: 1 }] }, 'rate_limits[0].unit'],
      [{ name: 'ok', rate_limits: [{ type: 'requests', unit: 'rpm', value: 1.5 }] }, 'rate_limits[0].value'],
      [{ name: 'ok', rate_limits: [{ type: 'requests', unit: 'rpm' }] }, 'rate_limits[0].value'],
      [{ name: 'ok', rate_limits: [{ type: 'requests', unit: 'rpm', value: 1, burst: 2 }] }, 'rate_limits[0]'],
      [{ name: 'ok', colour: 'red' }, '(body)'],
      [{ name: '' }, 'name'],
    ]
    for (const [body, param] of bad) {
      const response = await h.call('POST', '/v1/admin/workspaces', h.ownerKey, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json().error.code).toBe('AB01')
      expect(response.json().error.param, JSON.stringify(body)).toBe(param)
    }
    expect(await workspaceCount()).toBe(before)
  })

  it('accepts the edges of every bound (255 characters, 1 and 365 days, rpw)', async () => {
    const edge = await h.call('POST', '/v1/admin/workspaces', h.ownerKey, {
      name: 'n'.repeat(255), slug: 's'.repeat(255),
      usage_limits: [{ credit_limit: 1, periodic_reset_days: 1 }, { credit_limit: 2, type: 'tokens', periodic_reset_days: 365 }],
      rate_limits: [{ type: 'tokens', unit: 'rpw', value: 0 }],
    })
    expect(edge.statusCode).toBe(200)
    expect(edge.json().next_usage_reset_at).toBe('2030-01-02T00:00:00.000Z')
    const update = await h.call('PUT', `/v1/admin/workspaces/${edge.json().id}`, h.ownerKey, { name: 'm'.repeat(256) })
    expect(update.statusCode).toBe(400)
    expect((await h.store.workspaces.get(h.orgId, edge.json().id))!.name).toBe('n'.repeat(255))
  })

  it('refuses a duplicate slug with 409 AB07', async () => {
    await h.call('POST', '/v1/admin/workspaces', h.ownerKey, { name: 'Dup', slug: 'dup' })
    const dup = await h.call('POST', '/v1/admin/workspaces', h.ownerKey, { name: 'Dup 2', slug: 'dup' })
    expect(dup.statusCode).toBe(409)
    expect(dup.json().error.code).toBe('AB07')
  })

  it('refuses to edit a workspace managed by Kubernetes', async () => {
    const managed = await h.store.workspaces.create({ organizationId: h.orgId, slug: 'k8s', name: 'K8s', managedBy: 'kubernetes' })
    const response = await h.call('PUT', `/v1/admin/workspaces/${managed.id}`, h.ownerKey, { name: 'changed' })
    expect(response.statusCode).toBe(403)
    expect(response.json().error.message).toContain('kubernetes')
  })
})

describe('members and users (field-level checks)', () => {
  it('adds, lists, changes and removes members; nobody changes their own role', async () => {
    const ws = (await h.workspace('Team')).id
    const adminId = await h.user('team-admin@example.com', 'admin')
    const userId = await h.user('team-user@example.com', 'member')
    expect((await h.call('POST', `/v1/admin/workspaces/${ws}/users`, h.ownerKey, { users: [{ id: userId, role: 'member' }] })).statusCode).toBe(200)
    const list = (await h.call('GET', `/v1/admin/workspaces/${ws}/users`, h.ownerKey)).json()
    expect(list.data).toEqual([expect.objectContaining({ object: 'workspace-user', id: userId, role: 'member', org_role: 'member' })])
    expect((await h.call('PUT', `/v1/admin/workspaces/${ws}/users/${userId}`, h.ownerKey, { role: 'manager' })).statusCode).toBe(200)
    expect((await h.call('GET', `/v1/admin/workspaces/${ws}/users/${userId}`, h.ownerKey)).json().role).toBe('manager')
    const adminKey = await h.key('organisation/user', { name: 'a', user_id: adminId, scopes: ['organisation_users.update', 'organisation_users.delete', 'organisation_users.read'] })
    expect((await h.call('PUT', `/v1/admin/users/${adminId}`, adminKey, { role: 'member' })).statusCode).toBe(403)
    expect((await h.call('PUT', `/v1/admin/users/${h.ownerId}`, adminKey, { role: 'member' })).statusCode).toBe(403)
    expect((await h.call('PUT', `/v1/admin/users/${h.ownerId}`, adminKey, { role: 'owner' })).statusCode).toBe(400)
    expect((await h.call('POST', `/v1/admin/workspaces/${ws}/users`, adminKey, { users: [{ id: adminId, role: 'admin' }] })).statusCode).toBe(403)
    expect((await h.call('DELETE', `/v1/admin/users/${adminId}`, adminKey)).statusCode).toBe(403)
    expect((await h.call('PUT', `/v1/admin/users/${userId}`, adminKey, { role: 'admin' })).statusCode).toBe(200)
    expect((await h.call('DELETE', `/v1/admin/workspaces/${ws}/users/${userId}`, h.ownerKey)).statusCode).toBe(200)
    expect((await h.call('GET', `/v1/admin/workspaces/${ws}/users/${userId}`, h.ownerKey)).statusCode).toBe(404)
  })

  it('creates and cancels invites', async () => {
    const ws = (await h.workspace('Invited')).id
    const invite = await h.call('POST', '/v1/admin/users/invites', h.ownerKey, { email: 'new@example.com', role: 'member', workspaces: [{ id: ws, role: 'manager' }] })
    expect(invite.statusCode).toBe(200)
    expect(invite.json()).toMatchObject({ object: 'invite', status: 'pending' })
    expect((await h.call('GET', '/v1/admin/users/invites?status=pending', h.ownerKey)).json().total).toBe(1)
    expect((await h.call('DELETE', `/v1/admin/users/invites/${invite.json().id}`, h.ownerKey)).statusCode).toBe(200)
    expect((await h.call('GET', `/v1/admin/users/invites/${invite.json().id}`, h.ownerKey)).json().status).toBe('cancelled')
  })
})

describe('organisation settings', () => {
  it('refuses max_session_ttl under 900 seconds with 400 and stores nothing; accepts 900', async () => {
    const before = (await h.store.organizations.get(h.orgId))!.settings
    const low = await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { session_settings: { max_session_ttl: 899 } })
    expect(low.statusCode).toBe(400)
    expect(low.json().error).toMatchObject({ code: 'AB01', param: 'session_settings.max_session_ttl' })
    expect((await h.store.organizations.get(h.orgId))!.settings).toEqual(before)
    const ok = await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { session_settings: { max_session_ttl: 900 } })
    expect(ok.statusCode).toBe(200)
    expect(ok.json().session_settings.max_session_ttl).toBe(900)
  })

  it('merges security settings with workspace overrides', async () => {
    const put = await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { security_settings: { membersViewAnalytics: false } })
    expect(put.json().security_settings.membersViewAnalytics).toBe(false)
    expect(put.json().security_settings.membersWritePrompts).toBe(false)
    const bad = await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { security_settings: { membersViewAnalytics: 'everyone' } })
    expect(bad.statusCode).toBe(400)
    const ws = await h.call('POST', '/v1/admin/workspaces', h.ownerKey, { name: 'Open', settings: { security_settings: { membersViewAnalytics: true } } })
    expect(ws.json().settings.security_settings.membersViewAnalytics).toBe(true)
  })
})
