/**
 * Starts a gateway on an ephemeral loopback port from a hand-built snapshot, for suites that test
 * the data plane without the control plane. Keys are minted with the real key format and hashed
 * with the same pepper the gateway uses.
 */
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { buildGatewayServer, RuntimeHolder, type GatewayServerOptions } from '@gatehouse/gateway'
import { generateApiKey, hashApiKey, SNAPSHOT_SCHEMA_VERSION, type GatewaySnapshotInput } from '@gatehouse/gateway/snapshot'

export const TEST_PEPPER = 'test-pepper-not-secret'
export const WORKSPACE_ID = 'ws-test'

export interface TestProvider {
  slug: string
  kind: string
  baseUrl: string
  credentials?: Record<string, string>
  options?: Record<string, string>
  models?: string[]
  workspaceId?: string | null
}

export interface TestGateway {
  url: string
  baseUrl: string
  workspaceKey: string
  adminKey: string
  holder: RuntimeHolder
  app: FastifyInstance
  snapshot: GatewaySnapshotInput
  /** Applies a changed snapshot (generation bumped). */
  update(change: (snapshot: GatewaySnapshotInput) => void): void
  close(): Promise<void>
}

export function buildSnapshot(providers: TestProvider[], keys: { workspaceKey: string; adminKey: string }): GatewaySnapshotInput {
  return {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    generation: 1,
    producedAt: new Date().toISOString(),
    producedBy: { component: 'test', version: '0' },
    organizationId: 'org-test',
    workspaces: [{ id: WORKSPACE_ID, slug: 'test', name: 'Test', status: 'active' }],
    apiKeys: [
      { id: 'key-ws', hash: hashApiKey(keys.workspaceKey, TEST_PEPPER), type: 'workspace', subtype: 'service', workspaceId: WORKSPACE_ID, scopes: [], status: 'active' },
      { id: 'key-admin', hash: hashApiKey(keys.adminKey, TEST_PEPPER), type: 'admin', subtype: 'service', workspaceId: null, scopes: [], status: 'active' },
    ],
    providers: providers.map((provider, index) => ({
      id: `prov-${index}`,
      slug: provider.slug,
      name: provider.slug,
      kind: provider.kind,
      baseUrl: provider.baseUrl,
      credentials: provider.credentials ?? { apiKey: 'sk-simulator' },
      options: provider.options ?? {},
      models: provider.models ?? [],
      workspaceId: provider.workspaceId === undefined ? WORKSPACE_ID : provider.workspaceId,
    })),
  }
}

/** `server`: extra server options (pipeline features such as a test stage). */
export async function startTestGateway(providers: TestProvider[], server: Partial<GatewayServerOptions> = {}): Promise<TestGateway> {
  const workspaceKey = generateApiKey('workspace')
  const adminKey = generateApiKey('admin')
  const snapshot = buildSnapshot(providers, { workspaceKey, adminKey })
  const holder = new RuntimeHolder()
  const applied = holder.apply(snapshot)
  if (!applied.ok) throw new Error(`test snapshot rejected: ${JSON.stringify(applied.problems)}`)
  const app = buildGatewayServer({ holder, pepper: TEST_PEPPER, ...server })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`
  return {
    url,
    baseUrl: `${url}/v1`,
    workspaceKey,
    adminKey,
    holder,
    app,
    snapshot,
    update(change) {
      change(snapshot)
      snapshot.generation = (snapshot.generation ?? 0) + 1
      const result = holder.apply(snapshot)
      if (!result.ok) throw new Error(`snapshot rejected: ${JSON.stringify(result.problems)}`)
    },
    async close() {
      await app.close()
      await holder.close()
    },
  }
}
