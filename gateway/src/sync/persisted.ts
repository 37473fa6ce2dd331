/**
 * The last good snapshot on local disk, sealed, so a gateway restarted while the control plane is
 * down starts serving from it. Written atomically (temp file + rename) after each applied snapshot.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { Keyring } from '../snapshot/envelope.ts'
import { SNAPSHOT_SEAL_CONTEXT } from '../snapshot/sync-protocol.ts'

export async function persistSnapshot(path: string, keyring: Keyring, snapshot: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  const temporary = `${path}.${process.pid}.tmp`
  await writeFile(temporary, keyring.seal(JSON.stringify(snapshot), SNAPSHOT_SEAL_CONTEXT), { mode: 0o600 })
  await rename(temporary, path)
}

/** Returns the persisted snapshot, or null when there is none; a file that fails to open throws. */
export async function loadPersistedSnapshot(path: string, keyring: Keyring): Promise<unknown> {
  let sealed: string
  try {
    sealed = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  return JSON.parse(keyring.open(sealed.trim(), SNAPSHOT_SEAL_CONTEXT)) as unknown
}
