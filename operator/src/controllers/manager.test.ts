/**
 * The controllers against the in-memory KubeClient and an in-memory admin store (PGlite), with the
 * real snapshot publisher and gateway registry: conditions, Events, finalizers, reference
 * indexes and leader gating, without a cluster. The same paths run against a real API server in
 * test/k8s/operator.test.ts.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import pino from 'pino'
import { GROUP, VERSION, type Condition } from '@gatehouse/crds'
import { compileSnapshot } from '../compile/snapshot.ts'
import { GatewayRegistry } from '../distribution/gateway-registry.ts'
import { SnapshotPublisher } from '../distribution/publisher.ts'
import { ensureOrganization } from '../identity/bootstrap.ts'
import type { Store } from '../store/index.ts'
import { openTestPgliteStore } from '../store/testing.ts'
import { FakeKubeClient } from '../kube/fake-client.ts'
import { SECRETS, type KubeObject } from '../kube/client.ts'
import { FINALIZER, resourceType } from './kinds.ts'
import { ControllerManager } from './manager.ts'

const NS = 'team'
// One in-memory database for the file (it is slow to start); each test uses its own names.
let store: Store
let client: FakeKubeClient
let registry: GatewayRegistry
let publisher: SnapshotPublisher
let manager: ControllerManager
let organizationId: string

function cr(kind: string, name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { name, namespace: NS }, spec }
}

function secret(name: string, value: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS }, data: { apiKey: Buffer.from(value).toString('base64') } }
}

function conditionOf(kind: 'Workspace' | 'Provider' | 'Config' | 'RateLimitPolicy' | 'Deployment', name: string, type: string): Condition | undefined {
  const object = client.peek(resourceType(kind), NS, name)
  return (object?.status as { conditions?: Condition[] } | undefined)?.conditions?.find((c) => c.type === type)
}

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

beforeAll(async () => {
  store = await openTestPgliteStore()
  organizationId = (await ensureOrganization(store)).id
})

afterAll(async () => {
  await store.close()
})

beforeEach(async () => {
  client = new FakeKubeClient()
  registry = new GatewayRegistry()
  publisher = new SnapshotPublisher((generation) => compileSnapshot(store, { generation }))
  await publisher.publish()
  manager = new ControllerManager({
    client,
    store,
    organizationId,
    publisher,
    registry,
    logger: pino({ level: 'silent' }),
    namespace: null,
    missingReferenceRetryMs: 60_000,
  })
  await manager.start()
})

afterEach(async () => {
  await manager.stop()
})

describe('ControllerManager', () => {
  it('writes nothing while it is not the leader, and everything once it is', async () => {
    client.apply(resourceType('Workspace'), cr('Workspace', 'team-a', { name: 'Team A' }))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await store.workspaces.get(organizationId, 'team-a')).toBeNull()
    manager.startReconciling()
    await eventually(() => conditionOf('Workspace', 'team-a', 'Accepted')?.status === 'True')
    expect(await store.workspaces.get(organizationId, 'team-a')).toMatchObject({ name: 'Team A', managedBy: 'kubernetes' })
    expect(client.peek(resourceType('Workspace'), NS, 'team-a')!.metadata.finalizers).toEqual([FINALIZER])
  })

  it('refuses a Provider without its Secret once (one Warning Event), then accepts it when the Secret appears', async () => {
    manager.startReconciling()
    client.apply(resourceType('Workspace'), cr('Workspace', 'team-b', {}))
    client.apply(resourceType('Provider'), cr('Provider', 'sim', { kind: 'openai', workspace: 'team-b', secretRef: { name: 'creds', key: 'apiKey' } }))
    await eventually(() => conditionOf('Provider', 'sim', 'Accepted')?.reason === 'SecretNotFound')
    expect(conditionOf('Provider', 'sim', 'Ready')).toMatchObject({ status: 'False', reason: 'SecretNotFound', observedGeneration: 1 })
    expect(conditionOf('Provider', 'sim', 'Programmed')).toMatchObject({ status: 'False', reason: 'NotAccepted' })
    // A resync of the same refusal emits no second Event.
    client.apply(resourceType('Provider'), { ...cr('Provider', 'sim', { kind: 'openai', workspace: 'team-b', secretRef: { name: 'creds', key: 'apiKey' } }), metadata: { name: 'sim', namespace: NS, labels: { touched: 'yes' } } })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(client.events.filter((event) => event.reason === 'SecretNotFound')).toHaveLength(1)
    expect(client.events[0]).toMatchObject({ type: 'Warning', involved: { metadata: { name: 'sim' } } })

    client.apply(SECRETS, secret('creds', 'sk-one'))
    await eventually(() => conditionOf('Provider', 'sim', 'Accepted')?.status === 'True')
    const workspace = (await store.workspaces.get(organizationId, 'team-b'))!
    const provider = (await store.providers.getBySlug(organizationId, workspace.id, 'sim'))!
    expect(provider.managedBy).toBe('kubernetes')
    expect(await store.providers.decryptedCredentials(organizationId, provider.id)).toEqual({ apiKey: 'sk-one' })

    client.apply(SECRETS, secret('creds', 'sk-two'))
    await eventually(async () => (await store.providers.decryptedCredentials(organizationId, provider.id)).apiKey === 'sk-two')
  })

  it('turns Programmed True only when every connected gateway ACKed the generation with the change', async () => {
    manager.startReconciling()
    client.apply(resourceType('Workspace'), cr('Workspace', 'team-c', {}))
    await eventually(() => conditionOf('Workspace', 'team-c', 'Accepted')?.status === 'True')
    expect(conditionOf('Workspace', 'team-c', 'Programmed')).toMatchObject({ status: 'False', reason: 'NoGateways' })

    registry.connected('gw-1', true)
    registry.connected('gw-2', true)
    const generation = publisher.latest!.generation
    registry.ack('gw-1', generation)
    await eventually(() => conditionOf('Workspace', 'team-c', 'Programmed')?.reason === 'Pending')
    expect(conditionOf('Workspace', 'team-c', 'Programmed')!.message).toContain('1 of 2 gateways')
    registry.nack('gw-2', generation, [{ path: 'providers[0]', message: 'bad' }])
    await eventually(() => conditionOf('Workspace', 'team-c', 'Programmed')?.reason === 'Rejected')
    registry.ack('gw-2', generation)
    await eventually(() => conditionOf('Workspace', 'team-c', 'Ready')?.status === 'True')
    expect(conditionOf('Workspace', 'team-c', 'Programmed')).toMatchObject({ status: 'True', observedGeneration: 1 })
  })

  it('refuses invalid specs and rows created through the admin API', async () => {
    manager.startReconciling()
    await store.workspaces.create({ organizationId, slug: 'by-hand', name: 'By hand' })
    client.apply(resourceType('Workspace'), cr('Workspace', 'by-hand', {}))
    client.apply(resourceType('Provider'), cr('Provider', 'broken', { kind: 'vllm' }))
    await eventually(() => conditionOf('Workspace', 'by-hand', 'Accepted')?.reason === 'Conflict')
    await eventually(() => conditionOf('Provider', 'broken', 'Accepted')?.reason === 'InvalidSpec')
    expect(conditionOf('Provider', 'broken', 'Accepted')!.message).toContain('baseUrl is required for vllm')
    expect((await store.workspaces.get(organizationId, 'by-hand'))!.managedBy).toBeNull()
    expect(new Set(client.events.map((event) => event.reason))).toEqual(new Set(['Conflict', 'InvalidSpec']))
  })

  it('applies a RateLimitPolicy and a Deployment (its Config and Workspace named in the namespace), and deletes them', async () => {
    manager.startReconciling()
    client.apply(resourceType('RateLimitPolicy'), cr('RateLimitPolicy', 'limits', { conditions: [{ key: 'api_key', value: '*' }], groupBy: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 10 }))
    client.apply(resourceType('Deployment'), cr('Deployment', 'prod', { type: 'production', config: 'served', workspaces: ['team-d'] }))
    await eventually(() => conditionOf('RateLimitPolicy', 'limits', 'Accepted')?.status === 'True')
    expect(client.peek(resourceType('RateLimitPolicy'), NS, 'limits')!.metadata.finalizers).toEqual([FINALIZER])
    await eventually(() => conditionOf('Deployment', 'prod', 'Accepted')?.reason === 'RefNotFound')
    expect(conditionOf('Deployment', 'prod', 'Accepted')!.message).toContain(`no Workspace named 'team-d' in namespace '${NS}'`)

    client.apply(resourceType('Workspace'), cr('Workspace', 'team-d', {}))
    client.apply(resourceType('Config'), cr('Config', 'served', { slug: 'served-slug', config: { provider: '@sim' } }))
    await eventually(() => conditionOf('Config', 'served', 'Accepted')?.status === 'True')
    await eventually(() => conditionOf('Workspace', 'team-d', 'Accepted')?.status === 'True')
    // The Deployment waits for its references; a change to it reconciles it at once.
    client.apply(resourceType('Deployment'), { ...cr('Deployment', 'prod', { type: 'production', config: 'served', workspaces: ['team-d'] }), metadata: { name: 'prod', namespace: NS, labels: { retry: 'now' } } })
    await eventually(() => conditionOf('Deployment', 'prod', 'Accepted')?.status === 'True')
    const config = (await store.configs.get(organizationId, 'served-slug'))!
    const workspace = (await store.workspaces.get(organizationId, 'team-d'))!
    expect(await store.deployments.get(organizationId, 'prod')).toMatchObject({ managedBy: 'kubernetes', configId: config.id, allowedWorkspaceIds: [workspace.id] })

    client.delete(resourceType('Deployment'), NS, 'prod')
    await eventually(() => client.peek(resourceType('Deployment'), NS, 'prod') === undefined)
    expect(await store.deployments.get(organizationId, 'prod')).toBeNull()
  })

  it('deletes the row before releasing the finalizer, and does not rewrite unchanged objects', async () => {
    manager.startReconciling()
    client.apply(resourceType('Config'), cr('Config', 'routing', { config: { provider: '@sim' } }))
    await eventually(() => conditionOf('Config', 'routing', 'Accepted')?.status === 'True')
    const config = (await store.configs.get(organizationId, 'routing', null))!
    expect(config.version).toBe(1)
    // A metadata-only update (no spec change) reconciles without a new store version.
    client.apply(resourceType('Config'), { ...cr('Config', 'routing', { config: { provider: '@sim' } }), metadata: { name: 'routing', namespace: NS, labels: { a: 'b' } } })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect((await store.configs.get(organizationId, 'routing', null))!.version).toBe(1)

    client.delete(resourceType('Config'), NS, 'routing')
    await eventually(() => client.peek(resourceType('Config'), NS, 'routing') === undefined)
    expect(await store.configs.get(organizationId, 'routing', null)).toBeNull()
  })

  it('keeps references inside the namespace', async () => {
    manager.startReconciling()
    await store.workspaces.create({ organizationId, slug: 'elsewhere', name: 'Elsewhere' })
    client.apply(resourceType('Config'), cr('Config', 'sneaky', { workspace: 'elsewhere', config: { provider: '@sim' } }))
    await eventually(() => conditionOf('Config', 'sneaky', 'Accepted')?.reason === 'RefNotFound')
    expect(conditionOf('Config', 'sneaky', 'Accepted')!.message).toContain(`no Workspace named 'elsewhere' in namespace '${NS}'`)
  })

  it('re-applies dependents when their Workspace appears after them', async () => {
    manager.startReconciling()
    client.apply(resourceType('Config'), cr('Config', 'routing', { workspace: 'late', config: { provider: '@sim' } }))
    await eventually(() => conditionOf('Config', 'routing', 'Accepted')?.reason === 'RefNotFound')
    client.apply(resourceType('Workspace'), cr('Workspace', 'late', { slug: 'late-team' }))
    await eventually(() => conditionOf('Config', 'routing', 'Accepted')?.status === 'True')
    const workspace = (await store.workspaces.get(organizationId, 'late-team'))!
    expect(await store.configs.get(organizationId, 'routing', workspace.id)).not.toBeNull()
  })
})
