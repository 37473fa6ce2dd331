/** The store compiled into a gateway snapshot, and gateway-relevant changes announced at once. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashApiKey, validateSnapshot } from '@gatehouse/gateway/snapshot'
import { createHarness, TEST_PEPPER, type Harness } from '../admin/testing.ts'
import type { ChangeEvent } from '../store/index.ts'
import { compileSnapshot } from './snapshot.ts'

let h: Harness
let ws: string

beforeAll(async () => {
  h = await createHarness()
  ws = (await h.workspace('Snap')).id
})
afterAll(() => h.close())

async function compile(generation = 1) {
  return compileSnapshot(h.store, { generation, clock: h.clock.read })
}

describe('compileSnapshot', () => {
  it('produces a snapshot the gateway contract accepts', async () => {
    const snapshot = await compile(7)
    expect(validateSnapshot(snapshot).ok).toBe(true)
    expect(snapshot).toMatchObject({ generation: 7, organizationId: h.orgId })
    expect(snapshot.workspaces.map((w) => w.id)).toContain(ws)
    expect(snapshot.apiKeys.find((k) => k.hash === hashApiKey(h.ownerKey, TEST_PEPPER))).toMatchObject({ type: 'admin', subtype: 'user', status: 'active', userId: h.ownerId })
  })

  it('carries keys with hash, type, subtype, workspace, user, scopes, status and expiry', async () => {
    const expiresAt = new Date(h.clock.now.getTime() + 3_600_000).toISOString()
    const raw = await h.key('workspace/service', { name: 'gw', workspace_id: ws, scopes: ['completions.write'], expires_at: expiresAt })
    const entry = (await compile()).apiKeys.find((k) => k.hash === hashApiKey(raw, TEST_PEPPER))
    expect(entry).toMatchObject({ type: 'workspace', subtype: 'service', workspaceId: ws, userId: null, scopes: ['completions.write'], status: 'active', expiresAt })
  })

  it('lists both secrets as active during a rotation transition, the old one expiring with it', async () => {
    const created = await h.call('POST', '/v1/api-keys/workspace/service', h.ownerKey, { name: 'rot', workspace_id: ws, scopes: ['completions.write'] })
    const { id, key: oldKey } = created.json() as { id: string; key: string }
    const rotated = (await h.call('POST', `/v1/api-keys/${id}/rotate`, h.ownerKey, { key_transition_period_ms: 1_800_000 })).json()
    const entries = (await compile()).apiKeys.filter((k) => k.id === id)
    expect(entries).toHaveLength(2)
    expect(entries.find((k) => k.hash === hashApiKey(rotated.key, TEST_PEPPER))).toMatchObject({ status: 'active', expiresAt: null })
    expect(entries.find((k) => k.hash === hashApiKey(oldKey, TEST_PEPPER))).toMatchObject({ status: 'active', expiresAt: rotated.key_transition_expires_at })
    h.clock.advance(1_800_000)
    expect((await compile()).apiKeys.filter((k) => k.id === id).map((k) => k.hash)).toEqual([hashApiKey(rotated.key, TEST_PEPPER)])
  })

  it('decrypts provider credentials and resolves config references by slug', async () => {
    const config = await h.store.configs.upsert({ organizationId: h.orgId, workspaceId: ws, slug: 'main', name: 'Main', config: { retry: { attempts: 2 } } })
    await h.store.workspaces.update(h.orgId, ws, { defaults: { config_id: 'main' } })
    await h.store.providers.upsert({ organizationId: h.orgId, workspaceId: ws, slug: 'oa', name: 'OA', kind: 'openai', credentials: { apiKey: 'sk-x' }, options: { organization: 'org-1', retries: 2 } })
    const raw = await h.key('workspace/service', { name: 'cfg', workspace_id: ws, scopes: ['completions.write'], defaults: { config_id: 'main' } })
    const ghost = await h.key('workspace/service', { name: 'ghost', workspace_id: ws, scopes: ['completions.write'], defaults: { config_id: 'missing' } })
    const snapshot = await compile()
    expect(snapshot.workspaces.find((w) => w.id === ws)?.defaultConfigId).toBe(config.id)
    expect(snapshot.apiKeys.find((k) => k.hash === hashApiKey(raw, TEST_PEPPER))?.defaultConfigId).toBe(config.id)
    expect(snapshot.apiKeys.find((k) => k.hash === hashApiKey(ghost, TEST_PEPPER))?.defaultConfigId).toBeNull()
    expect(snapshot.providers.find((p) => p.slug === 'oa')).toMatchObject({ credentials: { apiKey: 'sk-x' }, options: { organization: 'org-1', retries: '2' }, workspaceId: ws })
    expect(snapshot.configs.find((c) => c.id === config.id)).toMatchObject({ slug: 'main', version: 1, workspaceId: ws })
  })
})

describe('change feed', () => {
  it('announces a revocation at commit, and the next snapshot marks the key revoked (well under 1 s)', async () => {
    const created = await h.call('POST', '/v1/api-keys/workspace/service', h.ownerKey, { name: 'revoke me', workspace_id: ws, scopes: ['completions.write'] })
    const { id, key } = created.json() as { id: string; key: string }
    const events: ChangeEvent[] = []
    const off = h.store.onChange((event) => events.push(event))
    const started = performance.now()
    let snapshotAfter: Awaited<ReturnType<typeof compile>> | null = null
    const recompiled = new Promise<void>((resolve) => {
      const stop = h.store.onChange(() => {
        stop()
        void compile(2).then((snapshot) => {
          snapshotAfter = snapshot
          resolve()
        })
      })
    })
    expect((await h.call('DELETE', `/v1/api-keys/${id}`, h.ownerKey)).statusCode).toBe(200)
    await recompiled
    const elapsedMs = performance.now() - started
    off()
    expect(events.map((e) => [e.resource, e.action, e.id])).toContainEqual(['api_key', 'revoked', id])
    expect(snapshotAfter!.apiKeys.find((k) => k.hash === hashApiKey(key, TEST_PEPPER))?.status).toBe('revoked')
    expect(elapsedMs).toBeLessThan(1000)
  })

  it('announces creation, rotation, expiry and workspace changes with a rising revision', async () => {
    const events: ChangeEvent[] = []
    const off = h.store.onChange((event) => events.push(event))
    const created = await h.call('POST', '/v1/api-keys/workspace/service', h.ownerKey, { name: 'feed', workspace_id: ws, scopes: ['completions.write'], expires_at: new Date(h.clock.now.getTime() + 1000).toISOString() })
    const id = created.json().id as string
    await h.call('POST', `/v1/api-keys/${id}/rotate`, h.ownerKey)
    await h.call('PUT', `/v1/admin/workspaces/${ws}`, h.ownerKey, { description: 'feed' })
    h.clock.advance(1000)
    const { createKeyExpiryWorker } = await import('../workers/key-expiry.ts')
    await createKeyExpiryWorker({ store: h.store, clock: h.clock.read }).runOnce()
    off()
    const actions = events.map((e) => `${e.resource}:${e.action}`)
    expect(actions).toEqual(expect.arrayContaining(['api_key:created', 'api_key:rotated', 'workspace:updated', 'api_key:expired']))
    const revisions = events.map((e) => e.revision)
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b))
  })
})
