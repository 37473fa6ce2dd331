/**
 * The sidecar's connection to the control plane (protocol in snapshot/sync-protocol.ts): each
 * connection reads the pod's projected ServiceAccount token afresh (the kubelet rotates it), makes
 * a new X25519 key pair, and takes the control plane's public key and the authenticated identity
 * from the answer's headers, and the shared-counter settings from the stream. ACKs and usage
 * batches carry the same token (`sidecarRequests`).
 */
import { readFile } from 'node:fs/promises'
import { request } from '../core/undici.ts'
import type { Dispatcher } from 'undici'
import type { SyncConnection } from '../sync/client.ts'
import { decodeSidecarIdentity, sidecarKeyPair, sidecarKeyring, type SidecarIdentity } from '../snapshot/sidecar-seal.ts'
import { SIDECAR_ACK_PATH, SIDECAR_IDENTITY_HEADER, SIDECAR_KEY_HEADER, SIDECAR_SETTINGS_EVENT, SIDECAR_STREAM_PATH, type SidecarSettings, type SnapshotAck } from '../snapshot/sync-protocol.ts'

export interface SidecarChannelOptions {
  controlPlaneUrl: string
  /** `namespace/name` of the Gatehouse Deployment object whose binding admits this pod. */
  deployment: string
  tokenFile: string
  onIdentity(identity: SidecarIdentity): void
  onSettings(settings: SidecarSettings): Promise<void> | void
}

/** The pod's projected token as it is now (the kubelet rewrites the file before it expires). */
export async function readServiceAccountToken(tokenFile: string): Promise<string> {
  const token = (await readFile(tokenFile, 'utf8')).trim()
  if (token === '') throw new Error(`the ServiceAccount token file ${tokenFile} is empty`)
  return token
}

/** `?deployment=...` of every sidecar request: the control plane checks the binding each time. */
export function deploymentQuery(deployment: string): string {
  return `deployment=${encodeURIComponent(deployment)}`
}

/** The sidecar's ACK: the same token and binding as its stream; the control plane names the pod. */
export function sidecarAcknowledge(options: { controlPlaneUrl: string; deployment: string; tokenFile: string; dispatcher?: Dispatcher }): (ack: SnapshotAck) => Promise<void> {
  const url = `${options.controlPlaneUrl.replace(/\/$/, '')}${SIDECAR_ACK_PATH}?${deploymentQuery(options.deployment)}`
  return async ({ generation, status, problems }) => {
    const response = await request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${await readServiceAccountToken(options.tokenFile)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ generation, status, ...(problems ? { problems } : {}) }),
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    })
    await response.body.dump()
    if (response.statusCode !== 204) throw new Error(`the control plane answered HTTP ${response.statusCode} to an ACK`)
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

export function sidecarChannel(options: SidecarChannelOptions): (after: number) => Promise<SyncConnection> {
  const base = options.controlPlaneUrl.replace(/\/$/, '')
  return async (after) => {
    const token = await readServiceAccountToken(options.tokenFile)
    const own = sidecarKeyPair()
    return {
      url: `${base}${SIDECAR_STREAM_PATH}?${deploymentQuery(options.deployment)}&after=${after}`,
      headers: { authorization: `Bearer ${token}`, [SIDECAR_KEY_HEADER]: own.publicKey },
      accept(headers) {
        const peer = single(headers[SIDECAR_KEY_HEADER])
        const identity = single(headers[SIDECAR_IDENTITY_HEADER])
        if (!peer || !identity) throw new Error('the control plane answered without a sidecar key or identity')
        const keyring = sidecarKeyring(own, peer, own.publicKey, peer)
        options.onIdentity(decodeSidecarIdentity(identity))
        return keyring
      },
      async onEvent(event, data, opener) {
        if (event !== SIDECAR_SETTINGS_EVENT) return
        await options.onSettings(JSON.parse(opener.open(data, SIDECAR_SETTINGS_EVENT)) as SidecarSettings)
      },
    }
  }
}
