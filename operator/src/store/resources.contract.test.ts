/**
 * The admin-resource repositories on PGlite and PostgreSQL: sealed credentials (and their
 * re-sealing under a new primary key), tag containment filters, config versions, guardrail
 * versions, deployment workspace filters, numeric policy columns and secret-reference usages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateEncryptionKey } from '../crypto/envelope.ts'
import { ensureOrganization } from '../identity/bootstrap.ts'
import { openStore, type Store } from './index.ts'
import { TEST_ENCRYPTION_KEY, testBackends } from './testing.ts'

const backends = await testBackends()

for (const backend of backends) {
  describe.skipIf(backend.skip !== null)(`admin resources on ${backend.name}`, () => {
    let store: Store
    let dispose: () => Promise<void>
    let url: string | undefined
    let org: string
    let ws: string

    beforeAll(async () => {
      ({ store, dispose, url } = await backend.open())
      org = (await ensureOrganization(store)).id
      ws = (await store.workspaces.create({ organizationId: org, slug: 'w', name: 'W' })).id
    })
    afterAll(() => dispose())

    it('filters integrations and providers by tag containment', async () => {
      await store.integrations.create({ organizationId: org, workspaceId: null, slug: 'i1', name: 'I1', kind: 'openai', tags: { team: 'search', env: 'prod' } })
      await store.integrations.create({ organizationId: org, workspaceId: ws, slug: 'i2', name: 'I2', kind: 'groq', tags: { team: 'ads' } })
      expect((await store.integrations.list(org, { tags: { team: 'search' } })).data.map((i) => i.slug)).toEqual(['i1'])
      expect((await store.integrations.list(org, { workspaceIds: [ws] })).data.map((i) => i.slug)).toEqual(['i2'])
      expect((await store.integrations.list(org, { workspaceIds: null })).data.map((i) => i.slug)).toEqual(['i1'])
      await store.providers.upsert({ organizationId: org, workspaceId: ws, slug: 'p1', name: 'P1', kind: 'openai', tags: { team: 'search' } })
      expect((await store.providers.search(org, { tags: { team: 'search' } }, 0, 10)).data.map((p) => p.slug)).toEqual(['p1'])
      expect((await store.providers.search(org, { tags: { team: 'other' } }, 0, 10)).total).toBe(0)
    })

    it('keeps every config version and bumps guardrail versions on content changes', async () => {
      const v1 = await store.configs.upsert({ organizationId: org, workspaceId: null, slug: 'c', name: 'C', config: { retry: { attempts: 1 } } })
      const v2 = await store.configs.upsert({ organizationId: org, workspaceId: null, slug: 'c', name: 'C', config: { retry: { attempts: 2 } } })
      expect(v2).toMatchObject({ id: v1.id, version: 2 })
      expect((await store.configs.versions(v1.id)).map((v) => [v.version, v.config])).toEqual([[2, { retry: { attempts: 2 } }], [1, { retry: { attempts: 1 } }]])
      expect((await store.configs.version(v1.id, v1.versionId!))?.version).toBe(1)
      const g = await store.guardrails.create({ organizationId: org, workspaceId: ws, slug: 'g', name: 'G', checks: [{ id: 'default.isAllLowerCase' }], actions: {}, hooks: ['beforeRequestHook'] })
      const renamed = (await store.guardrails.update(org, g.id, { name: 'G2' }))!
      expect(renamed).toMatchObject({ version: 1, versionId: g.versionId })
      const changed = (await store.guardrails.update(org, g.id, { checks: [{ id: 'default.alluppercase' }] }))!
      expect(changed.version).toBe(2)
      expect(changed.versionId).not.toBe(g.versionId)
    })

    it('filters deployments by served workspace and reads numeric policy columns as numbers', async () => {
      await store.deployments.create({ organizationId: org, slug: 'all', name: 'All', type: 'production' })
      await store.deployments.create({ organizationId: org, slug: 'only', name: 'Only', type: 'non-production', allowAllWorkspaces: false, allowedWorkspaceIds: [ws] })
      await store.deployments.create({ organizationId: org, slug: 'none', name: 'None', type: 'non-production', allowAllWorkspaces: false })
      expect((await store.deployments.list(org, { workspaceId: ws })).data.map((d) => d.slug)).toEqual(['all', 'only'])
      expect((await store.deployments.list(org, { type: 'non-production' })).total).toBe(2)
      const policy = await store.policies.create({ organizationId: org, workspaceId: null, kind: 'usage_limits', conditions: [{ key: 'api_key', value: '*' }], groupBy: [{ key: 'api_key' }], type: 'cost', creditLimit: 12.5, alertThreshold: 10 })
      expect(await store.policies.get(org, 'usage_limits', policy.id)).toMatchObject({ creditLimit: 12.5, alertThreshold: 10 })
      expect(await store.policies.get(org, 'rate_limits', policy.id)).toBeNull()
    })

    it('finds the integrations and providers that use a secret reference', async () => {
      const reference = await store.secretReferences.create({ organizationId: org, slug: 'ref', name: 'Ref', managerType: 'environment', secretPath: 'X' })
      await store.providers.upsert({ organizationId: org, workspaceId: null, slug: 'uses', name: 'Uses', kind: 'openai', secretMappings: [{ target_field: 'key', secret_reference_id: reference.id }] })
      expect(await store.secretReferences.usages(org, reference.id)).toEqual([{ type: 'provider', slug: 'uses' }])
    })

    it('re-seals credentials under a new primary key', async () => {
      const integration = await store.integrations.create({ organizationId: org, workspaceId: null, slug: 'sealed', name: 'Sealed', kind: 'openai', credentials: { apiKey: 'sk-sealed-000000001' } })
      const provider = await store.providers.upsert({ organizationId: org, workspaceId: null, slug: 'sealed', name: 'Sealed', kind: 'openai', credentials: { apiKey: 'sk-sealed-000000002' } })
      const next = `next:${generateEncryptionKey()}`
      const rotated = backend.name === 'postgres'
        ? await openStore({ kind: 'postgres', url: url!, encryptionKey: `${next},${TEST_ENCRYPTION_KEY}`, maxConnections: 2 })
        : null
      // PGlite in memory has one handle: the same store's rows are checked through its own keyring.
      const target = rotated ?? store
      const report = await target.credentials.reseal()
      if (rotated) {
        expect(report.primaryKeyId).toBe('next')
        expect(report.resealed.integrations).toBeGreaterThan(0)
        expect((await rotated.integrations.get(org, 'sealed'))!.credentialsKeyId).toBe('next')
        expect(await rotated.providers.decryptedCredentials(org, provider.id)).toEqual({ apiKey: 'sk-sealed-000000002' })
        expect((await rotated.credentials.status()).stale).toEqual({ providers: 0, integrations: 0, mcp_integrations: 0, agent_integrations: 0 })
        await rotated.close()
      } else {
        expect(report.resealed).toEqual({ providers: 0, integrations: 0, mcp_integrations: 0, agent_integrations: 0 })
        expect(await store.integrations.decryptedCredentials(org, integration.id)).toEqual({ apiKey: 'sk-sealed-000000001' })
      }
    })
  })
}
