/** Embedded backend: PGlite (PostgreSQL compiled to WASM) in a data directory or in memory. */
import { PGlite, type Transaction } from '@electric-sql/pglite'
import type { SqlDatabase, SqlExecutor } from './sql.ts'
import { rethrow } from './errors.ts'

function executorOf(target: PGlite | Transaction): SqlExecutor {
  return {
    async query<Row>(text: string, params: readonly unknown[] = []) {
      const result = await target.query<Row>(text, params as unknown[]).catch(rethrow)
      return result.rows
    },
    async script(text: string) {
      await target.exec(text).catch(rethrow)
    },
  }
}

export interface PgliteDatabase extends SqlDatabase {
  /** The whole data directory as an uncompressed tarball (to seed other instances). */
  dump(): Promise<Blob>
}

/**
 * PostgreSQL's defaults are sized for a server (128 MB shared buffers, 64 MB maintenance memory);
 * in WASM every page touched stays in the process. The admin store is a few megabytes of rows,
 * so these bounds cut the embedded process's RSS by about 110 MB (docs/operations.md) with
 * no measurable cost to admin or snapshot queries.
 */
export const PGLITE_SETTINGS: readonly string[] = [
  'shared_buffers=16MB',
  'wal_buffers=1MB',
  'work_mem=2MB',
  'maintenance_work_mem=16MB',
  'temp_buffers=2MB',
]

/** `loadDataDir`: start from a dumped data directory (tests start from a migrated template). */
export async function openPgliteDatabase(dataDir: string | null, options: { loadDataDir?: Blob } = {}): Promise<PgliteDatabase> {
  const db = new PGlite({
    ...(dataDir === null ? {} : { dataDir }),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    postgresqlconf: [...PGLITE_SETTINGS],
  })
  await db.waitReady
  const base = executorOf(db)
  return {
    kind: 'pglite',
    query: base.query,
    script: base.script,
    transaction: (fn) => db.transaction((tx) => fn(executorOf(tx))),
    // One process, no peers: the in-process change feed already reaches every listener.
    listen: async () => async () => {},
    notify: async () => {},
    close: () => db.close(),
    dump: async () => db.dumpDataDir('none'),
  }
}
