/**
 * The compiler over integrations, secret references and deployments, on PGlite and PostgreSQL:
 * providers onto integrations take their credential, options, models and workspace access;
 * credential fields mapped onto secret references are read at compile time (and a missing one
 * disables the provider instead of sending requests without it); a deployment's snapshot holds
 * only the workspaces it serves; the persisted (sealed) snapshot carries no plain secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SNAPSHOT_SEAL_CONTEXT, validateSnapshot } from '@gatehouse/gateway/snapshot'
import { parseKeyring } from '../crypto/envelope.ts'
import { ensureOrganization } from '../identity/bootstrap.ts'
import type { Store } from '../store/index.ts'
import { TEST_ENCRYPTION_KEY, testBackends } from '../store/testing.ts'
import { compileSnapshot } from './snapshot.ts'
import type { SecretLocation } from './secrets.ts'

const backends = await testBackends()

for (const backend of backends) {
  describe.skipIf(backend.skip !== null)(`compiling admin resources on ${backend.name}`, () => {
    let store: Store
    let dispose: () => Promise<void>
    let org: string
    let wsA: string
    let wsB: string
    const secrets = new Map<string, string>([['env:ANTHROPIC_KEY', 'sk-ant-FROM-ENV-0001'], ['k8s:gatehouse/keys#bedrock', '{"secret":"aws-FROM-K8S"}']])
    const reads: SecretLocation[] = []
    const readSecret = async (location: SecretLocation): Promise<string | null> => {
      reads.push(location)
      return secrets.get(location.managerType === 'environment' ? `env:${location.path}` : `k8s:${location.path}#${location.key}`) ?? null
    }

    beforeAll(async () => {
      ({ store, dispose } = await backend.open())
      org = (await ensureOrganization(store)).id
      wsA = (await store.workspaces.create({ organizationId: org, slug: 'a', name: 'A' })).id
      wsB = (await store.workspaces.create({ organizationId: org, slug: 'b', name: 'B' })).id
    })
    afterAll(() => dispose())

    it('gives providers onto an integration its credential, options, models and workspace access', async () => {
      const integration = await store.integrations.create({
        organizationId: org, workspaceId: null, slug: 'oai', name: 'OpenAI', kind: 'openai', credentials: { apiKey: 'sk-integration-0001' },
        options: { organization: 'org-1' }, allowAllModels: false, models: [{ slug: 'gpt-4o', enabled: true }, { slug: 'gpt-3.5', enabled: false }],
        globalWorkspaceAccess: { enabled: false }, workspaceAccess: [{ id: wsA, enabled: true }, { id: wsB, enabled: false }],
      })
      await store.providers.upsert({ organizationId: org, workspaceId: null, slug: 'oai', name: 'OpenAI', kind: 'openai', integrationId: integration.id })
      await store.providers.upsert({ organizationId: org, workspaceId: wsB, slug: 'oai-b', name: 'OpenAI B', kind: 'openai', integrationId: integration.id })
      const snapshot = await compileSnapshot(store, { generation: 1, readSecret })
      const shared = snapshot.providers.find((p) => p.slug === 'oai')!
      expect(shared).toMatchObject({ kind: 'openai', credentials: { apiKey: 'sk-integration-0001' }, options: { organization: 'org-1' }, allowAllWorkspaces: false, allowedWorkspaceIds: [wsA], models: ['gpt-4o'], status: 'active' })
      // Workspace B is not enabled on the integration: its provider is compiled disabled.
      expect(snapshot.providers.find((p) => p.slug === 'oai-b')).toMatchObject({ status: 'disabled' })
      await store.integrations.update(org, integration.id, { models: [{ slug: 'gpt-4o', enabled: false }] })
      const noModels = (await compileSnapshot(store, { generation: 2, readSecret })).providers.find((p) => p.slug === 'oai')!
      expect(noModels).toMatchObject({ models: [], status: 'disabled' })
      await store.integrations.update(org, integration.id, { models: [{ slug: 'gpt-4o', enabled: true }] })
      await store.integrations.update(org, integration.id, { status: 'archived' })
      expect((await compileSnapshot(store, { generation: 2, readSecret })).providers.find((p) => p.slug === 'oai')!.status).toBe('disabled')
    })

    it('reads credential fields mapped onto secret references, and disables a provider whose secret is missing', async () => {
      const env = await store.secretReferences.create({ organizationId: org, slug: 'anth-env', name: 'Anthropic', managerType: 'environment', secretPath: 'ANTHROPIC_KEY' })
      const k8s = await store.secretReferences.create({ organizationId: org, slug: 'bedrock', name: 'Bedrock', managerType: 'kubernetes', secretPath: 'gatehouse/keys', secretKey: 'bedrock' })
      const missing = await store.secretReferences.create({ organizationId: org, slug: 'missing', name: 'Missing', managerType: 'environment', secretPath: 'NOT_SET' })
      await store.providers.upsert({ organizationId: org, workspaceId: wsA, slug: 'anth', name: 'Anthropic', kind: 'anthropic', secretMappings: [{ target_field: 'key', secret_reference_id: env.id }] })
      const bedrock = await store.integrations.create({
        organizationId: org, workspaceId: null, slug: 'bedrock', name: 'Bedrock', kind: 'bedrock', options: { region: 'eu-west-1' },
        secretMappings: [{ target_field: 'aws_secret_access_key', secret_reference_id: k8s.id, value_format: 'json' }, { target_field: 'aws_region', secret_reference_id: env.id }],
      })
      await store.providers.upsert({ organizationId: org, workspaceId: null, slug: 'bedrock', name: 'Bedrock', kind: 'bedrock', integrationId: bedrock.id })
      await store.providers.upsert({ organizationId: org, workspaceId: wsA, slug: 'broken', name: 'Broken', kind: 'openai', secretMappings: [{ target_field: 'key', secret_reference_id: missing.id }] })
      const problems: Array<{ path: string; message: string }> = []
      const snapshot = await compileSnapshot(store, { generation: 3, readSecret, onProblem: (p) => problems.push(p) })
      expect(snapshot.providers.find((p) => p.slug === 'anth')).toMatchObject({ credentials: { apiKey: 'sk-ant-FROM-ENV-0001' }, status: 'active' })
      expect(snapshot.providers.find((p) => p.slug === 'bedrock')).toMatchObject({
        credentials: { secretAccessKey: '{"secret":"aws-FROM-K8S"}' }, options: { region: 'sk-ant-FROM-ENV-0001' }, status: 'active',
      })
      expect(reads).toContainEqual({ managerType: 'kubernetes', path: 'gatehouse/keys', key: 'bedrock' })
      expect(snapshot.providers.find((p) => p.slug === 'broken')).toMatchObject({ credentials: {}, status: 'disabled' })
      expect(problems).toContainEqual({ path: 'providers.broken', message: 'key: environment variable NOT_SET is not set' })
      expect(JSON.stringify(problems)).not.toContain('FROM-ENV')
      // A JSON secret's field, picked by secret_key.
      await store.providers.upsert({ organizationId: org, workspaceId: wsA, slug: 'picked', name: 'Picked', kind: 'bedrock', secretMappings: [{ target_field: 'aws_secret_access_key', secret_reference_id: k8s.id }] })
      secrets.set('env:BEDROCK_JSON', '{"secret":"from-json-field"}')
      const jsonEnv = await store.secretReferences.create({ organizationId: org, slug: 'json-env', name: 'JSON', managerType: 'environment', secretPath: 'BEDROCK_JSON', secretKey: 'secret' })
      await store.providers.upsert({ organizationId: org, workspaceId: wsA, slug: 'json', name: 'JSON', kind: 'bedrock', secretMappings: [{ target_field: 'aws_secret_access_key', secret_reference_id: jsonEnv.id }] })
      const again = await compileSnapshot(store, { generation: 4, readSecret })
      expect(again.providers.find((p) => p.slug === 'json')!.credentials).toEqual({ secretAccessKey: 'from-json-field' })
      // What a gateway persists is the sealed snapshot: no plain secret in it.
      const sealed = parseKeyring(TEST_ENCRYPTION_KEY).seal(JSON.stringify(again), SNAPSHOT_SEAL_CONTEXT)
      for (const secret of ['sk-ant-FROM-ENV-0001', 'aws-FROM-K8S', 'from-json-field', 'sk-integration-0001']) expect(sealed).not.toContain(secret)
    })

    it('compiles a deployment\'s snapshot with only the workspaces it serves, and its config', async () => {
      const config = await store.configs.upsert({ organizationId: org, workspaceId: null, slug: 'deploy', name: 'Deploy', config: { retry: { attempts: 1 } } })
      await store.configs.upsert({ organizationId: org, workspaceId: wsB, slug: 'b-only', name: 'B only', config: { retry: { attempts: 1 } } })
      await store.deployments.create({ organizationId: org, slug: 'eu', name: 'EU', type: 'production', configId: config.id, allowAllWorkspaces: false, allowedWorkspaceIds: [wsA] })
      const full = await compileSnapshot(store, { generation: 5, readSecret })
      expect(full.deployment).toBeNull()
      expect(full.workspaces.map((w) => w.id)).toEqual(expect.arrayContaining([wsA, wsB]))
      const eu = await compileSnapshot(store, { generation: 5, deployment: 'eu', readSecret })
      expect(validateSnapshot(eu).ok).toBe(true)
      expect(eu.deployment).toMatchObject({ slug: 'eu', type: 'production', configId: config.id })
      expect(eu.workspaces.map((w) => w.id)).toEqual([wsA])
      expect(eu.providers.some((p) => p.workspaceId === wsB)).toBe(false)
      expect(eu.configs.some((c) => c.slug === 'b-only')).toBe(false)
      for (const provider of eu.providers.filter((p) => p.workspaceId === null)) {
        expect(provider.allowAllWorkspaces).toBe(false)
        expect(provider.allowedWorkspaceIds.every((id) => id === wsA)).toBe(true)
      }
      await expect(compileSnapshot(store, { generation: 6, deployment: 'nowhere', readSecret })).rejects.toThrow(/no deployment nowhere/)
    })
  })
}
