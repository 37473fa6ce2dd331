/**
 * Encryption at rest for provider credentials and for snapshots (persisted by gateways, and sealed
 * on the wire between the control plane and gateways): AES-256-GCM with a random 96-bit IV per value and
 * an "associated data" context (e.g. `provider:<id>`) so a ciphertext copied onto another row does
 * not decrypt. The envelope names the key id that sealed it, so the key can be rotated: add a new
 * key first in GATEHOUSE_ENCRYPTION_KEY, re-seal, then drop the old one.
 *
 * GATEHOUSE_ENCRYPTION_KEY: either one base64 32-byte key, or `kid:base64key,kid2:base64key` where
 * the first entry seals and every entry opens. Envelope text: `ghe1.<kid>.<iv>.<tag>.<ciphertext>`
 * (base64url parts).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

const VERSION = 'ghe1'
const KEY_BYTES = 32
const IV_BYTES = 12

export interface Keyring {
  readonly primaryKeyId: string
  seal(plaintext: string, context: string): string
  open(envelope: string, context: string): string
  /** The key id an envelope was sealed with (to find values still under an old key). */
  keyIdOf(envelope: string): string
}

export class KeyringError extends Error {
  override name = 'KeyringError'
}

export function parseKeyring(spec: string): Keyring {
  const entries = spec.split(',').map((part) => part.trim()).filter(Boolean)
  if (entries.length === 0) throw new KeyringError('GATEHOUSE_ENCRYPTION_KEY is empty')
  const keys = new Map<string, Buffer>()
  for (const entry of entries) {
    const colon = entry.indexOf(':')
    const material = Buffer.from(colon === -1 ? entry : entry.slice(colon + 1), 'base64')
    if (material.length !== KEY_BYTES) throw new KeyringError('each GATEHOUSE_ENCRYPTION_KEY entry must be 32 bytes in base64')
    // Without an explicit id, a fingerprint of the key serves (stable, and reveals nothing usable).
    const keyId = colon === -1 ? createHash('sha256').update(material).digest('hex').slice(0, 12) : entry.slice(0, colon)
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(keyId)) throw new KeyringError('key ids may use letters, digits, - and _')
    if (keys.has(keyId)) throw new KeyringError(`duplicate key id ${keyId}`)
    keys.set(keyId, material)
  }
  const primaryKeyId = keys.keys().next().value as string
  return {
    primaryKeyId,
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', keys.get(primaryKeyId)!, iv)
      cipher.setAAD(Buffer.from(context))
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      return [VERSION, primaryKeyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.')
    },
    open(envelope, context) {
      const [version, keyId, iv, tag, ciphertext] = envelope.split('.')
      if (version !== VERSION || !keyId || iv === undefined || tag === undefined || ciphertext === undefined) throw new KeyringError('not a Gatehouse envelope')
      const key = keys.get(keyId)
      if (!key) throw new KeyringError(`encryption key ${keyId} is not configured`)
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
      decipher.setAAD(Buffer.from(context))
      decipher.setAuthTag(Buffer.from(tag, 'base64url'))
      try {
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8')
      } catch {
        // Never include the ciphertext or key: only that it failed.
        throw new KeyringError(`envelope under key ${keyId} failed authentication`)
      }
    },
    keyIdOf: envelopeKeyId,
  }
}

/** The key id an envelope names; needs no key material. */
export function envelopeKeyId(envelope: string): string {
  const [version, keyId] = envelope.split('.')
  if (version !== VERSION || !keyId) throw new KeyringError('not a Gatehouse envelope')
  return keyId
}

/** A fresh random key in the env format, for `gatehouse` to suggest on first start. */
export function generateEncryptionKey(): string {
  return randomBytes(KEY_BYTES).toString('base64')
}
