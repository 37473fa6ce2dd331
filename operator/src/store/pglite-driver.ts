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

/** `loadDataDir`: start from a dumped data directory (tests start from a migrated template). */
export async function openPgliteDatabase(dataDir: string | null, options: { loadDataDir?: Blob } = {}): Promise<PgliteDatabase> {
  const db = new PGlite({ ...(dataDir === null ? {} : { dataDir }), ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}) })
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
