/**
 * Test helper: the two store backends every store-touching suite runs against.
 * PGlite runs in memory. PostgreSQL (GATEHOUSE_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 * gets a fresh database per call, dropped afterwards. When PostgreSQL is unreachable the backend is
 * skipped with a message, except under CI=true where that is a failure.
 */
import { createHash, randomBytes } from 'node:crypto'
import { readFile, rename, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { generateEncryptionKey } from '../crypto/envelope.ts'
import { openStore, storeOnDatabase, type Store } from './index.ts'
import { loadMigrations, migrate } from './migrate.ts'
import { openPgliteDatabase, type PgliteDatabase } from './pglite-driver.ts'

export const TEST_ENCRYPTION_KEY = `test:${generateEncryptionKey()}`

const ADMIN_URL = process.env.GATEHOUSE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export interface TestBackend {
  name: 'pglite' | 'postgres'
  /** Why this backend is skipped in this run, or null. */
  skip: string | null
  /** Opens a fresh, empty, migrated store; `dispose` closes it and drops what it created. */
  open(): Promise<{ store: Store; dispose: () => Promise<void>; url?: string }>
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.end()
    return true
  } catch {
    return false
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/**
 * A fresh in-memory PGlite database with the migrations already applied. The first test process
 * to need one migrates an empty database and leaves its dump in the temp directory (named by a
 * hash of the migrations, so a new migration makes a new template); every later database loads
 * that dump instead of running initdb and the migrations again, which is most of PGlite's
 * start-up time.
 */
export async function openMigratedPglite(): Promise<PgliteDatabase> {
  const migrations = await loadMigrations()
  const digest = createHash('sha256').update(JSON.stringify(migrations)).digest('hex').slice(0, 16)
  const templatePath = join(tmpdir(), `gatehouse-pglite-template-${digest}.tar`)
  const cached = await readFile(templatePath).catch(() => null)
  if (cached) return openPgliteDatabase(null, { loadDataDir: new Blob([cached]) })
  const db = await openPgliteDatabase(null)
  await migrate(db)
  const dump = Buffer.from(await (await db.dump()).arrayBuffer())
  // Write-then-rename: concurrent test processes never read a half-written template.
  const partial = `${templatePath}.${process.pid}.${randomBytes(4).toString('hex')}`
  await writeFile(partial, dump)
  await rename(partial, templatePath)
  return db
}

/** A store over a fresh in-memory PGlite copied from the migrated template. */
export async function openTestPgliteStore(encryptionKey: string | undefined = TEST_ENCRYPTION_KEY): Promise<Store> {
  return storeOnDatabase(await openMigratedPglite(), encryptionKey === undefined ? {} : { encryptionKey })
}

const pgliteBackend: TestBackend = {
  name: 'pglite',
  skip: null,
  async open() {
    const store = await openTestPgliteStore()
    return { store, dispose: () => store.close() }
  },
}

/** A fresh, empty PostgreSQL database for one test run; `drop` removes it. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const database = `gatehouse_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  // The name is generated above from hex digits only; CREATE DATABASE cannot take a parameter.
  await admin.query(`CREATE DATABASE ${database}`)
  await admin.end()
  return {
    url: withDatabase(ADMIN_URL, database),
    async drop() {
      const dropper = new pg.Client({ connectionString: ADMIN_URL })
      await dropper.connect()
      await dropper.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      await dropper.end()
    },
  }
}

const postgresBackend: TestBackend = {
  name: 'postgres',
  skip: null,
  async open() {
    const { url, drop } = await createTestDatabase()
    const store = await openStore({ kind: 'postgres', url, encryptionKey: TEST_ENCRYPTION_KEY, maxConnections: 4 })
    return {
      store,
      url,
      async dispose() {
        await store.close()
        await drop()
      },
    }
  },
}

/** Both backends; PostgreSQL carries a skip reason when unreachable (a failure under CI=true). */
export async function testBackends(): Promise<TestBackend[]> {
  if (await postgresReachable()) return [pgliteBackend, postgresBackend]
  const host = new URL(ADMIN_URL).host
  if (process.env.CI === 'true') throw new Error(`PostgreSQL at ${host} is unreachable and CI=true requires it`)
  const skip = `PostgreSQL at ${host} is unreachable; skipping the PostgreSQL backend`
  console.warn(`[store tests] ${skip}`)
  return [pgliteBackend, { ...postgresBackend, skip }]
}
