/**
 * Prompts on the admin API: immutable versions, the patch flag, publishing, labels moving between
 * versions, partials with their own versions, collections, template checks, the audit log, and
 * the prompt access settings for every role (member, manager, admin) with defaults, organisation
 * values and workspace overrides.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './testing.ts'

let h: Harness
let wsId: string
let collectionId: string

const PROMPT_SCOPES = ['prompts.create', 'prompts.read', 'prompts.update', 'prompts.delete', 'prompts.list', 'prompts.publish', 'prompts.render']

beforeAll(async () => {
  h = await createHarness()
  wsId = (await h.workspace('Prompts')).id
  const collection = await h.call('POST', '/v1/collections', h.ownerKey, { name: 'Marketing', workspace_id: wsId })
  expect(collection.statusCode, collection.body).toBe(200)
  collectionId = collection.json().id
  for (const [name, slug] of [['OpenAI main', 'openai-main'], ['Anthropic main', 'anthropic-main']] as const) {
    const provider = await h.call('POST', '/v1/providers', h.ownerKey, { name, slug, provider: slug.startsWith('openai') ? 'openai' : 'anthropic', key: 'sk-test-1234567890', workspace_id: wsId })
    expect(provider.statusCode, provider.body).toBe(200)
  }
})
afterAll(() => h.close())

async function createPrompt(key = h.ownerKey, extra: Record<string, unknown> = {}) {
  return h.call('POST', '/v1/prompts', key, {
    name: 'Blog outline', collection_id: collectionId, string: '[{"role":"system","content":"You write about {{topic}}"}]',
    parameters: { temperature: 0.2, max_tokens: 100 }, virtual_key: 'openai-main', model: 'gpt-4o-mini', ...extra,
  })
}

describe('prompt versions', () => {
  it('creates version 1 published, and an update writes version 2 without changing version 1', async () => {
    const created = await createPrompt()
    expect(created.statusCode, created.body).toBe(200)
    const { id, slug, version_id: v1 } = created.json()
    expect(slug).toMatch(/^pp-blogou-[0-9a-f]{6}$/)
    const got = (await h.call('GET', `/v1/prompts/${slug}`, h.ownerKey)).json()
    expect(got).toMatchObject({ id, prompt_version: 1, prompt_version_id: v1, model: 'gpt-4o-mini', parameters: { temperature: 0.2, max_tokens: 100 }, virtual_key: 'openai-main', object: 'prompt' })

    const put = await h.call('PUT', `/v1/prompts/${id}`, h.ownerKey, { string: 'Write about {{topic}} for {{audience}}', parameters: { temperature: 0.9 } })
    expect(put.statusCode, put.body).toBe(200)
    const v2 = put.json().prompt_version_id
    expect(v2).not.toBe(v1)
    const versions = (await h.call('GET', `/v1/prompts/${id}/versions`, h.ownerKey)).json()
    expect(Array.isArray(versions)).toBe(true)
    expect(versions.map((v: { prompt_version: number }) => v.prompt_version)).toEqual([2, 1])
    const first = (await h.call('GET', `/v1/prompts/${id}/versions/1`, h.ownerKey)).json()
    expect(first).toMatchObject({ prompt_version_id: v1, string: '[{"role":"system","content":"You write about {{topic}}"}]', parameters: { temperature: 0.2, max_tokens: 100 }, model: 'gpt-4o-mini' })
    // Without patch, omitted optional version fields are cleared on the new version.
    expect((await h.call('GET', `/v1/prompts/${id}/versions/${v2}`, h.ownerKey)).json()).toMatchObject({ prompt_version: 2, model: null, parameters: { temperature: 0.9 } })
    // The published version is still 1 until makeDefault.
    expect((await h.call('GET', `/v1/prompts/${id}`, h.ownerKey)).json().prompt_version).toBe(1)
    expect((await h.call('PUT', `/v1/prompts/${id}/makeDefault`, h.ownerKey, { version: 2 })).statusCode).toBe(200)
    expect((await h.call('GET', `/v1/prompts/${id}`, h.ownerKey)).json().prompt_version).toBe(2)
    expect((await h.call('PUT', `/v1/prompts/${id}/makeDefault`, h.ownerKey, { version: 9 })).json().error.param).toBe('version')
  })

  it('refuses a version change without patch that omits string or parameters, and stores nothing', async () => {
    const { id } = (await createPrompt()).json()
    const refused = await h.call('PUT', `/v1/prompts/${id}`, h.ownerKey, { string: 'Only the text {{x}}' })
    expect(refused.statusCode).toBe(400)
    expect(refused.json().error).toMatchObject({ param: 'parameters', code: 'AB01' })
    expect((await h.call('GET', `/v1/prompts/${id}/versions`, h.ownerKey)).json()).toHaveLength(1)
  })

  it('with patch: true copies omitted version fields from the latest version', async () => {
    const { id } = (await createPrompt(h.ownerKey, { tools: [{ type: 'function', function: { name: 'lookup' } }] })).json()
    const patched = await h.call('PUT', `/v1/prompts/${id}`, h.ownerKey, { patch: true, string: 'New text about {{topic}}' })
    expect(patched.statusCode, patched.body).toBe(200)
    const latest = (await h.call('GET', `/v1/prompts/${id}/versions/${patched.json().prompt_version_id}`, h.ownerKey)).json()
    expect(latest).toMatchObject({
      prompt_version: 2, string: 'New text about {{topic}}', parameters: { temperature: 0.2, max_tokens: 100 }, model: 'gpt-4o-mini',
      tools: [{ type: 'function', function: { name: 'lookup' } }],
    })
    // Metadata alone changes in place: no new version.
    const renamed = await h.call('PUT', `/v1/prompts/${id}`, h.ownerKey, { name: 'Renamed', virtual_key: 'anthropic-main' })
    expect(renamed.json().prompt_version_id).toBe(patched.json().prompt_version_id)
    expect((await h.call('GET', `/v1/prompts/${id}`, h.ownerKey)).json()).toMatchObject({ name: 'Renamed', virtual_key: 'anthropic-main' })
    expect((await h.call('GET', `/v1/prompts/${id}/versions`, h.ownerKey)).json()).toHaveLength(2)
  })

  it('keeps versions immutable: only label_id may change on a version', async () => {
    const { id, version_id } = (await createPrompt()).json()
    const refused = await h.call('PUT', `/v1/prompts/${id}/versions/${version_id}`, h.ownerKey, { label_id: null, string: 'changed' })
    expect(refused.statusCode).toBe(400)
    expect(refused.json().error.param).toBe('string')
    const [row] = await h.db.query<{ template: string }>('SELECT template FROM prompt_versions WHERE id = $1', [version_id])
    expect(row!.template).toBe('[{"role":"system","content":"You write about {{topic}}"}]')
  })

  it('refuses a virtual key the workspace has no provider for, and stores nothing', async () => {
    const before = (await h.call('GET', `/v1/prompts?workspace_id=${wsId}`, h.ownerKey)).json().total
    const response = await createPrompt(h.ownerKey, { virtual_key: 'nowhere' })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({ param: 'virtual_key', code: 'AB01' })
    expect((await h.call('GET', `/v1/prompts?workspace_id=${wsId}`, h.ownerKey)).json().total).toBe(before)
  })

  it('refuses a template with a Mustache syntax error, naming the field', async () => {
    const response = await createPrompt(h.ownerKey, { string: 'Hello {{#open}} never closed' })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({ param: 'string', code: 'AB01' })
    expect(response.json().error.message).toMatch(/Unclosed section "open"/)
  })

  // Break tried: checking every template as chat (dropping the raw flag in checkTemplate) refuses
  // the raw create below with 400, and stops refusing the patch that turns it back into chat.
  it('checks a raw template as one text, and a patch that changes is_raw_template as the new version reads', async () => {
    // As chat messages the decoded content is `{{#open}}` (unclosed); as raw text the escapes are plain text.
    const escaped = '[{"role":"user","content":"\\u007b\\u007b#open\\u007d\\u007d"}]'
    expect((await createPrompt(h.ownerKey, { string: escaped })).json().error).toMatchObject({ param: 'string' })
    const raw = await createPrompt(h.ownerKey, { string: escaped, is_raw_template: 1 })
    expect(raw.statusCode, raw.body).toBe(200)
    const { id } = raw.json()
    expect((await h.call('GET', `/v1/prompts/${id}`, h.ownerKey)).json()).toMatchObject({ is_raw_template: true, string: escaped })
    const toChat = await h.call('PUT', `/v1/prompts/${id}`, h.ownerKey, { patch: true, is_raw_template: 0 })
    expect(toChat.statusCode).toBe(400)
    expect(toChat.json().error).toMatchObject({ param: 'string' })
    expect((await h.call('GET', `/v1/prompts/${id}/versions`, h.ownerKey)).json()).toHaveLength(1)
  })

  it('records each change in the audit log', async () => {
    const { id } = (await createPrompt()).json()
    await h.call('PUT', `/v1/prompts/${id}/makeDefault`, h.ownerKey, { version: 1 })
    const rows = await h.db.query<{ action: string }>("SELECT action FROM audit_log WHERE resource_id = $1 ORDER BY occurred_at", [id])
    expect(rows.map((r) => r.action)).toEqual(['prompt.create', 'prompt.publish'])
  })
})

describe('labels', () => {
  it('move between versions: setting production on version 2 takes it off version 1', async () => {
    const labels = (await h.call('GET', `/v1/labels?workspace_id=${wsId}`, h.ownerKey)).json()
    const production = labels.data.find((l: { name: string }) => l.name === 'production')
    expect(production).toMatchObject({ is_universal: true })
    const { id, version_id: v1 } = (await createPrompt()).json()
    const v2 = (await h.call('PUT', `/v1/prompts/${id}`, h.ownerKey, { patch: true, string: 'v2 {{topic}}' })).json().prompt_version_id
    expect((await h.call('PUT', `/v1/prompts/${id}/versions/${v1}`, h.ownerKey, { label_id: production.id })).statusCode).toBe(200)
    expect((await h.call('GET', `/v1/prompts/${id}/versions/${v1}`, h.ownerKey)).json().prompt_version_label_id).toBe(production.id)
    expect((await h.call('PUT', `/v1/prompts/${id}/versions/${v2}`, h.ownerKey, { label_id: production.id })).statusCode).toBe(200)
    const versions = (await h.call('GET', `/v1/prompts/${id}/versions`, h.ownerKey)).json() as Array<{ id: string; label_id: string | null }>
    expect(versions.find((v) => v.id === v2)!.label_id).toBe(production.id)
    expect(versions.find((v) => v.id === v1)!.label_id).toBeNull()
  })

  it('custom labels: created per workspace, unknown ones refused, universal ones unchangeable', async () => {
    const created = await h.call('POST', '/v1/labels', h.ownerKey, { name: 'canary', workspace_id: wsId, color_code: '#ff0000' })
    expect(created.statusCode, created.body).toBe(200)
    expect((await h.call('POST', '/v1/labels', h.ownerKey, { name: 'canary', workspace_id: wsId })).statusCode).toBe(409)
    expect((await h.call('POST', '/v1/labels', h.ownerKey, { name: '42', workspace_id: wsId })).json().error.param).toBe('name')
    const { id, version_id } = (await createPrompt()).json()
    expect((await h.call('PUT', `/v1/prompts/${id}/versions/${version_id}`, h.ownerKey, { label_id: created.json().id })).statusCode).toBe(200)
    expect((await h.call('PUT', `/v1/prompts/${id}/versions/${version_id}`, h.ownerKey, { label_id: 'no-such-label' })).json().error.param).toBe('label_id')
    const production = (await h.call('GET', '/v1/labels', h.ownerKey)).json().data.find((l: { name: string }) => l.name === 'production')
    expect((await h.call('DELETE', `/v1/labels/${production.id}`, h.ownerKey)).statusCode).toBe(400)
  })
})

describe('partials and collections', () => {
  it('partials keep versions; an update writes the next one and makeDefault publishes', async () => {
    const created = await h.call('POST', '/v1/prompts/partials', h.ownerKey, { name: 'tone', string: 'Be {{mood}}.', workspace_id: wsId })
    expect(created.statusCode, created.body).toBe(200)
    const { id } = created.json()
    const updated = await h.call('PUT', `/v1/prompts/partials/${id}`, h.ownerKey, { string: 'Be very {{mood}}.' })
    expect(updated.statusCode, updated.body).toBe(200)
    expect((await h.call('GET', `/v1/prompts/partials/${id}`, h.ownerKey)).json()).toMatchObject({ version: 1, string: 'Be {{mood}}.' })
    expect((await h.call('PUT', `/v1/prompts/partials/${id}/makeDefault`, h.ownerKey, { version: 2 })).statusCode).toBe(200)
    expect((await h.call('GET', `/v1/prompts/partials/${id}`, h.ownerKey)).json()).toMatchObject({ version: 2, string: 'Be very {{mood}}.', prompt_partial_version_id: updated.json().prompt_partial_version_id })
    const versions = (await h.call('GET', `/v1/prompts/partials/${id}/versions`, h.ownerKey)).json()
    expect(versions.map((v: { version: number; string: string }) => [v.version, v.string])).toEqual([[2, 'Be very {{mood}}.'], [1, 'Be {{mood}}.']])
    const list = (await h.call('GET', `/v1/prompts/partials?workspace_id=${wsId}`, h.ownerKey)).json()
    expect(list.map((p: { name: string }) => p.name)).toContain('tone')
    expect((await h.call('POST', '/v1/prompts/partials', h.ownerKey, { name: 'tone', string: 'x', workspace_id: wsId })).statusCode).toBe(409)
    expect((await h.call('POST', '/v1/prompts/partials', h.ownerKey, { name: 'has space', string: 'x', workspace_id: wsId })).json().error.param).toBe('name')
  })

  it('collections list with their default collection, which cannot be deleted', async () => {
    const list = (await h.call('GET', `/v1/collections?workspace_id=${wsId}`, h.ownerKey)).json()
    const defaults = list.data.filter((c: { is_default: boolean }) => c.is_default)
    expect(defaults).toHaveLength(1)
    expect((await h.call('DELETE', `/v1/collections/${defaults[0].id}`, h.ownerKey)).statusCode).toBe(404)
    const child = await h.call('POST', '/v1/collections', h.ownerKey, { name: 'Sub', workspace_id: wsId, parent_collection_id: collectionId })
    expect((await h.call('GET', `/v1/collections/${collectionId}`, h.ownerKey)).json().child_collections.map((c: { id: string }) => c.id)).toContain(child.json().id)
    // A collection holding prompts is not deleted from under them.
    expect((await h.call('DELETE', `/v1/collections/${collectionId}`, h.ownerKey)).statusCode).toBe(409)
  })
})

describe('prompt access settings', () => {
  let member: string
  let manager: string
  let workspaceAdmin: string
  let ws: string
  let promptId: string

  beforeAll(async () => {
    ws = (await h.workspace('Access')).id
    const users = await Promise.all((['member', 'manager', 'admin'] as const).map((role) => h.user(`${role}-prompts@example.com`, 'member', { id: ws, role })))
    const keys = await Promise.all(users.map((userId, index) => h.key('workspace/user', { name: `k${index}`, workspace_id: ws, user_id: userId, scopes: PROMPT_SCOPES })))
    ;[member, manager, workspaceAdmin] = keys as [string, string, string]
    await h.call('POST', '/v1/providers', h.ownerKey, { name: 'Access OpenAI', slug: 'openai-main', provider: 'openai', key: 'sk-test-1234567890', workspace_id: ws })
    const collection = (await h.call('POST', '/v1/collections', h.ownerKey, { name: 'Access', workspace_id: ws })).json().id
    promptId = (await h.call('POST', '/v1/prompts', h.ownerKey, { name: 'Access', collection_id: collection, string: 'Hi {{name}}', parameters: {}, virtual_key: 'openai-main' })).json().id
  })

  async function setOrganisation(flags: Record<string, boolean>) {
    expect((await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { security_settings: flags })).statusCode).toBe(200)
  }
  async function setWorkspace(flags: Record<string, boolean>) {
    const response = await h.call('PUT', `/v1/admin/workspaces/${ws}`, h.ownerKey, { settings: { security_settings: flags } })
    expect(response.statusCode, response.body).toBe(200)
  }
  const view = async (key: string) => (await h.call('GET', `/v1/prompts/${promptId}`, key)).statusCode
  const list = async (key: string) => (await h.call('GET', '/v1/prompts', key)).statusCode
  const write = async (key: string) => (await h.call('PUT', `/v1/prompts/${promptId}`, key, { name: 'Access' })).statusCode

  it('defaults: members view but do not write; managers view and write; admins do everything', async () => {
    expect([await view(member), await list(member), await write(member)]).toEqual([200, 200, 403])
    expect([await view(manager), await list(manager), await write(manager)]).toEqual([200, 200, 200])
    expect([await view(workspaceAdmin), await write(workspaceAdmin)]).toEqual([200, 200])
    const refused = await h.call('PUT', `/v1/prompts/${promptId}`, member, { name: 'Access' })
    expect(refused.json().error).toMatchObject({ code: 'AB03' })
    expect(refused.json().error.message).toMatch(/write prompts/)
  })

  it('organisation values turn each permission on or off, for that role only', async () => {
    await setOrganisation({ membersWritePrompts: true })
    expect(await write(member)).toBe(200)
    await setOrganisation({ membersWritePrompts: false, membersViewPrompts: false })
    expect([await view(member), await list(member)]).toEqual([403, 403])
    expect(await view(manager)).toBe(200)
    await setOrganisation({ managersWritePrompts: false })
    expect([await write(manager), await view(manager)]).toEqual([403, 200])
    await setOrganisation({ managersViewPrompts: false })
    expect([await view(manager), await list(manager)]).toEqual([403, 403])
    // Admins are never limited by the settings.
    expect([await view(workspaceAdmin), await write(workspaceAdmin), await view(h.ownerKey), await write(h.ownerKey)]).toEqual([200, 200, 200, 200])
  })

  it('a workspace override wins over the organisation value', async () => {
    // Organisation: members and managers may do nothing (from the test above).
    await setWorkspace({ membersViewPrompts: true, managersViewPrompts: true, managersWritePrompts: true })
    expect([await view(member), await write(member)]).toEqual([200, 403])
    expect([await view(manager), await write(manager)]).toEqual([200, 200])
    await setWorkspace({ membersWritePrompts: true })
    expect(await write(member)).toBe(200)
    await setOrganisation({ membersViewPrompts: true, membersWritePrompts: true, managersViewPrompts: true, managersWritePrompts: true })
    await setWorkspace({ managersWritePrompts: false, membersViewPrompts: false })
    expect([await write(manager), await view(member)]).toEqual([403, 403])
  })

  it('still needs the scope: a member key without prompts.update may not write even when members may', async () => {
    await setWorkspace({ membersWritePrompts: true, membersViewPrompts: true })
    const userId = await h.user('narrow-prompts@example.com', 'member', { id: ws, role: 'member' })
    const narrow = await h.key('workspace/user', { name: 'narrow', workspace_id: ws, user_id: userId, scopes: ['prompts.read'] })
    expect([await view(narrow), await write(narrow)]).toEqual([200, 403])
  })
})
