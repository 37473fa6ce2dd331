/**
 * Providers (and their older name, virtual keys), integrations and secret references over HTTP:
 * credentials sealed at rest and absent from every answer, row and log line; tags filters;
 * integration models, workspace access and default providers; the capability rows (admin key in
 * all workspaces, workspace key in its own; secret references for owners and admins only); rows
 * managed by Kubernetes or files refused with 409.
 */
import { Writable } from 'node:stream'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALL_SCOPES, WORKSPACE_SCOPES } from '../identity/scopes.ts'
import { createHarness, type Harness } from './testing.ts'

const SECRET = 'sk-live-PLAINSECRET-0123456789abcdef'
const AWS_SECRET = 'aws-PLAINSECRET-wJalrXUtnFEMI-K7MDENG'
const VK_SECRET = 'sk-ant-PLAINSECRET-vk-5555555555'
const logLines: string[] = []

let h: Harness
let wsA: string
let wsB: string
let adminKey: string
let workspaceKey: string

async function dumpDatabase(): Promise<string> {
  const tables = (await h.db.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).map((t) => t.tablename)
  let out = ''
  for (const table of tables) out += JSON.stringify(await h.db.query(`SELECT * FROM ${table}`))
  return out
}

beforeAll(async () => {
  const sink = new Writable({ write(chunk, _encoding, done) { logLines.push(String(chunk)); done() } })
  h = await createHarness({ logger: pino({ level: 'trace' }, sink) })
  wsA = (await h.workspace('Prov A')).id
  wsB = (await h.workspace('Prov B')).id
  adminKey = await h.key('organisation/service', { name: 'all admin', scopes: [...ALL_SCOPES] })
  workspaceKey = await h.key('workspace/service', { name: 'all ws', workspace_id: wsA, scopes: [...WORKSPACE_SCOPES] })
})
afterAll(() => h.close())

describe('credentials never leave sealed', () => {
  it('keeps integration and virtual-key secrets out of answers, rows and logs', async () => {
    const created = await h.call('POST', '/v1/integrations', adminKey, {
      name: 'Main OpenAI', ai_provider_id: 'openai', slug: 'main-openai', key: SECRET,
      configurations: { openai_organization: 'org-1', aws_secret_access_key: AWS_SECRET },
    })
    expect(created.statusCode).toBe(200)
    expect(created.json()).toMatchObject({ slug: 'main-openai', object: 'integration' })
    const vk = await h.call('POST', '/v1/virtual-keys', adminKey, { name: 'Legacy', provider: 'anthropic', key: VK_SECRET, workspace_id: wsA })
    expect(vk.statusCode).toBe(200)
    expect(vk.json()).toMatchObject({ success: true, data: { slug: 'legacy' }, object: 'virtual-key' })

    const answers = [
      created.body, vk.body,
      (await h.call('GET', '/v1/integrations/main-openai', adminKey)).body,
      (await h.call('GET', '/v1/integrations', adminKey)).body,
      (await h.call('GET', '/v1/providers', adminKey)).body,
      (await h.call('GET', '/v1/virtual-keys/legacy', adminKey)).body,
      (await h.call('GET', `/v1/providers/legacy?workspace_id=${wsA}`, workspaceKey)).body,
    ]
    const detail = JSON.parse(answers[2]!)
    expect(detail).toMatchObject({ masked_key: '****cdef', has_credentials: true, configurations: { organization: 'org-1' } })
    expect(JSON.parse(answers[5]!)).toMatchObject({ object: 'virtual-key', has_credentials: true, provider: 'anthropic' })
    for (const body of answers) for (const secret of [SECRET, AWS_SECRET, VK_SECRET]) expect(body).not.toContain(secret)

    // An update with a new key: still sealed, still absent.
    expect((await h.call('PUT', '/v1/virtual-keys/legacy', adminKey, { key: `${VK_SECRET}-2` })).statusCode).toBe(200)
    const rows = await dumpDatabase()
    for (const secret of [SECRET, AWS_SECRET, VK_SECRET]) expect(rows).not.toContain(secret)
    expect(rows).toContain('ghe1.')
    expect(logLines.length).toBeGreaterThan(0)
    for (const secret of [SECRET, AWS_SECRET, VK_SECRET]) expect(logLines.join('\n')).not.toContain(secret)
    // The compiler, and only it, opens them.
    const integration = (await h.store.integrations.get(h.orgId, 'main-openai'))!
    expect(await h.store.integrations.decryptedCredentials(h.orgId, integration.id)).toEqual({ apiKey: SECRET, secretAccessKey: AWS_SECRET })
  })
})

