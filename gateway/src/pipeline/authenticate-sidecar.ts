/**
 * Authentication in sidecar mode: the application in the same pod calls its sidecar on loopback
 * with no Gatehouse key, and every call runs as the pod's bound identity. What makes that safe:
 * the sidecar listens on 127.0.0.1 only (sidecar/main.ts), `loopbackOnly` refuses any peer that is
 * not a loopback address before routing, and the identity is the one the control plane
 * authenticated from the pod's own ServiceAccount token. The snapshot a sidecar receives carries one API key record for the pod
 * (hash `sidecarKeyHash`), compiled like any key, so defaults, scopes and workspace checks are the
 * central gateway's. A presented key or bearer (SDKs always send one) is ignored, never forwarded.
 */
import { isIP } from 'node:net'
import { GatewayError } from '../core/errors.ts'
import type { RuntimeConfig } from '../runtime/compile.ts'
import { sidecarKeyHash, type SidecarIdentity } from '../snapshot/sidecar-seal.ts'
import { requireDataPlaneKey } from './authenticate.ts'
import type { Principal } from './context.ts'

/** Where a sidecar keeps the identity the control plane told it; null until the first stream (or cache). */
export interface SidecarAuth {
  identity(): SidecarIdentity | null
}

/** 127.0.0.0/8, ::1, and IPv4-mapped loopback. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address
  if (isIP(plain) === 4) return plain.startsWith('127.')
  return plain === '::1'
}

export function podAnnotations(identity: SidecarIdentity): Record<string, string> {
  return {
    'k8s.namespace.name': identity.namespace,
    'k8s.serviceaccount.name': identity.serviceAccount,
    ...(identity.podName === null ? {} : { 'k8s.pod.name': identity.podName }),
  }
}

/** For a server's onRequest hook: anything but a loopback peer is refused before routing. */
export function loopbackOnly(remoteAddress: string | undefined): void {
  if (!isLoopbackAddress(remoteAddress)) throw new GatewayError('forbidden', 'A Gatehouse sidecar serves only its own pod (loopback)')
}

/**
 * The pod's principal: its record in the slice, compiled like a key (defaults, scopes, workspace
 * checks), with the pod's identity as attributes for the usage record.
 */
export function authenticateSidecar(runtime: RuntimeConfig, auth: SidecarAuth): Principal {
  const identity = auth.identity()
  if (identity === null) {
    throw new GatewayError('not_ready', 'The sidecar has not been admitted by the control plane yet', { headers: { 'retry-after': '1' } })
  }
  const key = runtime.keysByHash.get(sidecarKeyHash(identity))
  if (!key) throw new GatewayError('forbidden', `The Deployment's sidecar binding no longer admits ${identity.namespace}/${identity.serviceAccount}`)
  return {
    kind: 'sidecar',
    id: key.record.id,
    workspaceId: requireDataPlaneKey(key, runtime),
    userId: null,
    scopes: key.record.scopes,
    defaultConfig: key.defaultConfig,
    key: null,
    attributes: podAnnotations(identity),
  }
}
