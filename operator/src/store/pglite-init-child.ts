/**
 * The short-lived process behind pglite-first-start.ts: initdb and the migrations into the
 * directory given as its one argument, then exit, handing the memory they grew back to the system.
 * Exit status 0 when the directory holds a migrated database; otherwise the cause on stderr.
 */
import { migrate } from './migrate.ts'
import { openPgliteDatabase } from './pglite-driver.ts'

const target = process.argv[2]
try {
  if (!target) throw new Error('usage: pglite-init-child.ts DATA_DIR')
  const db = await openPgliteDatabase(target)
  try {
    await migrate(db)
  } finally {
    await db.close()
  }
} catch (error) {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exitCode = 1
}
