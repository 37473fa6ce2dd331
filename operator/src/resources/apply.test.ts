/**
 * Applying Deployment, Guardrail, RateLimitPolicy and UsageLimitPolicy resources: from a resources
 * file in embedded mode (in-memory store), idempotently, deleted again, and refused with the field
 * named when a reference dangles.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { GatehouseResource } from '@gatehouse/crds'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { startEmbedded, type EmbeddedGatehouse } from '../cli/embedded.ts'
import { compileSnapshot } from '../compile/snapshot.ts'
import { ensureOrganization } from '../identity/bootstrap.ts'
import { openMigratedPglite, openTestPgliteStore } from '../store/testing.ts'
import { applyResource, applyResources, deleteResource, ResourceError, type ApplyContext, type SourcedResource } from './apply.ts'
import { loadResourceFiles } from './files.ts'

const RESOURCES = `
apiVersion: gatehouse.dev/v1alpha1
kind: Workspace
metadata: { name: team-a }
spec: { slug: team-a-slug }
---
apiVersion: gatehouse.dev/v1alpha1
kind: Config
metadata: { name: routing }
spec: { slug: routing-slug, config: { strategy: { mode: fallback }, targets: [{ provider: '@p' }] } }
---
apiVersion: gatehouse.dev/v1alpha1
kind: Provider
metadata: { name: p }
spec: { kind: ollama, baseUrl: 'http://127.0.0.1:11434/v1' }
---
apiVersion: gatehouse.dev/v1alpha1
kind: Deployment
metadata: { name: prod }
spec: { name: Production, type: production, config: routing, workspaces: [team-a] }
---
apiVersion: gatehouse.dev/v1alpha1
kind: Guardrail
metadata: { name: no-cards }
spec:
  workspace: team-a
  hooks: [beforeRequestHook]
  checks:
    - id: default.regexMatch
      parameters: { rule: "\\\\d{16}", not: true }
  actions: { deny: true, onFail: { feedback: { value: -10 } } }
---
apiVersion: gatehouse.dev/v1alpha1
kind: RateLimitPolicy
metadata: { name: per-key-rpm }
spec:
  workspace: team-a
  conditions: [{ key: workspace_id, value: team-a-slug }]
  groupBy: [{ key: api_key }]
  type: requests
  unit: rpm
  value: 100
  shadowMode: true
  failureMode: FailOpen
---
apiVersion: gatehouse.dev/v1alpha1
kind: UsageLimitPolicy
metadata: { name: budget }
spec:
  name: Monthly budget
  conditions: [{ key: workspace_id, value: '*' }]
  groupBy: [{ key: metadata.user }]
  type: cost
  creditLimit: 50
  alertThreshold: 40
  periodicReset: monthly
  failureMode: FailClosed
`

let directory: string
let gatehouse: EmbeddedGatehouse
let items: SourcedResource[]
let context: ApplyContext

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'gatehouse-apply-'))
  const path = join(directory, 'resources.yaml')
  await writeFile(path, RESOURCES)
  gatehouse = await startEmbedded({ host: '127.0.0.1', port: 0, dataDir: null, openDatabase: openMigratedPglite, resourceFiles: [path], env: {}, logger: pino({ level: 'silent' }) })
  items = (await loadResourceFiles([path])).resources
  const organization = await gatehouse.store.organizations.first()
  context = { organizationId: organization!.id, managedBy: 'file', resolveSecret: () => null, describeMissingSecret: () => 'no secrets here' }
}, 60_000)

afterAll(async () => {
  await gatehouse?.close()
  if (directory) await rm(directory, { recursive: true, force: true })
})

/** Every row the four kinds wrote, as stored (timestamps and versions included). */
async function rows(): Promise<Record<string, unknown>> {
  const store = gatehouse.store
  const org = context.organizationId
  return {
    deployment: await store.deployments.get(org, 'prod'),
    guardrail: await store.guardrails.get(org, 'no-cards'),
    rate: (await store.policies.list(org, 'rate_limits', {}, 0, 100)).data,
    usage: (await store.policies.list(org, 'usage_limits', {}, 0, 100)).data,
  }
}

const item = (name: string): SourcedResource => items.find((entry) => entry.resource.metadata.name === name)!
const workspaces = new Map([['team-a', 'team-a-slug']])

function resource(text: string): SourcedResource {
  return { resource: parse(text) as GatehouseResource, source: 'test.yaml' }
}

