/**
 * Loopback authentication in sidecar mode: the pod's principal record (hash `sidecarKeyHash`)
 * compiles like a key of the bound workspace, and it is reachable only from loopback, with the
 * identity the control plane confirmed.
 */
import { describe, expect, it } from 'vitest'
import { RuntimeHolder } from '../runtime/holder.ts'
import { SNAPSHOT_SCHEMA_VERSION, sidecarKeyHash } from '../snapshot/index.ts'
import { authenticateSidecar, isLoopbackAddress, loopbackOnly } from './authenticate-sidecar.ts'

const identity = { namespace: 'team-a', serviceAccount: 'app', podName: 'app-1', workspaceId: 'ws-a' }

function sliceRuntime() {
  const holder = new RuntimeHolder()
  const applied = holder.apply({
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    generation: 1,
    producedAt: new Date(0).toISOString(),
    producedBy: { component: 'test', version: '0' },
    organizationId: 'org',
    workspaces: [{ id: 'ws-a', slug: 'team-a', name: 'A', status: 'active', defaultConfigId: 'cfg-a' }],
    apiKeys: [{ id: 'sidecar:team-a/app', hash: sidecarKeyHash(identity), type: 'workspace', subtype: 'service', workspaceId: 'ws-a', scopes: ['completions.write'], status: 'active' }],
    providers: [],
    configs: [{ id: 'cfg-a', slug: 'routing', workspaceId: 'ws-a', config: { provider: '@sim' } }],
  })
  if (!applied.ok) throw new Error(JSON.stringify(applied.problems))
  return holder.current!
}

describe('authenticateSidecar', () => {
  const runtime = sliceRuntime()

  it('admits the pod as a sidecar principal, with the workspace default config and the pod attribution', () => {
    const principal = authenticateSidecar(runtime, { identity: () => identity })
    expect(principal).toMatchObject({ kind: 'sidecar', id: 'sidecar:team-a/app', workspaceId: 'ws-a', key: null, scopes: ['completions.write'] })
    expect(principal.defaultConfig?.record.id).toBe('cfg-a')
    expect(principal.attributes).toEqual({ 'k8s.namespace.name': 'team-a', 'k8s.serviceaccount.name': 'app', 'k8s.pod.name': 'app-1' })
    for (const address of ['127.0.0.1', '127.3.4.5', '::1', '::ffff:127.0.0.1']) expect(() => loopbackOnly(address)).not.toThrow()
  })

  it('refuses any other peer, an identity not yet confirmed, and an identity the slice does not bind', () => {
    for (const address of ['10.0.0.7', '::ffff:10.0.0.7', 'fe80::1', '128.0.0.1', undefined]) {
      expect(isLoopbackAddress(address)).toBe(false)
      expect(() => loopbackOnly(address)).toThrow(expect.objectContaining({ code: 'forbidden' }))
    }
    expect(() => authenticateSidecar(runtime, { identity: () => null })).toThrow(expect.objectContaining({ code: 'not_ready', status: 503 }))
    expect(() => authenticateSidecar(runtime, { identity: () => ({ ...identity, serviceAccount: 'other' }) })).toThrow(expect.objectContaining({ code: 'forbidden' }))
  })
})
