/**
 * Which providers may reach private networks (issue 10: SSRF through a provider's base URL): the
 * compiled snapshot says `public` for anything a workspace wrote, `private-allowed` only where an
 * operator declared the provider, the organisation setting allows it, or an organisation admin set
 * the provider option; a workspace principal cannot set that option for itself. An integration's
 * `configurations.custom_host` becomes its providers' address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALL_SCOPES, WORKSPACE_SCOPES } from '../identity/scopes.ts'
import { createHarness, type Harness } from '../admin/testing.ts'
import { compileSnapshot } from './snapshot.ts'

let h: Harness
let ws: string
let adminKey: string
let workspaceKey: string

beforeAll(async () => {
  h = await createHarness()
  ws = (await h.workspace('Net')).id
  adminKey = await h.key('organisation/service', { name: 'net admin', scopes: [...ALL_SCOPES] })
  workspaceKey = await h.key('workspace/service', { name: 'net ws', workspace_id: ws, scopes: [...WORKSPACE_SCOPES] })
})
afterAll(() => h.close())

async function compiled(slug: string) {
  const snapshot = await compileSnapshot(h.store, { generation: 1, clock: h.clock.read })
  return snapshot.providers.find((provider) => provider.slug === slug)
}

describe('provider network', () => {
  it('keeps a provider a workspace created on public networks, whatever its base URL', async () => {
    const created = await h.call('POST', '/v1/providers', workspaceKey, { name: 'Loop', slug: 'loop', provider: 'openai', key: 'sk-loop-0000000000', base_url: 'http://127.0.0.1:9/v1' })
    expect(created.statusCode).toBe(200)
    expect(await compiled('loop')).toMatchObject({ baseUrl: 'http://127.0.0.1:9/v1', network: 'public' })
  })

  it('refuses a workspace principal switching private networks on, through providers or integrations', async () => {
    for (const name of ['allowPrivateNetwork', 'allow_private_network']) {
      const provider = await h.call('POST', '/v1/providers', workspaceKey, { name: 'Self', slug: `self-${name.length}`, provider: 'openai', key: 'sk-self-0000000000', configurations: { [name]: 'true' } })
      expect(provider.statusCode).toBe(403)
      expect(provider.json()).toMatchObject({ error: { param: `configurations.${name}` } })
    }
    const update = await h.call('PUT', '/v1/providers/loop', workspaceKey, { configurations: { allowPrivateNetwork: 'true' } })
    expect(update.statusCode).toBe(403)
    const integration = await h.call('POST', '/v1/integrations', workspaceKey, { name: 'Self int', ai_provider_id: 'openai', workspace_id: ws, key: 'sk-int-000000000000', configurations: { allowPrivateNetwork: true } })
    expect(integration.statusCode).toBe(403)
    expect(integration.json()).toMatchObject({ error: { param: 'configurations.allowPrivateNetwork' } })
    expect(await compiled('loop')).toMatchObject({ network: 'public' })
  })

  it('lets an organisation admin allow it on one provider', async () => {
    const created = await h.call('POST', '/v1/providers', adminKey, { name: 'Lab', slug: 'lab', workspace_id: ws, provider: 'openai', key: 'sk-lab-0000000000', base_url: 'http://10.1.2.3/v1', configurations: { allowPrivateNetwork: 'true' } })
    expect(created.statusCode).toBe(200)
    expect(await compiled('lab')).toMatchObject({ network: 'private-allowed' })
  })

  it('allows it for providers an operator declared (Kubernetes or file)', async () => {
    await h.store.providers.upsert({ organizationId: h.orgId, workspaceId: ws, slug: 'declared', name: 'Declared', kind: 'openai', baseUrl: 'http://vllm.models.svc:8000/v1', credentials: { apiKey: 'x' }, managedBy: 'kubernetes' })
    expect(await compiled('declared')).toMatchObject({ network: 'private-allowed' })
  })

  it('allows it everywhere when the organisation setting says so, and only organisation principals may set that', async () => {
    const refused = await h.call('PUT', '/v1/organisation/settings', workspaceKey, { network_settings: { allow_private_networks: true } })
    expect(refused.statusCode).toBe(403)
    expect(await compiled('loop')).toMatchObject({ network: 'public' })
    const set = await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { network_settings: { allow_private_networks: true } })
    expect(set.statusCode).toBe(200)
    expect(await compiled('loop')).toMatchObject({ network: 'private-allowed' })
    await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { network_settings: { allow_private_networks: false } })
    expect(await compiled('loop')).toMatchObject({ network: 'public' })
  })
})

describe("an integration's configurations.custom_host", () => {
  it("becomes the address of the integration's providers (still public unless allowed)", async () => {
    const created = await h.call('POST', '/v1/integrations', adminKey, {
      name: 'Hosted', slug: 'hosted', ai_provider_id: 'openai', key: 'sk-hosted-00000000000', configurations: { custom_host: 'https://llm.internal.example/v1' },
      create_default_provider: true, default_provider_slug: 'hosted-default',
    })
    expect(created.statusCode).toBe(200)
    expect(await compiled('hosted-default')).toMatchObject({ baseUrl: 'https://llm.internal.example/v1', network: 'public', status: 'active' })
  })

  it('disables the providers when it is not an http(s) URL, rather than failing the snapshot', async () => {
    await h.call('POST', '/v1/integrations', adminKey, {
      name: 'Bad host', slug: 'bad-host', ai_provider_id: 'openai', key: 'sk-bad-0000000000000', configurations: { custom_host: 'file:///etc/passwd' },
      create_default_provider: true, default_provider_slug: 'bad-host-default',
    })
    expect(await compiled('bad-host-default')).toMatchObject({ status: 'disabled' })
  })
})
