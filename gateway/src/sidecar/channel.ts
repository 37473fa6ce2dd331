/**
 * The sidecar's connection to the control plane (protocol in snapshot/sync-protocol.ts): each
 * connection reads the pod's projected ServiceAccount token afresh (the kubelet rotates it), makes
 * a new X25519 key pair, and takes the control plane's public key and the authenticated identity
 * from the answer's headers.
 */
import { readFile } from 'node:fs/promises'
import type { SyncConnection } from '../sync/client.ts'
import { decodeSidecarIdentity, sidecarKeyPair, sidecarKeyring, type SidecarIdentity } from '../snapshot/sidecar-seal.ts'
import { SIDECAR_IDENTITY_HEADER, SIDECAR_KEY_HEADER, SIDECAR_STREAM_PATH } from '../snapshot/sync-protocol.ts'

export interface SidecarChannelOptions {
  controlPlaneUrl: string
  /** `namespace/name` of the Gatehouse Deployment object whose binding admits this pod. */
  deployment: string
  tokenFile: string
  onIdentity(identity: SidecarIdentity): void
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

export function sidecarChannel(options: SidecarChannelOptions): (after: number) => Promise<SyncConnection> {
  const base = options.controlPlaneUrl.replace(/\/$/, '')
  return async (after) => {
    const token = (await readFile(options.tokenFile, 'utf8')).trim()
    if (token === '') throw new Error(`the ServiceAccount token file ${options.tokenFile} is empty`)
    const own = sidecarKeyPair()
    return {
      url: `${base}${SIDECAR_STREAM_PATH}?deployment=${encodeURIComponent(options.deployment)}&after=${after}`,
      headers: { authorization: `Bearer ${token}`, [SIDECAR_KEY_HEADER]: own.publicKey },
      accept(headers) {
        const peer = single(headers[SIDECAR_KEY_HEADER])
        const identity = single(headers[SIDECAR_IDENTITY_HEADER])
        if (!peer || !identity) throw new Error('the control plane answered without a sidecar key or identity')
        const keyring = sidecarKeyring(own, peer, own.publicKey, peer)
        options.onIdentity(decodeSidecarIdentity(identity))
        return keyring
      },
    }
  }
}
