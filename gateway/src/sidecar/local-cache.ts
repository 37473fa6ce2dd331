/**
 * What a sidecar keeps across restarts of its container, in the pod's memory-backed emptyDir: the
 * last good snapshot (sealed), the key that seals it, and the identity the control plane last
 * confirmed. The key never leaves the pod and is made by the sidecar itself; it only keeps the
 * cached credentials out of plain text. A restarted sidecar serves from here at once.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseKeyring, type Keyring } from '../snapshot/envelope.ts'
import { decodeSidecarIdentity, encodeSidecarIdentity, type SidecarIdentity } from '../snapshot/sidecar-seal.ts'

export interface SidecarCache {
  keyring: Keyring
  snapshotPath: string
  identity: SidecarIdentity | null
  saveIdentity(identity: SidecarIdentity): Promise<void>
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
  const identityPath = join(directory, 'identity')
  const storedIdentity = await readOptional(identityPath)
  return {
    keyring: parseKeyring(`local:${key}`),
    snapshotPath: join(directory, 'snapshot'),
    identity: storedIdentity === null ? null : decodeSidecarIdentity(storedIdentity),
    saveIdentity: (identity) => writeAtomic(identityPath, encodeSidecarIdentity(identity)),
  }
}
