/**
 * Sealing between the control plane and one sidecar connection without a shared secret: each side
 * makes an ephemeral X25519 key pair, they exchange public keys in SIDECAR_KEY_HEADER, and both
 * derive the same AES-256-GCM key (HKDF-SHA256 over the shared secret, bound to both public keys).
 * The derived key is used as a one-key Keyring, so sealing and opening are the envelope code every
 * snapshot already goes through. A new connection is a new key pair: nothing is reused.
 */
import { createHash, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, type KeyObject } from 'node:crypto'
import { parseKeyring, type Keyring } from './envelope.ts'

const INFO = 'gatehouse sidecar snapshot v1'

export interface SidecarKeyPair {
  privateKey: KeyObject
  /** The public key as sent in the header: base64url of its SPKI DER. */
  publicKey: string
}

export function sidecarKeyPair(): SidecarKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('x25519')
  return { privateKey, publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64url') }
}

/** Throws on anything that is not an X25519 public key. */
export function parseSidecarPublicKey(text: string): KeyObject {
  if (text.length > 200) throw new Error('sidecar public key too long')
  const key = createPublicKey({ key: Buffer.from(text, 'base64url'), format: 'der', type: 'spki' })
  if (key.asymmetricKeyType !== 'x25519') throw new Error('sidecar public key is not X25519')
  return key
}

/**
 * The connection's keyring. `sidecarPublic` and `controlPlanePublic` are the header texts, in that
 * order on both sides, so both derive the same key.
 */
export function sidecarKeyring(own: SidecarKeyPair, peerPublic: string, sidecarPublic: string, controlPlanePublic: string): Keyring {
  const shared = diffieHellman({ privateKey: own.privateKey, publicKey: parseSidecarPublicKey(peerPublic) })
  const salt = createHash('sha256').update(sidecarPublic).update('.').update(controlPlanePublic).digest()
  const key = Buffer.from(hkdfSync('sha256', shared, salt, INFO, 32))
  return parseKeyring(`sidecar:${key.toString('base64')}`)
}

/** The identity the control plane authenticated, as the sidecar receives it. */
export interface SidecarIdentity {
  namespace: string
  serviceAccount: string
  /** From the bound token; null when the token was not bound to a pod. */
  podName: string | null
  /** The workspace (id) the binding admits the pod to. */
  workspaceId: string
}

/**
 * Hash of the API key record that stands for a sidecar's pod in its snapshot. Not HMAC-of-a-key:
 * no presented key can hash to it (presented keys are checked with the pepper, which sidecars do
 * not have), so the record is reachable only through the loopback authentication of sidecar mode.
 */
export function sidecarKeyHash(identity: Pick<SidecarIdentity, 'namespace' | 'serviceAccount'>): string {
  return createHash('sha256').update(`gatehouse-sidecar:${identity.namespace}/${identity.serviceAccount}`).digest('hex')
}

export function encodeSidecarIdentity(identity: SidecarIdentity): string {
  return Buffer.from(JSON.stringify(identity)).toString('base64url')
}

export function decodeSidecarIdentity(text: string): SidecarIdentity {
  const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<SidecarIdentity>
  if (typeof value.namespace !== 'string' || typeof value.serviceAccount !== 'string' || typeof value.workspaceId !== 'string' || (value.podName !== null && typeof value.podName !== 'string')) {
    throw new Error('malformed sidecar identity')
  }
  return { namespace: value.namespace, serviceAccount: value.serviceAccount, podName: value.podName ?? null, workspaceId: value.workspaceId }
}
