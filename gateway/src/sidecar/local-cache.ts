/**
 * What a sidecar keeps across restarts of its container, in the pod's memory-backed emptyDir: the
 * last good snapshot and the shared-counter settings (both sealed), the key that seals them, and
 * the identity the control plane last confirmed. The key never leaves the pod and is made by the sidecar itself; it only keeps the
 * cached credentials out of plain text. A restarted sidecar serves from here at once.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseKeyring, type Keyring } from '../snapshot/envelope.ts'
import { decodeSidecarIdentity, encodeSidecarIdentity, type SidecarIdentity } from '../snapshot/sidecar-seal.ts'
import { SIDECAR_SETTINGS_EVENT, type SidecarSettings } from '../snapshot/sync-protocol.ts'

export interface SidecarCache {
  keyring: Keyring
  snapshotPath: string
  identity: SidecarIdentity | null
  saveIdentity(identity: SidecarIdentity): Promise<void>
  /** The settings last received (they hold the Redis password: kept sealed). */
  settings: SidecarSettings | null
  saveSettings(settings: SidecarSettings): Promise<void>
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return (await readFile(path, 'utf8')).trim()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

async function writeAtomic(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`
  await writeFile(temporary, text, { mode: 0o600 })
  await rename(temporary, path)
}

export async function openSidecarCache(directory: string): Promise<SidecarCache> {
  await mkdir(directory, { recursive: true, mode: 0o700 })
  const keyPath = join(directory, 'cache.key')
  let key = await readOptional(keyPath)
  if (key === null) {
    key = randomBytes(32).toString('base64')
    await writeAtomic(keyPath, key)
  }
  const keyring = parseKeyring(`local:${key}`)
  const identityPath = join(directory, 'identity')
  const storedIdentity = await readOptional(identityPath)
  const settingsPath = join(directory, 'settings')
  const storedSettings = await readOptional(settingsPath)
  return {
    keyring,
    snapshotPath: join(directory, 'snapshot'),
    identity: storedIdentity === null ? null : decodeSidecarIdentity(storedIdentity),
    saveIdentity: (identity) => writeAtomic(identityPath, encodeSidecarIdentity(identity)),
    settings: storedSettings === null ? null : (JSON.parse(keyring.open(storedSettings, SIDECAR_SETTINGS_EVENT)) as SidecarSettings),
    saveSettings: (settings) => writeAtomic(settingsPath, keyring.seal(JSON.stringify(settings), SIDECAR_SETTINGS_EVENT)),
  }
}
