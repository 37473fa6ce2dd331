/**
 * Applies operator/src/store/migrations/NNNN_name.sql in order, each once, each in its own
 * transaction. An advisory lock serialises control-plane replicas starting at the same time.
 */
import { readdir, readFile } from 'node:fs/promises'
import type { SqlDatabase } from './sql.ts'

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url)
const FILE_PATTERN = /^(\d{4})_([a-z0-9_]+)\.sql$/
/** Arbitrary constant naming "the Gatehouse migration lock" for pg_advisory_xact_lock. */
const MIGRATION_LOCK_ID = 724_310_001

export interface Migration {
  version: number
  name: string
  sql: string
}

export async function loadMigrations(): Promise<Migration[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((file) => file.endsWith('.sql')).sort()
  const migrations: Migration[] = []
  for (const file of files) {
    const match = FILE_PATTERN.exec(file)
    if (!match) throw new Error(`migration file ${file} does not match NNNN_name.sql`)
    migrations.push({ version: Number(match[1]), name: match[2]!, sql: await readFile(new URL(file, MIGRATIONS_DIR), 'utf8') })
  }
  return migrations
}

/** Returns the versions applied by this call. */
export async function migrate(db: SqlDatabase): Promise<number[]> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID])
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
  })
  const applied: number[] = []
  for (const migration of await loadMigrations()) {
    const ran = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID])
      const done = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version])
      if (done.length > 0) return false
      await tx.script(migration.sql)
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
      return true
    })
    if (ran) applied.push(migration.version)
  }
  return applied
}
