/**
 * What the control plane gives a sidecar: the binding's slice (other workspaces' keys, providers
 * and configs left out; one principal record for the pod), only for a TokenReview of our audience
 * and a binding that admits the pod, sealed with a key only that connection can derive.
 */
import { describe, expect, it } from 'vitest'
import { SNAPSHOT_SCHEMA_VERSION, sidecarKeyPair, sidecarKeyring, validateSnapshot, type GatewaySnapshot } from '@gatehouse/gateway/snapshot'
import { sidecarSlice } from './slice.ts'
import { identityFromReview } from './token-review.ts'
import { bindingAdmits, parseDeploymentRef } from './binding.ts'

function deploymentSnapshot(): GatewaySnapshot {
  const result = validateSnapshot({
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    generation: 7,
    producedAt: new Date(0).toISOString(),
    producedBy: { component: 'test', version: '0' },
    organizationId: 'org',
    workspaces: [
      { id: 'ws-a', slug: 'team-a', name: 'A', status: 'active', defaultConfigId: 'cfg-a' },
      { id: 'ws-z', slug: 'team-z', name: 'Z', status: 'active' },
    ],
    apiKeys: [{ id: 'k1', hash: 'a'.repeat(64), type: 'workspace', subtype: 'service', workspaceId: 'ws-a', scopes: [], status: 'active' }],
    providers: [
      { id: 'p-a', slug: 'sim', name: 'sim', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', credentials: { apiKey: 'sk-a' }, workspaceId: 'ws-a' },
      { id: 'p-z', slug: 'sim', name: 'sim', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', credentials: { apiKey: 'sk-z' }, workspaceId: 'ws-z' },
      { id: 'p-org', slug: 'shared', name: 'shared', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', allowAllWorkspaces: false, allowedWorkspaceIds: ['ws-z'] },
    ],
    configs: [
      { id: 'cfg-a', slug: 'routing', workspaceId: 'ws-a', config: { provider: '@sim' } },
      { id: 'cfg-z', slug: 'routing', workspaceId: 'ws-z', config: { provider: '@sim' } },
    ],
    deployment: { id: 'd', slug: 'ai', type: 'production', configId: null },
  })
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return result.snapshot
}

const identity = { namespace: 'team-a', serviceAccount: 'app', podName: 'app-1' }

describe('sidecarSlice', () => {
  it('keeps only the bound workspace, its providers and configs, and one principal record', () => {
    const { snapshot, workspaceId } = sidecarSlice(deploymentSnapshot(), identity, 'team-a')
    expect(workspaceId).toBe('ws-a')
    expect(snapshot.workspaces.map((w) => w.id)).toEqual(['ws-a'])
    expect(snapshot.providers.map((p) => p.id)).toEqual(['p-a'])
    expect(JSON.stringify(snapshot)).not.toContain('sk-z')
    expect(snapshot.configs.map((c) => c.id)).toEqual(['cfg-a'])
    expect(snapshot.apiKeys).toHaveLength(1)
    expect(snapshot.apiKeys[0]).toMatchObject({ id: 'sidecar:team-a/app', workspaceId: 'ws-a', scopes: ['completions.write'] })
  })

  it('refuses a workspace the deployment does not serve', () => {
    expect(() => sidecarSlice(deploymentSnapshot(), identity, 'team-q')).toThrow("does not serve an active workspace 'team-q'")
  })
})

describe('identity and binding checks', () => {
  it('accepts only authenticated service-account tokens for audience gatehouse', () => {
    const user = { username: 'system:serviceaccount:team-a:app', extra: { 'authentication.kubernetes.io/pod-name': ['app-1'], 'authentication.kubernetes.io/pod-uid': ['u'] } }
    expect(identityFromReview({ authenticated: true, audiences: ['gatehouse'], user })).toEqual({ namespace: 'team-a', serviceAccount: 'app', podName: 'app-1', podUid: 'u' })
    expect(identityFromReview({ authenticated: false, audiences: ['gatehouse'], user })).toBeNull()
    expect(identityFromReview({ authenticated: true, audiences: ['api'], user })).toBeNull()
    expect(identityFromReview({ authenticated: true, audiences: ['gatehouse'], user: { username: 'alice' } })).toBeNull()
  })

  it('admits by service account or by namespace, and parses references', () => {
    const binding = { workspace: 'team-a', serviceAccounts: [{ namespace: 'team-a', name: 'app' }], namespaces: ['batch'] }
    expect(bindingAdmits(binding, 'team-a', 'app')).toBe(true)
    expect(bindingAdmits(binding, 'team-a', 'other')).toBe(false)
    expect(bindingAdmits(binding, 'batch', 'anything')).toBe(true)
    expect(parseDeploymentRef('ai', 'ns')).toEqual({ namespace: 'ns', name: 'ai' })
    expect(parseDeploymentRef('cfg/ai', 'ns')).toEqual({ namespace: 'cfg', name: 'ai' })
    expect(parseDeploymentRef('a/b/c', 'ns')).toBeNull()
    expect(parseDeploymentRef('Bad_Name', 'ns')).toBeNull()
  })

  it('derives the same connection key on both sides, and another connection cannot open it', () => {
    const sidecar = sidecarKeyPair()
    const controlPlane = sidecarKeyPair()
    const sealed = sidecarKeyring(controlPlane, sidecar.publicKey, sidecar.publicKey, controlPlane.publicKey).seal('{"x":1}', 'snapshot')
    expect(sidecarKeyring(sidecar, controlPlane.publicKey, sidecar.publicKey, controlPlane.publicKey).open(sealed, 'snapshot')).toBe('{"x":1}')
    const stranger = sidecarKeyPair()
    expect(() => sidecarKeyring(stranger, controlPlane.publicKey, stranger.publicKey, controlPlane.publicKey).open(sealed, 'snapshot')).toThrow()
  })
})
