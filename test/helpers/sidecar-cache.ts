/**
 * A sidecar's cache directory as a running sidecar leaves it (gateway/src/sidecar/local-cache.ts):
 * the confirmed identity, the binding's slice sealed with the pod-local key, and optionally the
 * shared-counter settings. For suites and benchmarks that start `gatehouse sidecar` with the
 * control plane down.
 */
import { SNAPSHOT_SCHEMA_VERSION, sidecarKeyHash, type SidecarIdentity, type SidecarSettings } from '@gatehouse/gateway/snapshot'
import { openSidecarCache } from '../../gateway/src/sidecar/local-cache.ts'
import { persistSnapshot } from '../../gateway/src/sync/persisted.ts'

export const CACHED_SIDECAR_IDENTITY: SidecarIdentity = { namespace: 'team-a', serviceAccount: 'app', podName: 'cached-0', workspaceId: 'ws-a' }

export interface CachedSliceOptions {
  /** The OpenAI-compatible upstream (a simulator on loopback) and its key. */
  upstream: string
  upstreamKey: string
  /** Limits of the slice (snapshot `limits`). */
  limits?: unknown[]
  settings?: SidecarSettings
}

export async function prepareSidecarCache(directory: string, options: CachedSliceOptions): Promise<void> {
  const identity = CACHED_SIDECAR_IDENTITY
  const cache = await openSidecarCache(directory)
  await cache.saveIdentity(identity)
  if (options.settings) await cache.saveSettings(options.settings)
  await persistSnapshot(cache.snapshotPath, cache.keyring, {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    generation: 1,
    producedAt: new Date().toISOString(),
    producedBy: { component: 'test', version: '0' },
    organizationId: 'org',
    workspaces: [{ id: 'ws-a', slug: 'team-a', name: 'Team A', status: 'active', defaultConfigId: 'cfg' }],
    apiKeys: [{ id: `sidecar:${identity.namespace}/${identity.serviceAccount}`, hash: sidecarKeyHash(identity), type: 'workspace', subtype: 'service', workspaceId: 'ws-a', scopes: ['completions.write'], status: 'active' }],
    // Operator-declared in a real slice; the simulator listens on loopback.
    providers: [{ id: 'p', slug: 'sim', name: 'sim', kind: 'openai', baseUrl: options.upstream, credentials: { apiKey: options.upstreamKey }, workspaceId: 'ws-a', network: 'private-allowed' }],
    configs: [{ id: 'cfg', slug: 'routing', workspaceId: 'ws-a', config: { provider: '@sim' } }],
    ...(options.limits ? { limits: options.limits } : {}),
  })
}
