/**
 * The MCP sync schedule on both backends: replicas racing for due integrations each get different
 * ones (SKIP LOCKED), a claimed integration is not handed out again while its lease holds, a
 * synced one is not due until its interval passed, and a sync keeps each capability's switch.
 * Also what the compiler serves from the stored rows: tools enabled by both the integration and
 * the server, and servers that cannot be relayed compiled disabled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compileMcpServers, enabledTools } from '../compile/mcp.ts'
import { ensureOrganization } from '../identity/bootstrap.ts'
import type { McpSyncResult, Store } from '../store/index.ts'
import { testBackends } from '../store/testing.ts'

const backends = await testBackends()
const HOUR_MS = 3_600_000

function found(names: string[]): McpSyncResult {
  return {
    ok: true,
    serverInfo: { name: 'srv', version: '1', title: null, description: null, icons: null, website_url: null, instructions: null },
    protocolVersion: '2025-06-18',
    capabilityFlags: { tools: {} },
    capabilities: names.map((name) => ({ name, type: 'tool' as const })),
  }
}

for (const backend of backends) {
  describe.skipIf(backend.skip !== null)(`MCP sync schedule on ${backend.name}`, () => {
    let store: Store
    let dispose: () => Promise<void>
    let org: string
    let workspaceId: string

    beforeAll(async () => {
      ;({ store, dispose } = await backend.open())
      org = (await ensureOrganization(store)).id
      workspaceId = (await store.workspaces.create({ organizationId: org, slug: 'w', name: 'W' })).id
    })
    afterAll(async () => {
      await dispose?.()
    })

    it('hands each due integration to one replica, and not again until its interval passed', async () => {
      const now = new Date('2026-11-23T10:00:00Z')
      const ids = await Promise.all(['a', 'b', 'c'].map(async (slug) => (await store.mcpIntegrations.create({ organizationId: org, workspaceId: null, slug, name: slug, url: 'https://mcp.example.com/mcp', authType: 'none', transport: 'http' })).id))
      const [first, second] = await Promise.all([store.mcpIntegrations.claimDue(now, HOUR_MS, 60_000, 2), store.mcpIntegrations.claimDue(now, HOUR_MS, 60_000, 2)])
      const claimed = [...first!, ...second!].map((entry) => entry.id)
      expect(new Set(claimed).size).toBe(claimed.length)
      const rest = await store.mcpIntegrations.claimDue(now, HOUR_MS, 60_000, 10)
      expect([...claimed, ...rest.map((entry) => entry.id)].sort()).toEqual([...ids].sort())
      // Held by the leases: nothing is due now.
      expect(await store.mcpIntegrations.claimDue(now, HOUR_MS, 60_000, 10)).toEqual([])
      for (const id of ids) await store.mcpIntegrations.recordSync(org, id, found(['echo']), now)
      // Synced and released: due again only once the interval passed.
      expect(await store.mcpIntegrations.claimDue(new Date(now.getTime() + 120_000), HOUR_MS, 60_000, 10)).toEqual([])
      expect(await store.mcpIntegrations.claimDue(new Date(now.getTime() + HOUR_MS + 1), HOUR_MS, 60_000, 10)).toHaveLength(3)
    })

    it('keeps capability switches across syncs; a failed sync keeps the last known tools', async () => {
      const integration = await store.mcpIntegrations.create({ organizationId: org, workspaceId: null, slug: 'tools', name: 'Tools', url: 'https://mcp.example.com/mcp', authType: 'headers', transport: 'http', credentials: { headers: { 'x-key': 'secret-value' } } })
      const now = new Date('2026-11-23T11:00:00Z')
      const synced = (await store.mcpIntegrations.recordSync(org, integration.id, found(['echo', 'add']), now))!
      await store.mcpIntegrations.update(org, integration.id, { capabilities: synced.capabilities.map((c) => (c.name === 'add' ? { ...c, enabled: false } : c)) })
      const again = (await store.mcpIntegrations.recordSync(org, integration.id, found(['echo', 'add', 'new']), now))!
      expect(Object.fromEntries(again.capabilities.map((c) => [c.name, c.enabled]))).toEqual({ echo: true, add: false, new: true })
      const failed = (await store.mcpIntegrations.recordSync(org, integration.id, { ok: false, error: 'connection refused' }, now))!
      expect(failed).toMatchObject({ syncStatus: 'failed', syncError: 'connection refused' })
      expect(failed.capabilities.map((c) => c.name)).toEqual(['echo', 'add', 'new'])
      expect(await store.mcpIntegrations.decryptedCredentials(org, integration.id)).toEqual({ headers: { 'x-key': 'secret-value' } })

      const server = await store.mcpServers.create({ organizationId: org, workspaceId, integrationId: integration.id, slug: 's', name: 'S' })
      const switched = (await store.mcpServers.update(org, server.id, { capabilityOverrides: [{ name: 'new', type: 'tool', enabled: false }] }))!
      expect(enabledTools(failed, switched)).toEqual(['echo'])

      const sse = await store.mcpIntegrations.create({ organizationId: org, workspaceId: null, slug: 'legacy', name: 'Legacy', url: 'https://mcp.example.com/sse', authType: 'none', transport: 'sse' })
      await store.mcpServers.create({ organizationId: org, workspaceId, integrationId: sse.id, slug: 'legacy', name: 'Legacy' })
      const problems: string[] = []
      const compiled = await compileMcpServers(store, { orgId: org, privateNetworksAllowed: false, report: (path, message) => problems.push(`${path}: ${message}`) }, () => true)
      expect(compiled.find((s) => s.slug === 's')).toMatchObject({ status: 'active', tools: ['echo'], auth: { type: 'headers', headers: { 'x-key': 'secret-value' } }, network: 'public' })
      expect(compiled.find((s) => s.slug === 'legacy')).toMatchObject({ status: 'disabled' })
      expect(problems).toEqual([expect.stringContaining('legacy SSE transport')])
    })
  })
}