describe('providers and virtual keys', () => {
  it('serves the same rows at /v1/providers and /v1/virtual-keys, onto integrations or with their own key', async () => {
    await h.call('POST', '/v1/integrations', adminKey, { name: 'Anthropic', ai_provider_id: 'anthropic', slug: 'anth', key: 'sk-ant-1234567890', create_default_provider: false })
    const onto = await h.call('POST', '/v1/providers', workspaceKey, { name: 'Team Anthropic', integration_id: 'anth', slug: 'team-anth', note: 'n', tags: { team: 'search', env: 'prod' } })
    expect(onto.statusCode).toBe(200)
    expect(onto.json()).toMatchObject({ slug: 'team-anth', object: 'provider' })
    const viaVk = await h.call('GET', '/v1/virtual-keys/team-anth', workspaceKey)
    expect(viaVk.json()).toMatchObject({ object: 'virtual-key', integration_id: 'anth', provider: 'anthropic', workspace_id: wsA, note: 'n' })
    expect((await h.call('PUT', '/v1/providers/team-anth', workspaceKey, { name: 'Renamed', rate_limits: { type: 'requests', unit: 'rpm', value: 10 } })).json()).toMatchObject({ slug: 'team-anth' })
    expect((await h.call('GET', '/v1/providers/team-anth', workspaceKey)).json()).toMatchObject({ name: 'Renamed', rate_limits: [{ type: 'requests', unit: 'rpm', value: 10 }] })
    // A provider onto an integration takes its credential from there.
    const refused = await h.call('PUT', '/v1/providers/team-anth', workspaceKey, { key: 'sk-other-123456' })
    expect(refused.json().error).toMatchObject({ code: 'AB01', param: 'key' })
    expect((await h.call('DELETE', '/v1/virtual-keys/team-anth', workspaceKey)).statusCode).toBe(200)
    expect((await h.call('GET', '/v1/providers/team-anth', workspaceKey)).statusCode).toBe(404)
  })

  it('filters lists by tags (?tags[key]=value, or ?tags= as JSON)', async () => {
    await h.call('POST', '/v1/providers', adminKey, { name: 'T1', provider: 'openai', key: 'sk-t1-1234567890', workspace_id: wsB, tags: { team: 'search', env: 'prod' } })
    await h.call('POST', '/v1/providers', adminKey, { name: 'T2', provider: 'openai', key: 'sk-t2-1234567890', workspace_id: wsB, tags: { team: 'ads' } })
    const slugs = async (query: string) => (await h.call('GET', `/v1/providers?workspace_id=${wsB}&${query}`, adminKey)).json().data.map((p: { slug: string }) => p.slug)
    expect(await slugs('tags[team]=search')).toEqual(['t1'])
    expect(await slugs('tags[team]=search&tags[env]=dev')).toEqual([])
    expect(await slugs(`tags=${encodeURIComponent(JSON.stringify({ team: 'ads' }))}`)).toEqual(['t2'])
    expect((await h.call('GET', '/v1/providers?tags=nope', adminKey)).json().error).toMatchObject({ code: 'AB01', param: 'tags' })
    await h.call('POST', '/v1/integrations', adminKey, { name: 'Tagged', ai_provider_id: 'groq', slug: 'tagged', tags: { team: 'search' }, create_default_provider: false })
    expect((await h.call('GET', '/v1/integrations?tags[team]=search', adminKey)).json().data.map((i: { slug: string }) => i.slug)).toEqual(['tagged'])
  })

  it('admin key: any workspace and organisation-wide; workspace key: its own workspace only', async () => {
    expect((await h.call('POST', '/v1/providers', adminKey, { name: 'Org wide', provider: 'openai', key: 'sk-org-1234567890' })).json()).toMatchObject({ slug: 'org-wide' })
    expect((await h.call('POST', '/v1/providers', adminKey, { name: 'In B', provider: 'openai', key: 'sk-b-1234567890', workspace_id: wsB })).statusCode).toBe(200)
    const intoB = await h.call('POST', '/v1/providers', workspaceKey, { name: 'Sneaky', provider: 'openai', key: 'sk-x-1234567890', workspace_id: wsB })
    expect(intoB.statusCode).toBe(403)
    const own = await h.call('POST', '/v1/providers', workspaceKey, { name: 'Mine', provider: 'openai', key: 'sk-m-1234567890' })
    expect(own.statusCode).toBe(200)
    const listed = (await h.call('GET', '/v1/providers', workspaceKey)).json().data
    expect(listed.every((p: { workspace_id: string }) => p.workspace_id === wsA)).toBe(true)
    expect((await h.call('GET', `/v1/providers?workspace_id=${wsB}`, workspaceKey)).statusCode).toBe(403)
    expect((await h.call('GET', '/v1/providers/in-b', workspaceKey)).statusCode).toBe(404)
    expect((await h.call('DELETE', '/v1/providers/org-wide', workspaceKey)).statusCode).toBe(404)
    expect((await h.call('GET', `/v1/providers/in-b?workspace_id=${wsB}`, adminKey)).statusCode).toBe(200)
    // A workspace key without provider scopes is refused.
    const readOnly = await h.key('workspace/service', { name: 'ro', workspace_id: wsA, scopes: ['providers.list'] })
    expect((await h.call('GET', '/v1/providers', readOnly)).statusCode).toBe(200)
    expect((await h.call('POST', '/v1/providers', readOnly, { name: 'No', provider: 'openai', key: 'sk-n-1234567890' })).statusCode).toBe(403)
  })

  it('refuses to change or delete rows managed by Kubernetes or files, saying where', async () => {
    await h.store.providers.upsert({ organizationId: h.orgId, workspaceId: null, slug: 'from-crd', name: 'CRD', kind: 'openai', managedBy: 'kubernetes' })
    const put = await h.call('PUT', '/v1/providers/from-crd', adminKey, { name: 'x' })
    expect(put.statusCode).toBe(409)
    expect(put.json().error.message).toMatch(/managed by Kubernetes.*kubectl/)
    const del = await h.call('DELETE', '/v1/virtual-keys/from-crd', adminKey)
    expect(del.statusCode).toBe(409)
    expect((await h.store.providers.getBySlug(h.orgId, null, 'from-crd'))?.name).toBe('CRD')
  })
})

