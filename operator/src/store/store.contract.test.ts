/** The store contract: the same behaviour on PGlite and on PostgreSQL. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import type { Store } from './index.ts'
import { openStore } from './index.ts'
import { openTestPgliteStore, TEST_ENCRYPTION_KEY, testBackends } from './testing.ts'
import { loadMigrations } from './migrate.ts'
import type { ChangeEvent } from './change-feed.ts'

const backends = await testBackends()

describe.each(backends)('store contract on $name', (backend) => {
  let store: Store
  let dispose: () => Promise<void>
  let orgId: string

  beforeAll(async () => {
    if (backend.skip) return
    ;({ store, dispose } = await backend.open())
    orgId = (await store.organizations.create({ name: 'Acme' })).id
  })
  afterAll(async () => {
    await dispose?.()
  })

  it.skipIf(backend.skip)('records every migration once', async () => {
    const files = await loadMigrations()
    expect(files.length).toBeGreaterThan(0)
    expect(files.map((m) => m.version)).toEqual([...files.map((m) => m.version)].sort((a, b) => a - b))
  })

  it.skipIf(backend.skip)('creates, lists, filters, updates and deletes workspaces', async () => {
    const a = await store.workspaces.create({ organizationId: orgId, slug: 'ws-alpha', name: 'Alpha', usageLimits: [{ credit_limit: 5 }] })
    const b = await store.workspaces.create({ organizationId: orgId, slug: 'ws-beta', name: 'Beta team' })
    expect(a.usageLimits).toEqual([{ credit_limit: 5 }])
    expect((await store.workspaces.get(orgId, 'ws-beta'))?.id).toBe(b.id)
    expect((await store.workspaces.get(orgId, a.id))?.slug).toBe('ws-alpha')
    await store.workspaces.update(orgId, b.id, { status: 'archived', description: 'old' })
    const active = await store.workspaces.list(orgId, { statuses: ['active'] }, 0, 50)
    expect(active.data.map((w) => w.slug)).toEqual(['ws-alpha'])
    const all = await store.workspaces.list(orgId, {}, 0, 1)
    expect(all.total).toBe(2)
    expect(all.data).toHaveLength(1)
    expect((await store.workspaces.list(orgId, { nameContains: 'team' }, 0, 50)).data.map((w) => w.id)).toEqual([b.id])
    expect((await store.workspaces.list(orgId, { nameContains: 'TEAM' }, 0, 50)).total).toBe(0)
    expect((await store.workspaces.list(orgId, { exactName: 'Beta' }, 0, 50)).total).toBe(0)
    expect((await store.workspaces.list(orgId, { nameContains: '%' }, 0, 50)).total).toBe(0)
    await expect(store.workspaces.create({ organizationId: orgId, slug: 'ws-alpha', name: 'dup' })).rejects.toThrow()
    expect(await store.workspaces.delete(orgId, b.id)).toBe(true)
    expect(await store.workspaces.get(orgId, b.id)).toBeNull()
  })

  it.skipIf(backend.skip)('enforces the 255-character bound in the schema too', async () => {
    await expect(store.workspaces.create({ organizationId: orgId, slug: 'x'.repeat(256), name: 'n' })).rejects.toThrow()
    const ok = await store.workspaces.create({ organizationId: orgId, slug: 's'.repeat(255), name: 'n'.repeat(255) })
    expect(ok.slug).toHaveLength(255)
    await store.workspaces.delete(orgId, ok.id)
  })

  it.skipIf(backend.skip)('keeps users and memberships consistent', async () => {
    const ws = await store.workspaces.create({ organizationId: orgId, slug: 'ws-members', name: 'Members' })
    const user = await store.users.create({ organizationId: orgId, email: 'Ann@Example.com', role: 'member' })
    expect(user.email).toBe('ann@example.com')
    await store.members.upsert(ws.id, user.id, 'member')
    await store.members.upsert(ws.id, user.id, 'manager')
    const member = await store.members.get(ws.id, user.id)
    expect(member?.role).toBe('manager')
    expect(member?.orgRole).toBe('member')
    expect((await store.members.list(ws.id, { role: 'manager' }, 0, 10)).total).toBe(1)
    expect(await store.members.workspacesOf(user.id)).toEqual([{ workspaceId: ws.id, role: 'manager' }])
    await store.users.delete(orgId, user.id)
    expect(await store.members.get(ws.id, user.id)).toBeNull()
  })

  it.skipIf(backend.skip)('stores API keys by hash, rotates with a transition and expires them', async () => {
    const ws = await store.workspaces.create({ organizationId: orgId, slug: 'ws-keys', name: 'Keys' })
    const now = new Date('2030-01-01T00:00:00Z')
    const key = await store.apiKeys.insert({
      id: '00000000-0000-4000-8000-000000000001', organizationId: orgId, workspaceId: ws.id, userId: null, type: 'workspace', subtype: 'service',
      name: 'svc', keyHash: 'a'.repeat(64), keyHint: 'ghk_ws_…aaaa', scopes: ['completions.write'], expiresAt: '2030-01-02T00:00:00Z',
    })
    expect(key.scopes).toEqual(['completions.write'])
    expect((await store.apiKeys.findByHash('a'.repeat(64), now))?.matched).toBe('current')
    await store.apiKeys.rotate(orgId, key.id, { keyHash: 'b'.repeat(64), keyHint: 'h', transitionEndsAt: '2030-01-01T01:00:00Z', nextRotationAt: null, now: now.toISOString(), expectedKeyHash: 'a'.repeat(64) })
    expect(await store.apiKeys.rotate(orgId, key.id, { keyHash: 'c'.repeat(64), keyHint: 'h', transitionEndsAt: '2030-01-01T01:00:00Z', nextRotationAt: null, now: now.toISOString(), expectedKeyHash: 'a'.repeat(64) })).toBeNull()
    expect((await store.apiKeys.findByHash('a'.repeat(64), now))?.matched).toBe('previous')
    expect((await store.apiKeys.findByHash('b'.repeat(64), now))?.matched).toBe('current')
    expect(await store.apiKeys.findByHash('a'.repeat(64), new Date('2030-01-01T01:00:01Z'))).toBeNull()
    expect(await store.apiKeys.endTransitions(new Date('2030-01-01T01:00:01Z'))).toEqual([key.id])
    expect(await store.apiKeys.expireDue(new Date('2030-01-01T12:00:00Z'))).toEqual([])
    expect(await store.apiKeys.expireDue(new Date('2030-01-02T00:00:00Z'))).toEqual([key.id])
    expect((await store.apiKeys.get(orgId, key.id))?.status).toBe('expired')
    await expect(store.apiKeys.insert({ ...key, id: '00000000-0000-4000-8000-000000000002', keyHash: 'b'.repeat(64) })).rejects.toThrow()
  })

  it.skipIf(backend.skip)('rolls a transaction back as a whole and publishes nothing', async () => {
    const seen: ChangeEvent[] = []
    const off = store.onChange((event) => seen.push(event))
    await expect(store.transaction(async (tx) => {
      await tx.workspaces.create({ organizationId: orgId, slug: 'ws-rollback', name: 'R' })
      throw new Error('boom')
    })).rejects.toThrow('boom')
    expect(await store.workspaces.get(orgId, 'ws-rollback')).toBeNull()
    expect(seen).toEqual([])
    await store.transaction(async (tx) => {
      await tx.workspaces.create({ organizationId: orgId, slug: 'ws-commit', name: 'C' })
    })
    expect(seen.map((e) => [e.resource, e.action, e.remote])).toEqual([['workspace', 'created', false]])
    off()
  })

  it.skipIf(backend.skip)('seals provider credentials and opens them only on request', async () => {
    const provider = await store.providers.upsert({ organizationId: orgId, workspaceId: null, slug: 'openai-main', name: 'OpenAI', kind: 'openai', credentials: { apiKey: 'sk-secret-value' } })
    expect(JSON.stringify(provider)).not.toContain('sk-secret-value')
    expect(provider.hasCredentials).toBe(true)
    expect(provider.credentialsKeyId).toBe('test')
    expect(await store.providers.decryptedCredentials(orgId, provider.id)).toEqual({ apiKey: 'sk-secret-value' })
    const renamed = await store.providers.upsert({ organizationId: orgId, workspaceId: null, slug: 'openai-main', name: 'OpenAI 2', kind: 'openai' })
    expect(renamed.id).toBe(provider.id)
    expect(await store.providers.decryptedCredentials(orgId, provider.id)).toEqual({ apiKey: 'sk-secret-value' })
    expect((await store.providers.list(orgId, null)).map((p) => p.slug)).toEqual(['openai-main'])
    expect(await store.providers.delete(orgId, provider.id)).toBe(true)
  })

  it.skipIf(backend.skip)('versions configs per (workspace, slug)', async () => {
    const first = await store.configs.upsert({ organizationId: orgId, workspaceId: null, slug: 'default', name: 'Default', config: { retry: { attempts: 2 } } })
    const second = await store.configs.upsert({ organizationId: orgId, workspaceId: null, slug: 'default', name: 'Default', config: { retry: { attempts: 3 } } })
    expect([first.version, second.version]).toEqual([1, 2])
    expect(second.id).toBe(first.id)
    expect((await store.configs.get(orgId, 'default'))?.config).toEqual({ retry: { attempts: 3 } })
  })

  it.skipIf(backend.skip)('queries the audit trail with filters and pages', async () => {
    for (const action of ['workspace.create', 'workspace.update', 'api_key.create']) {
      await store.audit.record({ organizationId: orgId, actorType: 'api_key', actorId: 'k1', action, method: 'POST', requestBody: { name: 'x' } })
    }
    const filtered = await store.audit.list(orgId, { action: 'workspace.update' }, 0, 10)
    expect(filtered.total).toBe(1)
    expect(filtered.data[0]?.requestBody).toEqual({ name: 'x' })
    const paged = await store.audit.list(orgId, { method: 'POST' }, 1, 2)
    expect(paged.total).toBe(3)
    expect(paged.data).toHaveLength(1)
  })

  // The INSERT … SELECT of the next version binds every column from the table definition; on
  // PostgreSQL the SELECT list's parameters take the columns' types (pg sends them as text).
  it.skipIf(backend.skip)('versions model prices and writes a deletion as a version', async () => {
    const key = { workspaceId: null, provider: 'openai', model: 'gpt-x' }
    const prices = { input: 0.000001, output: 0.000002, cachedInput: null, cacheWrite: null, reasoning: null, audioInput: null, audioOutput: null, cachedAudioInput: null, imageInput: null, perImage: 0.5, perAudioSecond: null, perCharacter: null }
    const first = await store.modelPrices.put(orgId, key, prices, null)
    const second = await store.modelPrices.put(orgId, key, { ...prices, input: 0.000003 }, 'u1')
    expect([first.version, second.version]).toEqual([1, 2])
    expect(second).toMatchObject({ input: 0.000003, output: 0.000002, perImage: 0.5, deleted: false, createdBy: 'u1', workspaceId: null })
    expect((await store.modelPrices.current(orgId)).map((p) => p.version)).toEqual([2])
    expect((await store.modelPrices.remove(orgId, key, null))?.deleted).toBe(true)
    expect(await store.modelPrices.current(orgId)).toEqual([])
    expect((await store.modelPrices.history(orgId, key)).map((p) => p.version)).toEqual([3, 2, 1])
  })
})

describe.each(backends.filter((b) => b.name === 'postgres'))('change feed across replicas on $name', (backend) => {
  it.skipIf(backend.skip)("delivers one replica's committed change to another through NOTIFY", async () => {
    const { store, dispose, url } = await backend.open()
    // A second Store on the same database plays the other control-plane replica.
    const peer = await openStore({ kind: 'postgres', url: url!, encryptionKey: TEST_ENCRYPTION_KEY, maxConnections: 2 })
    try {
      const heard = new Promise<ChangeEvent>((resolve) => peer.onChange(resolve))
      const org = await store.organizations.create({ name: 'Replica' })
      const event = await heard
      expect(event).toMatchObject({ resource: 'organization', action: 'created', id: org.id, remote: true })
      expect(peer.changes.revision).toBe(1)

      // The peer's LISTEN connection dies: it reconnects, announces a resync, and hears changes again.
      const resync = new Promise<ChangeEvent>((resolve) => peer.onChange((e) => e.id === '*' && resolve(e)))
      const killer = new pg.Client({ connectionString: url! })
      await killer.connect()
      await killer.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()")
      await killer.end()
      expect(await resync).toMatchObject({ resource: 'organization', action: 'updated', remote: true })
      const again = new Promise<ChangeEvent>((resolve) => peer.onChange((e) => e.resource === 'workspace' && resolve(e)))
      const ws = await store.workspaces.create({ organizationId: org.id, slug: 'after-reconnect', name: 'After' })
      expect((await again).id).toBe(ws.id)
    } finally {
      await peer.close()
      await dispose()
    }
  })
})

describe('store unavailability', () => {
  it('reports a closed or unreachable database as StoreUnavailableError, and SQL errors as themselves', async () => {
    const { StoreUnavailableError } = await import('./errors.ts')
    const store = await openTestPgliteStore()
    const org = await store.organizations.create({ name: 'Down' })
    await expect(store.workspaces.create({ organizationId: 'missing-org', slug: 'x', name: 'x' })).rejects.toMatchObject({ code: '23503' })
    await store.close()
    await expect(store.workspaces.get(org.id, 'x')).rejects.toBeInstanceOf(StoreUnavailableError)
  })
})
