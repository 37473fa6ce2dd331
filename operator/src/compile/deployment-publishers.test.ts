/** Per-deployment snapshots on the sync stream: compiled on first ask, refreshed on change, unknown deployments refused. */
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SYNC_STREAM_PATH } from '@gatehouse/gateway/snapshot'
import { createHarness, type Harness } from '../admin/testing.ts'
import { GatewayRegistry } from '../distribution/gateway-registry.ts'
import { SnapshotPublisher } from '../distribution/publisher.ts'
import { registerSyncRoutes } from '../distribution/sync-routes.ts'
import { parseKeyring } from '../crypto/envelope.ts'
import { TEST_ENCRYPTION_KEY } from '../store/testing.ts'
import { DeploymentPublishers } from './deployment-publishers.ts'
import { compileSnapshot } from './snapshot.ts'

let h: Harness
let wsA: string
let wsB: string
let generation = 0
const nextGeneration = (): number => ++generation

beforeAll(async () => {
  h = await createHarness()
  wsA = (await h.workspace('Dep A')).id
  wsB = (await h.workspace('Dep B')).id
  await h.store.deployments.create({ organizationId: h.orgId, slug: 'eu', name: 'EU', type: 'production', allowAllWorkspaces: false, allowedWorkspaceIds: [wsA] })
})
afterAll(() => h.close())

describe('DeploymentPublishers', () => {
  it('compiles a deployment\'s snapshot on first ask and again after a change', async () => {
    const errors: unknown[] = []
    const publishers = new DeploymentPublishers((g, deployment) => compileSnapshot(h.store, { generation: g, deployment }), { now: nextGeneration, onError: (e) => errors.push(e) })
    const eu = await publishers.get('eu')
    expect(eu.latest?.deployment?.slug).toBe('eu')
    expect(eu.latest?.workspaces.map((w) => w.id)).toEqual([wsA])
    expect(await publishers.get('eu')).toBe(eu)
    const first = eu.latest!.generation
    await h.store.deployments.update(h.orgId, (await h.store.deployments.get(h.orgId, 'eu'))!.id, { allowedWorkspaceIds: [wsA, wsB] })
    publishers.schedule()
    await eu.publish()
    expect(eu.latest!.generation).toBeGreaterThan(first)
    expect(eu.latest!.workspaces.map((w) => w.id).sort()).toEqual([wsA, wsB].sort())
    await expect(publishers.get('nowhere')).rejects.toThrow(/no deployment nowhere/)
    expect(publishers.deployments).toEqual(['eu'])
    expect(errors).toEqual([])
  })

  it('refuses a stream for an unknown deployment with 404, and deployment streams without publishers with 400', async () => {
    const publisher = new SnapshotPublisher((g) => compileSnapshot(h.store, { generation: g }), { now: nextGeneration })
    const options = { publisher, registry: new GatewayRegistry(), keyring: parseKeyring(TEST_ENCRYPTION_KEY), gatewayToken: 'gateway-token-0123456789' }
    const withDeployments = Fastify()
    registerSyncRoutes(withDeployments, { ...options, deployments: new DeploymentPublishers((g, d) => compileSnapshot(h.store, { generation: g, deployment: d }), { now: nextGeneration }) })
    const without = Fastify()
    registerSyncRoutes(without, options)
    const headers = { authorization: 'Bearer gateway-token-0123456789' }
    const unknown = await withDeployments.inject({ url: `${SYNC_STREAM_PATH}?gateway_id=g1&deployment=nowhere`, headers })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json().error.code).toBe('deployment_not_found')
    const unsupported = await without.inject({ url: `${SYNC_STREAM_PATH}?gateway_id=g1&deployment=eu`, headers })
    expect(unsupported.statusCode).toBe(400)
    const malformed = await withDeployments.inject({ url: `${SYNC_STREAM_PATH}?gateway_id=g1&deployment=Not%20A%20Slug`, headers })
    expect(malformed.statusCode).toBe(400)
    await withDeployments.close()
    await without.close()
  })
})