describe('integrations', () => {
  it('lists by type (workspace / organisation) and reports expired providers by the application clock', async () => {
    await h.call('POST', '/v1/integrations', workspaceKey, { name: 'Typed WS', ai_provider_id: 'cohere', slug: 'typed-ws', create_default_provider: false })
    const types = async (type: string) => (await h.call('GET', `/v1/integrations?type=${type}&page_size=100`, adminKey)).json().data.map((i: { workspace_id: string | null }) => i.workspace_id)
    expect((await types('workspace')).every((ws: string | null) => ws !== null)).toBe(true)
    expect(await types('workspace')).toContain(wsA)
    expect((await types('organisation')).every((ws: string | null) => ws === null)).toBe(true)
    expect((await h.call('GET', '/v1/integrations?type=both', adminKey)).json().error).toMatchObject({ code: 'AB01', param: 'type' })
    const expiresAt = new Date(h.clock.now.getTime() + 60_000).toISOString()
    await h.call('POST', '/v1/providers', adminKey, { name: 'Soon', provider: 'openai', key: 'sk-soon-1234567890', expires_at: expiresAt })
    expect((await h.call('GET', '/v1/providers/soon', adminKey)).json()).toMatchObject({ status: 'active', expires_at: expiresAt })
    h.clock.advance(60_000)
    expect((await h.call('GET', '/v1/providers/soon', adminKey)).json().status).toBe('expired')
  })

  it('creates a default provider unless told not to, with a custom slug', async () => {
    await h.call('POST', '/v1/integrations', adminKey, { name: 'Groq', ai_provider_id: 'groq', slug: 'groq-int', key: 'gsk-1234567890', default_provider_slug: 'groq' })
    expect((await h.call('GET', '/v1/providers/groq', adminKey)).json()).toMatchObject({ integration_id: 'groq-int', workspace_id: null })
    await h.call('POST', '/v1/integrations', adminKey, { name: 'No default', ai_provider_id: 'groq', slug: 'nodef', create_default_provider: false })
    expect((await h.call('GET', '/v1/providers?integration_id=nodef', adminKey)).json().total).toBe(0)
    const clash = await h.call('POST', '/v1/integrations', adminKey, { name: 'Clash', ai_provider_id: 'groq', slug: 'clash', default_provider_slug: 'groq' })
    expect(clash.statusCode).toBe(409)
    expect(await h.store.integrations.get(h.orgId, 'clash')).toBeNull()
    // A workspace key creates a workspace integration (and its provider) in its own workspace.
    const ws = await h.call('POST', '/v1/integrations', workspaceKey, { name: 'WS Mistral', ai_provider_id: 'mistral-ai', slug: 'ws-mistral', key: 'ms-1234567890' })
    expect(ws.statusCode).toBe(200)
    expect((await h.call('GET', '/v1/integrations/ws-mistral', workspaceKey)).json()).toMatchObject({ workspace_id: wsA })
    expect((await h.call('GET', '/v1/providers/ws-mistral', workspaceKey)).json()).toMatchObject({ workspace_id: wsA, integration_id: 'ws-mistral' })
    expect((await h.call('GET', '/v1/integrations/groq-int', workspaceKey)).statusCode).toBe(404)
  })

  it('manages models and bulk workspace access, creating per-workspace default providers', async () => {
    await h.call('POST', '/v1/integrations', adminKey, { name: 'Bulk', ai_provider_id: 'openai', slug: 'bulk', key: 'sk-bulk-1234567890', create_default_provider: false })
    const models = await h.call('PUT', '/v1/integrations/bulk/models', adminKey, {
      allow_all_models: false,
      models: [{ slug: 'gpt-4o', enabled: true }, { slug: 'gpt-3.5', enabled: false }, { slug: 'my-ft', enabled: true, is_custom: true, is_finetune: true, base_model_slug: 'gpt-4o' }],
    })
    expect(models.statusCode).toBe(200)
    expect((await h.call('GET', '/v1/integrations/bulk/models', adminKey)).json()).toMatchObject({ total: 3, allow_all_models: false })
    expect((await h.call('DELETE', '/v1/integrations/bulk/models?slugs=gpt-4o', adminKey)).json().error).toMatchObject({ code: 'AB01', param: 'slugs' })
    expect((await h.call('DELETE', '/v1/integrations/bulk/models?slugs=my-ft', adminKey)).statusCode).toBe(200)
    expect((await h.call('GET', '/v1/integrations/bulk/models', adminKey)).json().total).toBe(2)

    const bulk = await h.call('PUT', '/v1/integrations/bulk/workspaces', adminKey, {
      global_workspace_access: { enabled: false },
      workspaces: [{ id: wsA, enabled: true, default_provider_slug: 'bulk-a' }, { id: wsB, enabled: true, create_default_provider: false }],
    })
    expect(bulk.statusCode).toBe(200)
    expect(bulk.json().created_providers).toEqual([{ workspace_id: wsA, slug: 'bulk-a' }])
    const access = (await h.call('GET', '/v1/integrations/bulk/workspaces', adminKey)).json()
    expect(access).toMatchObject({ total: 2, global_workspace_access: { enabled: false } })
    expect((await h.call('GET', '/v1/providers/bulk-a', workspaceKey)).json()).toMatchObject({ integration_id: 'bulk' })
    const unknown = await h.call('PUT', '/v1/integrations/bulk/workspaces', adminKey, { workspaces: [{ id: 'nope', enabled: true }] })
    expect(unknown.json().error).toMatchObject({ code: 'AB01', param: 'workspaces[0].id' })
    // Organisation integrations are the organisation's: a workspace key may not change access.
    expect((await h.call('PUT', '/v1/integrations/bulk/workspaces', workspaceKey, { workspaces: [] })).statusCode).toBe(404)
  })
})