describe('resources applied from a file in embedded mode', () => {
  it('stores a Deployment managed by the file, its config and workspaces resolved by name', async () => {
    const org = context.organizationId
    const deployment = await gatehouse.store.deployments.get(org, 'prod')
    const config = await gatehouse.store.configs.get(org, 'routing-slug')
    const workspace = await gatehouse.store.workspaces.get(org, 'team-a-slug')
    expect(deployment).toMatchObject({ name: 'Production', type: 'production', managedBy: 'file', configId: config!.id, allowAllWorkspaces: false, allowedWorkspaceIds: [workspace!.id] })
  })

  it('stores a Guardrail with the admin API\'s defaults for checks and actions', async () => {
    const org = context.organizationId
    const guardrail = await gatehouse.store.guardrails.get(org, 'no-cards')
    const workspace = await gatehouse.store.workspaces.get(org, 'team-a-slug')
    expect(guardrail).toMatchObject({
      managedBy: 'file', workspaceId: workspace!.id, name: 'no-cards', hooks: ['beforeRequestHook'], version: 1,
      checks: [{ id: 'default.regexMatch', is_enabled: true, parameters: { rule: '\\d{16}', not: true } }],
      actions: { deny: true, async: false, on_fail: { feedback: { value: -10, weight: 1, metadata: '' } }, on_success: { feedback: { value: 5, weight: 1, metadata: '' } } },
    })
  })

  it('stores both kinds of policy, the budget with its next monthly reset', async () => {
    const { rate, usage } = (await rows()) as { rate: unknown[]; usage: Array<{ nextUsageResetAt: string | null }> }
    expect(rate).toEqual([expect.objectContaining({ name: 'per-key-rpm', managedBy: 'file', type: 'requests', unit: 'rpm', value: 100, creditLimit: null })])
    expect(usage).toEqual([expect.objectContaining({ name: 'Monthly budget', managedBy: 'file', workspaceId: null, type: 'cost', creditLimit: 50, alertThreshold: 40, periodicReset: 'monthly' })])
    expect(new Date(usage[0]!.nextUsageResetAt!).getUTCDate()).toBe(1)
  })

  it('carries shadowMode and failureMode from the CRDs through the store into the snapshot', async () => {
    const { rate, usage } = (await rows()) as { rate: unknown[]; usage: unknown[] }
    expect(rate).toEqual([expect.objectContaining({ shadow: true, failureMode: 'open' })])
    expect(usage).toEqual([expect.objectContaining({ shadow: false, failureMode: 'closed' })])
    const snapshot = await compileSnapshot(gatehouse.store, { generation: 1 })
    const limits = snapshot.limits.filter((limit) => limit.source === 'policy')
    expect(limits.map((limit) => [limit.name, limit.shadow, limit.failureMode]).sort()).toEqual([['Monthly budget', false, 'closed'], ['per-key-rpm', true, 'open']])
  })

  it('applying the same resources again changes nothing', async () => {
    const before = await rows()
    await applyResources(gatehouse.store, context, items)
    await applyResource(gatehouse.store, context, item('no-cards'), workspaces)
    expect(await rows()).toEqual(before)
  })

  it('a changed guardrail check is a new version; a changed policy is updated in place', async () => {
    const changed = structuredClone(items)
    const guardrail = changed.find((entry) => entry.resource.kind === 'Guardrail')!.resource as { spec: { checks: Array<{ parameters: Record<string, unknown> }> } }
    guardrail.spec.checks[0]!.parameters.rule = '\\d{15}'
    const policy = changed.find((entry) => entry.resource.kind === 'RateLimitPolicy')!.resource as { spec: { value: number } }
    policy.spec.value = 200
    const { rate: [before] } = (await rows()) as { rate: Array<{ id: string }> }
    await applyResources(gatehouse.store, context, changed)
    const after = (await rows()) as { guardrail: { version: number }; rate: Array<{ id: string; value: number }> }
    expect(after.guardrail.version).toBe(2)
    expect(after.rate).toEqual([expect.objectContaining({ id: before!.id, value: 200 })])
    await applyResources(gatehouse.store, context, items)
  })

  it('a row someone else manages is a Conflict, not taken over', async () => {
    const org = context.organizationId
    const kubernetes: ApplyContext = { ...context, managedBy: 'kubernetes' }
    await expect(applyResource(gatehouse.store, kubernetes, item('prod'), workspaces, new Map([['routing', 'routing-slug']])))
      .rejects.toMatchObject({ reason: 'Conflict', field: 'metadata.name' })
    expect((await gatehouse.store.deployments.get(org, 'prod'))?.managedBy).toBe('file')
  })

  it.each(['prod', 'no-cards', 'per-key-rpm', 'budget'])('deleteResource removes %s, and a second delete finds nothing', async (name) => {
    const before = await rows()
    expect(await deleteResource(gatehouse.store, context, item(name), workspaces, null)).toBe(true)
    expect(await deleteResource(gatehouse.store, context, item(name), workspaces, null)).toBe(false)
    expect(await rows()).not.toEqual(before)
    await applyResources(gatehouse.store, context, items)
  })
})

