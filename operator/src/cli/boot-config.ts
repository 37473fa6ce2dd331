/**
 * Boot settings: read once at start from flags and environment variables. Policy never lives here;
 * it comes from the store and travels in snapshots.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateEncryptionKey } from '../crypto/envelope.ts'

export interface LocalSecrets {
  keyPepper: string
  encryptionKey: string
}

/**
 * Embedded mode on a laptop must start with no setup, so the key pepper and the credential
 * encryption key are generated once and kept in the data directory (mode 0600). Setting
 * GATEHOUSE_KEY_PEPPER and GATEHOUSE_ENCRYPTION_KEY overrides them, which is what clusters do:
 * there they come from a Secret and never sit beside the database.
 */
export async function localSecrets(dataDir: string | null, env: NodeJS.ProcessEnv): Promise<LocalSecrets> {
  const fromEnv = { keyPepper: env.GATEHOUSE_KEY_PEPPER, encryptionKey: env.GATEHOUSE_ENCRYPTION_KEY }
  if (fromEnv.keyPepper && fromEnv.encryptionKey) return fromEnv as LocalSecrets
  let stored: Partial<LocalSecrets> = {}
  const path = dataDir === null ? null : join(dataDir, 'local-secrets.json')
  if (path !== null) {
    stored = await readFile(path, 'utf8').then((text) => JSON.parse(text) as Partial<LocalSecrets>, () => ({}))
  }
  const secrets: LocalSecrets = {
    keyPepper: fromEnv.keyPepper ?? stored.keyPepper ?? randomBytes(32).toString('base64url'),
    encryptionKey: fromEnv.encryptionKey ?? stored.encryptionKey ?? generateEncryptionKey(),
  }
  if (path !== null && (stored.keyPepper !== secrets.keyPepper || stored.encryptionKey !== secrets.encryptionKey)) {
    await mkdir(dataDir!, { recursive: true, mode: 0o700 })
    await writeFile(path, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 })
  }
  return secrets
}

export function parsePort(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port '${value}'`)
  return port
}