describe('secret references', () => {
  it('owners and admins only; maps credentials; refuses deletion while used', async () => {
    const created = await h.call('POST', '/v1/secret-references', h.ownerKey, { name: 'OpenAI key', manager_type: 'environment', secret_path: 'OPENAI_API_KEY', tags: { team: 'core' } })
    expect(created.statusCode).toBe(200)
    expect(created.json()).toMatchObject({ slug: 'openai-key', object: 'secret-reference' })
    const k8s = await h.call('POST', '/v1/secret-references', adminKey, { name: 'K8s', manager_type: 'kubernetes', secret_path: 'gatehouse/provider-keys', secret_key: 'anthropic', allowed_workspaces: [wsB] })
    expect(k8s.json()).toMatchObject({ slug: 'k8s' })
    expect((await h.call('GET', '/v1/secret-references/k8s', adminKey)).json()).toMatchObject({ allow_all_workspaces: false, allowed_workspaces: [wsB], status: 'ACTIVE' })

    const adminUser = await h.user('sr-admin@example.com', 'admin')
    const adminUserKey = await h.key('organisation/user', { name: 'admin user', user_id: adminUser, scopes: ['secret_references.list', 'secret_references.read'] })
    expect((await h.call('GET', '/v1/secret-references', adminUserKey)).json().total).toBe(2)
    const memberUser = await h.user('sr-member@example.com', 'member', { id: wsA, role: 'admin' })
    const memberKey = await h.key('workspace/user', { name: 'ws admin', workspace_id: wsA, user_id: memberUser, scopes: [...WORKSPACE_SCOPES] })
    for (const key of [workspaceKey, memberKey]) {
      expect((await h.call('GET', '/v1/secret-references', key)).statusCode).toBe(403)
      expect((await h.call('POST', '/v1/secret-references', key, { name: 'x', manager_type: 'environment', secret_path: 'X' })).statusCode).toBe(403)
    }

    // Mapping onto a provider; a reference not shared with the provider's workspace is refused.
    const mapped = await h.call('POST', '/v1/providers', adminKey, { name: 'Mapped', provider: 'openai', workspace_id: wsA, secret_mappings: [{ target_field: 'key', secret_reference_id: 'openai-key' }] })
    expect(mapped.statusCode).toBe(200)
    const unshared = await h.call('POST', '/v1/providers', adminKey, { name: 'Unshared', provider: 'anthropic', workspace_id: wsA, secret_mappings: [{ target_field: 'key', secret_reference_id: 'k8s' }] })
    expect(unshared.json().error).toMatchObject({ code: 'AB01', param: 'secret_mappings[0].secret_reference_id' })
    const inUse = await h.call('DELETE', '/v1/secret-references/openai-key', h.ownerKey)
    expect(inUse.statusCode).toBe(409)
    expect(inUse.json().error.message).toContain('provider mapped')
    expect((await h.call('DELETE', '/v1/providers/mapped?workspace_id=' + wsA, adminKey)).statusCode).toBe(200)
    expect((await h.call('DELETE', '/v1/secret-references/openai-key', h.ownerKey)).statusCode).toBe(200)
  })

  it('refuses the control plane\'s own settings and malformed locations', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'a', manager_type: 'environment', secret_path: 'GATEHOUSE_ENCRYPTION_KEY' }, 'secret_path'],
      [{ name: 'a', manager_type: 'environment', secret_path: 'has space' }, 'secret_path'],
      [{ name: 'a', manager_type: 'kubernetes', secret_path: 'Bad_Name' , secret_key: 'k' }, 'secret_path'],
      [{ name: 'a', manager_type: 'kubernetes', secret_path: 'ok' }, 'secret_key'],
      [{ name: 'a', manager_type: 'vault', secret_path: 'x' }, 'manager_type'],
      [{ name: 'a', manager_type: 'environment', secret_path: 'X', allow_all_workspaces: true, allowed_workspaces: [wsA] }, 'allowed_workspaces'],
    ]
    cases.push(
      [{ name: 'n'.repeat(256), manager_type: 'environment', secret_path: 'X' }, 'name'],
      [{ name: 'a', slug: 's'.repeat(256), manager_type: 'environment', secret_path: 'X' }, 'slug'],
      [{ name: 'a', manager_type: 'environment', secret_path: 'X'.repeat(1025) }, 'secret_path'],
      [{ name: 'a', manager_type: 'kubernetes', secret_path: 'ok', secret_key: 'k'.repeat(256) }, 'secret_key'],
      [{ name: 'a', manager_type: 'environment', secret_path: 'X', allowed_workspaces: ['nowhere'] }, 'allowed_workspaces[0]'],
    )
    const rows = async () => JSON.stringify(await h.db.query('SELECT * FROM secret_references ORDER BY id'))
    const before = await rows()
    for (const [body, param] of cases) {
      const response = await h.call('POST', '/v1/secret-references', h.ownerKey, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    const existing = (await h.store.secretReferences.list(h.orgId)).data[0]!
    for (const [body, param] of [
      [{ manager_type: 'vault' }, 'manager_type'],
      [{ secret_path: 'GATEHOUSE_KEY_PEPPER' }, 'secret_path'],
      [{ name: '' }, 'name'],
    ] as Array<[Record<string, unknown>, string]>) {
      const response = await h.call('PUT', `/v1/secret-references/${existing.id}`, h.ownerKey, body)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    expect(await rows()).toEqual(before)
  })
})