describe('dangling references name the field', () => {
  const cases: Array<{ text: string; object: string; field: string }> = [
    { text: 'kind: Deployment\nmetadata: { name: d }\nspec: { type: production, config: ghost }', object: 'Deployment/d', field: 'spec.config' },
    { text: 'kind: Deployment\nmetadata: { name: d }\nspec: { type: production, config: routing, workspaces: [team-a, ghost] }', object: 'Deployment/d', field: 'spec.workspaces[1]' },
    {
      text: 'kind: Guardrail\nmetadata: { name: g }\nspec: { workspace: ghost, hooks: [beforeRequestHook], checks: [{ id: default.isAllLowerCase }], actions: { deny: false, async: false } }',
      object: 'Guardrail/g', field: 'spec.workspace',
    },
    {
      text: 'kind: RateLimitPolicy\nmetadata: { name: r }\nspec: { workspace: ghost, conditions: [{ key: api_key, value: "*" }], groupBy: [{ key: api_key }], type: requests, unit: rpm, value: 1 }',
      object: 'RateLimitPolicy/r', field: 'spec.workspace',
    },
    {
      text: 'kind: UsageLimitPolicy\nmetadata: { name: u }\nspec: { workspace: ghost, conditions: [{ key: api_key, value: "*" }], groupBy: [{ key: api_key }], type: tokens, creditLimit: 10 }',
      object: 'UsageLimitPolicy/u', field: 'spec.workspace',
    },
  ]
  it.each(cases)('$object: $field', async ({ text, object, field }) => {
    const error = await applyResources(gatehouse.store, context, [...items, resource(`apiVersion: gatehouse.dev/v1alpha1\n${text}`)]).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ResourceError)
    expect(error).toMatchObject({ object, field, reason: 'RefNotFound' })
  })

  it('two policies with the same name in the same workspace are refused naming spec.name', async () => {
    const policy = (name: string): SourcedResource => resource(
      `apiVersion: gatehouse.dev/v1alpha1\nkind: RateLimitPolicy\nmetadata: { name: ${name} }\nspec: { name: Same, conditions: [{ key: api_key, value: "*" }], groupBy: [{ key: api_key }], type: requests, unit: rpm, value: 1 }`)
    await expect(applyResources(gatehouse.store, context, [policy('one'), policy('two')])).rejects.toMatchObject({ object: 'RateLimitPolicy/two', field: 'spec.name' })
  })

  it('a guardrail check the catalogue does not know is InvalidSpec naming the check', async () => {
    const text = 'apiVersion: gatehouse.dev/v1alpha1\nkind: Guardrail\nmetadata: { name: g }\nspec: { hooks: [beforeRequestHook], checks: [{ id: default.nope }], actions: { deny: false, async: false } }'
    await expect(applyResources(gatehouse.store, context, [resource(text)])).rejects.toMatchObject({ field: 'spec.checks[0].id', reason: 'InvalidSpec' })
  })
})

describe('the Kubernetes examples', () => {
  it('apply as one set (every kind), and a second apply changes nothing', async () => {
    const folder = resolve(import.meta.dirname, '../../../examples/k8s')
    const paths = (await readdir(folder)).filter((name) => name.endsWith('.yaml')).map((name) => join(folder, name))
    const examples = (await loadResourceFiles(paths)).resources
    expect(new Set(examples.map((entry) => entry.resource.kind))).toEqual(new Set(['Workspace', 'Provider', 'Config', 'Deployment', 'Guardrail', 'RateLimitPolicy', 'UsageLimitPolicy']))
    const store = await openTestPgliteStore()
    try {
      const organizationId = (await ensureOrganization(store)).id
      const kubernetes: ApplyContext = { organizationId, managedBy: 'kubernetes', resolveSecret: () => 'sk-example', describeMissingSecret: () => 'unused' }
      await applyResources(store, kubernetes, examples)
      const snapshot = async (): Promise<unknown> => [
        (await store.deployments.list(organizationId)).data,
        (await store.guardrails.list(organizationId, undefined, 0, 100)).data,
        (await store.policies.list(organizationId, 'rate_limits', {}, 0, 100)).data,
        (await store.policies.list(organizationId, 'usage_limits', {}, 0, 100)).data,
      ]
      const before = await snapshot()
      await applyResources(store, kubernetes, examples)
      expect(await snapshot()).toEqual(before)
    } finally {
      await store.close()
    }
  })
})
