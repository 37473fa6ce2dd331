/**
 * SCIM 2.0 through the admin app, with requests written as Okta and Entra ID send them (headers,
 * bodies, PATCH forms): provisioning, lookups by filter, paging, group membership mapped to
 * workspace roles, deactivation (keys refused, snapshot marks them), reactivation with
 * memberships intact, deletion, discovery and errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compileSnapshot } from '../compile/snapshot.ts'
import { createHarness, type Harness } from '../admin/testing.ts'

let h: Harness
let scimToken: string
let base: string
let workspaceId: string

const OKTA_HEADERS = {
  accept: 'application/scim+json',
  'content-type': 'application/scim+json; charset=utf-8',
  'user-agent': 'Okta SCIM Client 1.0.0',
}
const ENTRA_HEADERS = {
  accept: 'application/scim+json',
  'content-type': 'application/scim+json',
  'user-agent': 'Azure Active Directory SCIM Client',
}
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'
const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User'
const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

async function scim(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, headers: Record<string, string> = OKTA_HEADERS, token = scimToken): Promise<{ status: number; body: Json; type: string | undefined }> {
  const response = await h.app.inject({
    method,
    url: `${base}${path}`,
    headers: { ...headers, authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  })
  return { status: response.statusCode, body: response.body ? (response.json() as Json) : {}, type: response.headers['content-type'] as string | undefined }
}

async function membership(userId: string): Promise<string | null> {
  return (await h.store.members.get(workspaceId, userId))?.role ?? null
}

async function chatKeyStatus(key: string): Promise<number> {
  return (await h.call('GET', '/v1/api-keys', key)).statusCode
}

beforeAll(async () => {
  h = await createHarness()
  const created = await h.call('POST', '/v1/admin/scim/tokens', h.ownerKey, { name: 'okta' })
  expect(created.statusCode).toBe(200)
  scimToken = created.json<{ token: string }>().token
  expect(scimToken).toMatch(/^ghscim_/)
  base = created.json<{ scim_base_path: string }>().scim_base_path
  expect(base).toBe(`/v1/scim/${h.orgId}`)
  workspaceId = (await h.workspace('Engineering')).id
})

afterAll(async () => {
  await h?.close()
})

describe('SCIM tokens', () => {
  it('stores only a hash, never lists the token, and refuses a revoked or foreign token', async () => {
    const rows = await h.db.query<{ token_hash: string }>('SELECT token_hash FROM scim_tokens')
    expect(rows.every((row) => /^[0-9a-f]{64}$/.test(row.token_hash) && row.token_hash !== scimToken)).toBe(true)
    const listed = await h.call('GET', '/v1/admin/scim/tokens', h.ownerKey)
    expect(listed.body).not.toContain(scimToken)
    expect((await scim('GET', '/Users', undefined, OKTA_HEADERS, 'ghscim_not-a-token')).status).toBe(401)
    // Admin API keys do not open SCIM.
    expect((await scim('GET', '/Users', undefined, OKTA_HEADERS, h.ownerKey)).status).toBe(401)
    // The right token on another organisation's path is refused the same way.
    const foreign = await h.app.inject({ method: 'GET', url: '/v1/scim/other-org/Users', headers: { authorization: `Bearer ${scimToken}` } })
    expect(foreign.statusCode).toBe(401)
    expect(foreign.json()).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '401' })
    const extra = await h.call('POST', '/v1/admin/scim/tokens', h.ownerKey, { name: 'revoked' })
    const { id, token } = extra.json<{ id: string; token: string }>()
    expect((await scim('GET', '/Users', undefined, OKTA_HEADERS, token)).status).toBe(200)
    expect((await h.call('DELETE', `/v1/admin/scim/tokens/${id}`, h.ownerKey)).statusCode).toBe(200)
    expect((await scim('GET', '/Users', undefined, OKTA_HEADERS, token)).status).toBe(401)
  })

  it('is minted by organisation admins only', async () => {
    const memberId = await h.user('plain-member@example.com', 'member', { id: workspaceId, role: 'admin' })
    const memberKey = await h.key('workspace/user', { name: 'm', workspace_id: workspaceId, user_id: memberId, scopes: ['completions.write'] })
    expect((await h.call('POST', '/v1/admin/scim/tokens', memberKey, { name: 'nope' })).statusCode).toBe(403)
  })
})

describe('Okta', () => {
  let annId: string
  let groupId: string
  let annKey: string

  it('checks the connection, looks the user up, then creates them with the default role', async () => {
    const probe = await scim('GET', '/Users?startIndex=1&count=2')
    expect(probe.status).toBe(200)
    expect(probe.type).toContain('application/scim+json')
    expect(probe.body.schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:ListResponse'])
    const lookup = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "ann@example.com"')}&startIndex=1&count=100`)
    expect(lookup.body).toMatchObject({ totalResults: 0, Resources: [] })
    const created = await scim('POST', '/Users', {
      schemas: [USER_SCHEMA],
      userName: 'ann@example.com',
      name: { givenName: 'Ann', familyName: 'Lee' },
      emails: [{ primary: true, value: 'ann@example.com', type: 'work' }],
      displayName: 'Ann Lee',
      locale: 'en-US',
      externalId: '00u1abcdOKTA',
      groups: [],
      password: 'not-kept-1!',
      active: true,
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ userName: 'ann@example.com', active: true, externalId: '00u1abcdOKTA', name: { givenName: 'Ann', familyName: 'Lee' } })
    annId = created.body.id
    const user = (await h.store.users.get(h.orgId, annId))!
    expect(user.role).toBe('member')
    expect(JSON.stringify(created.body)).not.toContain('not-kept-1!')
    const again = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "ANN@example.com"')}`)
    expect(again.body.totalResults).toBe(1)
    expect(again.body.Resources[0].id).toBe(annId)
    const duplicate = await scim('POST', '/Users', { schemas: [USER_SCHEMA], userName: 'ann@example.com', emails: [{ value: 'ann@example.com', primary: true }] })
    expect(duplicate.status).toBe(409)
    expect(duplicate.body).toMatchObject({ status: '409', scimType: 'uniqueness' })
  })

  it('maps a pushed group onto a workspace role, and membership follows the group', async () => {
    const group = await scim('POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Platform', members: [] })
    expect(group.status).toBe(201)
    groupId = group.body.id
    const mapped = await h.call('POST', '/v1/scim/workspaces', h.ownerKey, { workspace_id: workspaceId, role: 'manager', scim_group_id: groupId })
    expect(mapped.statusCode).toBe(200)
    expect(mapped.json()).toMatchObject({ workspace_id: workspaceId, scim_group_id: groupId, scim_group: 'Platform', role: 'manager' })
    expect(await membership(annId)).toBeNull()
    const add = await scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: annId, display: 'ann@example.com' }] }] })
    expect(add.status).toBe(204)
    expect(await membership(annId)).toBe('manager')
    const listed = await h.call('GET', `/v1/scim/workspaces?workspace_id=${workspaceId}`, h.ownerKey)
    expect(listed.json()).toMatchObject({ total_count: 1, mappings: [{ scim_group_id: groupId, role: 'manager' }] })
    const groups = await h.call('GET', '/v1/scim/groups', h.ownerKey)
    expect(groups.json()).toMatchObject({ total: 1, data: [{ id: groupId, display_name: 'Platform', member_ids: [annId], workspaces: [{ workspace_id: workspaceId, role: 'manager' }] }] })
    const user = await scim('GET', `/Users/${annId}`)
    expect(user.body.groups).toEqual([expect.objectContaining({ value: groupId, display: 'Platform' })])
    // Okta's RFC-form removal by filter, then back in by replacing the whole list without a path.
    const remove = await scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: `members[value eq "${annId}"]` }] })
    expect(remove.status).toBe(204)
    expect(await membership(annId)).toBeNull()
    await scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { id: groupId, displayName: 'Platform', members: [{ value: annId }] } }] })
    expect(await membership(annId)).toBe('manager')
    // A member now: Ann may hold a user key in the workspace.
    annKey = await h.key('workspace/user', { name: 'ann', workspace_id: workspaceId, user_id: annId, scopes: ['completions.write', 'workspace_user_api_keys.list'] })
  })

  it('deactivates with active:false: the user\'s key is refused and compiled revoked; PUT with active:true restores it', async () => {
    expect(await chatKeyStatus(annKey)).toBe(200)
    const off = await scim('PATCH', `/Users/${annId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { active: false } }] })
    expect(off.status).toBe(200)
    expect(off.body.active).toBe(false)
    expect(await chatKeyStatus(annKey)).toBe(401)
    const snapshot = await compileSnapshot(h.store, { generation: 1 })
    const keyEntry = snapshot.apiKeys.find((key) => key.userId === annId)!
    expect(keyEntry.status).toBe('revoked')
    expect(snapshot.revokedSubjects).toContain(annId)
    // Okta AIW apps PUT the whole user back.
    const on = await scim('PUT', `/Users/${annId}`, {
      schemas: [USER_SCHEMA], id: annId, userName: 'ann@example.com', name: { givenName: 'Ann', familyName: 'Lee' },
      emails: [{ primary: true, value: 'ann@example.com', type: 'work' }], active: true,
    })
    expect(on.status).toBe(200)
    expect(on.body.active).toBe(true)
    expect(await chatKeyStatus(annKey)).toBe(200)
    expect(await membership(annId)).toBe('manager')
    const after = await compileSnapshot(h.store, { generation: 2 })
    expect(after.apiKeys.find((key) => key.userId === annId)!.status).toBe('active')
    expect(after.revokedSubjects).not.toContain(annId)
  })

  it('archives a mapping: the SCIM-granted membership goes, a hand-given one stays', async () => {
    const handGiven = await h.user('hand@example.com', 'member', { id: workspaceId, role: 'member' })
    await scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: handGiven }] }] })
    expect(await membership(handGiven)).toBe('member')
    const mappingId = (await h.call('GET', '/v1/scim/workspaces', h.ownerKey)).json<{ mappings: Array<{ id: string }> }>().mappings[0]!.id
    expect((await h.call('DELETE', `/v1/scim/workspaces/${mappingId}`, h.ownerKey)).json()).toEqual({ success: true })
    expect(await membership(annId)).toBeNull()
    expect(await membership(handGiven)).toBe('member')
    expect((await h.call('GET', '/v1/scim/workspaces', h.ownerKey)).json()).toMatchObject({ total_count: 0 })
  })
})

describe('Entra ID', () => {
  let bobId: string
  let salesId: string
  let bobKey: string

  it('creates a user with the enterprise extension and string booleans', async () => {
    const lookup = await scim('GET', '/Users?filter=userName+eq+%22bob%40contoso.com%22', undefined, ENTRA_HEADERS)
    expect(lookup.body.totalResults).toBe(0)
    const created = await scim('POST', '/Users', {
      schemas: [USER_SCHEMA, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
      externalId: 'bob',
      userName: 'bob@contoso.com',
      active: 'True',
      displayName: 'Bob Smith',
      emails: [{ primary: true, type: 'work', value: 'bob@contoso.com' }],
      meta: { resourceType: 'User' },
      name: { formatted: 'Bob Smith', familyName: 'Smith', givenName: 'Bob' },
      roles: [],
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Sales' },
    }, ENTRA_HEADERS)
    expect(created.status).toBe(201)
    bobId = created.body.id
    expect(created.body.active).toBe(true)
  })

  it('maps a group by name (pre-created), and Entra\'s Add/Remove member forms move the workspace membership', async () => {
    const mapped = await h.call('POST', '/v1/scim/workspaces', h.ownerKey, { workspace_id: workspaceId, role: 'admin', scim_group_name: 'Sales' })
    expect(mapped.statusCode).toBe(200)
    salesId = mapped.json<{ scim_group_id: string }>().scim_group_id
    // Entra finds the group it will push by displayName.
    const found = await scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq "Sales"')}&excludedAttributes=members`, undefined, ENTRA_HEADERS)
    expect(found.body.totalResults).toBe(1)
    expect(found.body.Resources[0]).not.toHaveProperty('members')
    const add = await scim('PATCH', `/Groups/${salesId}`, { schemas: [PATCH_OP], Operations: [{ op: 'Add', path: 'members', value: [{ value: bobId }] }] }, ENTRA_HEADERS)
    expect(add.status).toBe(204)
    expect(await membership(bobId)).toBe('admin')
    bobKey = await h.key('workspace/user', { name: 'bob', workspace_id: workspaceId, user_id: bobId, scopes: ['completions.write', 'workspace_user_api_keys.list'] })
    const rename = await scim('PATCH', `/Groups/${salesId}`, { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'displayName', value: 'Sales EMEA' }] }, ENTRA_HEADERS)
    expect(rename.status).toBe(204)
    expect((await scim('GET', `/Groups/${salesId}`, undefined, ENTRA_HEADERS)).body).toMatchObject({ displayName: 'Sales EMEA', members: [{ value: bobId }] })
    const remove = await scim('PATCH', `/Groups/${salesId}`, { schemas: [PATCH_OP], Operations: [{ op: 'Remove', path: 'members', value: [{ value: bobId }] }] }, ENTRA_HEADERS)
    expect(remove.status).toBe(204)
    expect(await membership(bobId)).toBeNull()
    await scim('PATCH', `/Groups/${salesId}`, { schemas: [PATCH_OP], Operations: [{ op: 'Add', path: 'members', value: [{ value: bobId }] }] }, ENTRA_HEADERS)
    expect(await membership(bobId)).toBe('admin')
  })

  it('deactivates with {"op":"Replace","path":"active","value":"False"} and reactivates with "True"', async () => {
    expect(await chatKeyStatus(bobKey)).toBe(200)
    const off = await scim('PATCH', `/Users/${bobId}`, { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] }, ENTRA_HEADERS)
    expect(off.status).toBe(200)
    expect(off.body.active).toBe(false)
    expect(await chatKeyStatus(bobKey)).toBe(401)
    const inactive = await scim('GET', `/Users?filter=${encodeURIComponent('active eq false')}`, undefined, ENTRA_HEADERS)
    expect(inactive.body.Resources.map((user: Json) => user.id)).toEqual([bobId])
    const on = await scim('PATCH', `/Users/${bobId}`, { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'active', value: 'True' }] }, ENTRA_HEADERS)
    expect(on.body.active).toBe(true)
    expect(await chatKeyStatus(bobKey)).toBe(200)
    expect(await membership(bobId)).toBe('admin')
  })

  it('changes the email through Entra\'s filtered path and names through dotted paths', async () => {
    const patched = await scim('PATCH', `/Users/${bobId}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'Add', path: 'emails[type eq "work"].value', value: 'robert@contoso.com' },
        { op: 'Replace', path: 'name.givenName', value: 'Robert' },
        { op: 'Replace', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'Sales' },
      ],
    }, ENTRA_HEADERS)
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({ emails: [{ value: 'robert@contoso.com' }], name: { givenName: 'Robert', familyName: 'Smith' } })
    expect((await h.store.users.get(h.orgId, bobId))!.email).toBe('robert@contoso.com')
  })

  it('deletes the user and everything they hold', async () => {
    expect((await scim('DELETE', `/Users/${bobId}`, undefined, ENTRA_HEADERS)).status).toBe(204)
    expect(await chatKeyStatus(bobKey)).toBe(401)
    expect(await membership(bobId)).toBeNull()
    expect((await scim('GET', `/Users/${bobId}`, undefined, ENTRA_HEADERS)).status).toBe(404)
    expect((await scim('GET', `/Groups/${salesId}`, undefined, ENTRA_HEADERS)).body.members).toEqual([])
    // Gateways keep refusing the deleted user's JWTs: the id stays listed for a while.
    const snapshot = await compileSnapshot(h.store, { generation: 3 })
    expect(snapshot.revokedSubjects).toContain(bobId)
    expect(snapshot.apiKeys.some((key) => key.userId === bobId)).toBe(false)
  })
})

describe('groups replaced and deleted', () => {
  it('replaces a group with PUT and removes it with DELETE, taking its workspace grants along', async () => {
    const user = await scim('POST', '/Users', { schemas: [USER_SCHEMA], userName: 'gwen@example.com', emails: [{ value: 'gwen@example.com', primary: true }] })
    const group = await scim('POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Ops', members: [] })
    expect((await h.call('POST', '/v1/scim/workspaces', h.ownerKey, { workspace_id: workspaceId, role: 'member', scim_group_id: group.body.id })).statusCode).toBe(200)
    const put = await scim('PUT', `/Groups/${group.body.id}`, { schemas: [GROUP_SCHEMA], id: group.body.id, displayName: 'Operations', members: [{ value: user.body.id }] })
    expect(put.status).toBe(200)
    expect(put.body).toMatchObject({ displayName: 'Operations', members: [{ value: user.body.id, display: 'gwen@example.com' }] })
    expect(await membership(user.body.id)).toBe('member')
    expect((await scim('DELETE', `/Groups/${group.body.id}`)).status).toBe(204)
    expect(await membership(user.body.id)).toBeNull()
    expect((await scim('GET', `/Groups/${group.body.id}`)).status).toBe(404)
    expect((await h.call('GET', `/v1/scim/workspaces?scim_group_id=${group.body.id}`, h.ownerKey)).json()).toMatchObject({ total_count: 0 })
  })
})

describe('lists, discovery and errors', () => {
  it('pages with startIndex and count and filters with and/co/sw', async () => {
    for (const name of ['p1', 'p2', 'p3']) {
      await scim('POST', '/Users', { schemas: [USER_SCHEMA], userName: `${name}@paging.test`, emails: [{ value: `${name}@paging.test`, primary: true }], name: { givenName: name.toUpperCase() } })
    }
    const filter = encodeURIComponent('userName sw "p" and emails.value co "@paging.test"')
    const first = await scim('GET', `/Users?filter=${filter}&startIndex=1&count=2`)
    expect(first.body).toMatchObject({ totalResults: 3, startIndex: 1, itemsPerPage: 2 })
    const second = await scim('GET', `/Users?filter=${filter}&startIndex=3&count=2`)
    expect(second.body).toMatchObject({ totalResults: 3, startIndex: 3, itemsPerPage: 1 })
    expect(second.body.Resources[0].userName).toBe('p3@paging.test')
    const none = await scim('GET', `/Users?filter=${encodeURIComponent('name.givenName eq "P2" and not (userName ew "paging.test")')}`)
    expect(none.body.totalResults).toBe(0)
  })

  it('answers discovery documents', async () => {
    const config = await scim('GET', '/ServiceProviderConfig')
    expect(config.body).toMatchObject({ patch: { supported: true }, bulk: { supported: false }, filter: { supported: true } })
    const types = await scim('GET', '/ResourceTypes')
    expect(types.body.Resources.map((t: Json) => t.id)).toEqual(['User', 'Group'])
    const schemas = await scim('GET', '/Schemas')
    expect(schemas.body.Resources.map((s: Json) => s.id)).toEqual([USER_SCHEMA, GROUP_SCHEMA])
  })

  it('refuses bad input in the SCIM error format and changes nothing', async () => {
    const before = (await h.store.users.listAll(h.orgId)).length
    const badFilter = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq')}`)
    expect(badFilter.status).toBe(400)
    expect(badFilter.body).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '400', scimType: 'invalidFilter' })
    expect((await scim('GET', `/Users?filter=${encodeURIComponent('userName zz "x"')}`)).body.scimType).toBe('invalidFilter')
    const noUserName = await scim('POST', '/Users', { schemas: [USER_SCHEMA], emails: [{ value: 'x@y.z' }] })
    expect(noUserName).toMatchObject({ status: 400, body: { scimType: 'invalidValue' } })
    const badOp = await scim('PATCH', `/Users/${(await h.store.users.listAll(h.orgId))[1]!.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'move', path: 'active', value: false }] })
    expect(badOp).toMatchObject({ status: 400, body: { scimType: 'invalidSyntax' } })
    const badMember = await scim('POST', '/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Ghosts', members: [{ value: 'no-such-user' }] })
    expect(badMember.status).toBe(400)
    expect((await scim('GET', '/Groups?filter=' + encodeURIComponent('displayName eq "Ghosts"'))).body.totalResults).toBe(0)
    const notJson = await h.app.inject({ method: 'POST', url: `${base}/Users`, headers: { ...OKTA_HEADERS, authorization: `Bearer ${scimToken}` }, payload: '{"userName":' })
    expect(notJson.statusCode).toBe(400)
    expect(notJson.json()).toMatchObject({ status: '400' })
    expect((await h.store.users.listAll(h.orgId)).length).toBe(before)
    expect((await scim('GET', '/Users/00000000-0000-0000-0000-000000000000')).status).toBe(404)
  })

  it('refuses bad mappings with the admin error envelope', async () => {
    const both = await h.call('POST', '/v1/scim/workspaces', h.ownerKey, { workspace_id: workspaceId, role: 'member', scim_group_id: 'x', scim_group_name: 'y' })
    expect(both.statusCode).toBe(400)
    expect(both.json()).toMatchObject({ error: { code: 'AB01' } })
    expect((await h.call('POST', '/v1/scim/workspaces', h.ownerKey, { workspace_id: 'no-such-workspace', role: 'member', scim_group_name: 'y' })).statusCode).toBe(400)
    expect((await h.call('POST', '/v1/scim/workspaces', h.ownerKey, { workspace_id: workspaceId, role: 'owner', scim_group_name: 'y' })).statusCode).toBe(400)
    expect((await h.call('POST', '/v1/scim/workspaces', h.ownerKey, { workspace_id: workspaceId, role: 'member', scim_group_id: 'no-such-group' })).statusCode).toBe(400)
    expect((await h.call('DELETE', '/v1/scim/workspaces/no-such-mapping', h.ownerKey)).statusCode).toBe(404)
    // Nothing was created by the refused calls: no group named "y".
    expect(await h.store.scim.findGroupByName(h.orgId, 'y')).toBeNull()
  })

  it('never deactivates the owner', async () => {
    const owner = await scim('PATCH', `/Users/${h.ownerId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: false }] })
    expect(owner).toMatchObject({ status: 400, body: { scimType: 'mutability' } })
    expect((await h.store.users.get(h.orgId, h.ownerId))!.status).toBe('active')
  })

  it('writes every SCIM change to the audit log under the token', async () => {
    const rows = await h.store.audit.list(h.orgId, { action: 'scim.patch' }, 0, 100)
    expect(rows.total).toBeGreaterThan(3)
    expect(rows.data[0]).toMatchObject({ actorType: 'system', resourceType: expect.stringMatching(/^scim_/) })
    expect(String(rows.data[0]!.actorId)).toMatch(/^scim_token:/)
  })
})