describe('bounds', () => {
  const rows = async (): Promise<string> => JSON.stringify([
    await h.db.query('SELECT * FROM providers ORDER BY id'),
    await h.db.query('SELECT * FROM integrations ORDER BY id'),
  ])

  it('answers every numeric and enum bound of providers and integrations with 400 AB01 naming the field, storing nothing', async () => {
    await h.call('POST', '/v1/integrations', adminKey, { name: 'Bounds', ai_provider_id: 'openai', slug: 'bounds', key: 'sk-bounds-1234567890' })
    await h.call('POST', '/v1/secret-references', h.ownerKey, { name: 'Bounds ref', slug: 'bounds-ref', manager_type: 'environment', secret_path: 'BOUNDS' })
    const before = await rows()
    const vk = { name: 'ok', provider: 'openai', key: 'sk-ok-1234567890', workspace_id: wsA }
    const providerCases: Array<[Record<string, unknown>, string]> = [
      [{ ...vk, name: 'n'.repeat(256) }, 'name'],
      [{ ...vk, name: '' }, 'name'],
      [{ ...vk, slug: 's'.repeat(256) }, 'slug'],
      [{ ...vk, slug: 'Upper Case' }, 'slug'],
      [{ ...vk, provider: 'skynet' }, 'provider'],
      [{ name: 'ok', workspace_id: wsA }, 'integration_id'],
      [{ ...vk, integration_id: 'bounds' }, 'integration_id'],
      [{ ...vk, usage_limits: { credit_limit: -1 } }, 'usage_limits.credit_limit'],
      [{ ...vk, usage_limits: { credit_limit: 1, type: 'requests' } }, 'usage_limits.type'],
      [{ ...vk, usage_limits: { credit_limit: 1, periodic_reset_days: 0 } }, 'usage_limits.periodic_reset_days'],
      [{ ...vk, usage_limits: { credit_limit: 1, periodic_reset_days: 366 } }, 'usage_limits.periodic_reset_days'],
      [{ ...vk, usage_limits: { credit_limit: 1, periodic_reset: 'daily' } }, 'usage_limits.periodic_reset'],
      [{ ...vk, rate_limits: [{ type: 'requests', unit: 'rps', value: 1 }] }, 'rate_limits[0].unit'],
      [{ ...vk, rate_limits: [{ type: 'requests', unit: 'rpm', value: -1 }] }, 'rate_limits[0].value'],
      [{ ...vk, rate_limits: { type: 'bytes', unit: 'rpm', value: 1 } }, 'rate_limits[0].type'],
      [{ ...vk, expires_at: 'tomorrow' }, 'expires_at'],
      [{ ...vk, tags: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v'])) }, 'tags'],
      [{ ...vk, tags: { team: 'v'.repeat(256) } }, 'tags.team'],
      [{ ...vk, base_url: 'ftp://example.com' }, 'base_url'],
      [{ ...vk, note: 'n'.repeat(2001) }, 'note'],
      [{ ...vk, secret_mappings: [{ target_field: 'key', secret_reference_id: 'bounds-ref', value_format: 'yaml' }] }, 'secret_mappings[0].value_format'],
      [{ ...vk, secret_mappings: [{ target_field: 'key', secret_reference_id: 'no-such-ref' }] }, 'secret_mappings[0].secret_reference_id'],
      [{ ...vk, secret_mappings: [{ target_field: 'key', secret_reference_id: 'bounds-ref' }, { target_field: 'key', secret_reference_id: 'bounds-ref' }] }, 'secret_mappings[1].target_field'],
      [{ ...vk, workspace_id: 'nowhere' }, 'workspace_id'],
      [{ ...vk, colour: 'blue' }, '(body)'],
    ]
    for (const [body, param] of providerCases) {
      for (const path of ['/v1/providers', '/v1/virtual-keys']) {
        const response = await h.call('POST', path, adminKey, body)
        expect(response.statusCode, `${path} ${JSON.stringify(body).slice(0, 120)}`).toBe(400)
        expect(response.json().error).toMatchObject({ code: 'AB01', param })
      }
    }
    const integrationCases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'n'.repeat(256), ai_provider_id: 'openai' }, 'name'],
      [{ name: 'ok', ai_provider_id: 'skynet' }, 'ai_provider_id'],
      [{ name: 'ok', ai_provider_id: 'openai', slug: 's'.repeat(256) }, 'slug'],
      [{ name: 'ok', ai_provider_id: 'openai', default_provider_slug: 'Bad Slug' }, 'default_provider_slug'],
      [{ name: 'ok', ai_provider_id: 'openai', create_default_provider: 'yes' }, 'create_default_provider'],
      [{ name: 'ok', ai_provider_id: 'openai', key: '' }, 'key'],
      [{ name: 'ok', ai_provider_id: 'openai', tags: { team: 5 } }, 'tags.team'],
    ]
    for (const [body, param] of integrationCases) {
      const response = await h.call('POST', '/v1/integrations', adminKey, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    for (const [path, body, param] of [
      ['/v1/integrations/bounds', { status: 'deleted' }, 'status'],
      ['/v1/integrations/bounds/models', { models: [{ slug: 'm', enabled: 'yes' }] }, 'models[0].enabled'],
      ['/v1/integrations/bounds/models', { models: [{ slug: '', enabled: true }] }, 'models[0].slug'],
      ['/v1/integrations/bounds/workspaces', { workspaces: [{ id: wsA, enabled: true, rate_limits: [{ type: 'requests', unit: 'rpy', value: 1 }] }] }, 'workspaces[0].rate_limits[0].unit'],
      ['/v1/integrations/bounds/workspaces', { workspaces: [{ id: wsA, enabled: true, usage_limits: [{ credit_limit: 1, periodic_reset_days: 400 }] }] }, 'workspaces[0].usage_limits[0].periodic_reset_days'],
      ['/v1/integrations/bounds/workspaces', { global_workspace_access: { enabled: 'sometimes' } }, 'global_workspace_access.enabled'],
      ['/v1/providers/bounds', { status: 'paused' }, 'status'],
      ['/v1/virtual-keys/bounds', { rate_limits: { type: 'requests', unit: 'rpm', value: 1.5 } }, 'rate_limits[0].value'],
    ] as Array<[string, Record<string, unknown>, string]>) {
      const response = await h.call('PUT', path, adminKey, body)
      expect(response.statusCode, `${path} ${JSON.stringify(body)}`).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    expect(await rows()).toEqual(before)
  })
})
