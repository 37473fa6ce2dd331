/**
 * A first start on an empty data directory: the database is created by a child process, renamed
 * into place only when complete, and a failing child is reported with its stderr, leaving nothing
 * behind. One test runs the real child (initdb and the migrations, several seconds); the others
 * stand in a `node -e` script for it.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadMigrations } from './migrate.ts'
import { openPgliteDatabase } from './pglite-driver.ts'
import { ensurePgliteDataDir } from './pglite-first-start.ts'

let directory: string

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'gatehouse-first-start-'))
})

afterEach(async () => {
  await rm(directory, { recursive: true, force: true })
})

/** A stand-in child: `node -e SCRIPT TARGET` (TARGET is process.argv[1] there). */
const fakeChild = (script: string): string[] => [process.execPath, '-e', script]
const WRITES_DATABASE = "require('node:fs').writeFileSync(process.argv[1] + '/PG_VERSION', '17\\n')"

describe('first start on an empty data directory', () => {
  // openStore calls ensurePgliteDataDir; test/embedded's `start` on a fresh directory goes that way.
  it('creates and migrates the database in a child process; this process opens it as on a restart', { timeout: 120_000 }, async () => {
    const dataDir = join(directory, 'data', 'db')
    await ensurePgliteDataDir(dataDir)
    expect(await readdir(join(directory, 'data'))).toEqual(['db'])
    // Migrated by the child: this process only reads.
    const db = await openPgliteDatabase(dataDir)
    const applied = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
    await db.close()
    expect(applied.map((row) => row.version)).toEqual((await loadMigrations()).map((migration) => migration.version))
  })

  it('reports a failing child with its stderr and leaves no data directory behind', async () => {
    const dataDir = join(directory, 'db')
    const failing = ensurePgliteDataDir(dataDir, { command: fakeChild(`${WRITES_DATABASE}; process.stderr.write('initdb: out of memory\\n'); process.exit(3)`) })
    await expect(failing).rejects.toThrow(/initdb process exited with status 3:\ninitdb: out of memory/)
    expect(await readdir(directory)).toEqual([])
  })

  it('reports a child killed by a signal', async () => {
    await expect(ensurePgliteDataDir(join(directory, 'db'), { command: fakeChild("process.kill(process.pid, 'SIGKILL')") })).rejects.toThrow(/initdb process was killed by SIGKILL with no output/)
    expect(await readdir(directory)).toEqual([])
  })

  it('refuses a child that exits 0 without a database', async () => {
    await expect(ensurePgliteDataDir(join(directory, 'db'), { command: fakeChild('') })).rejects.toThrow(/left no database/)
    expect(await readdir(directory)).toEqual([])
  })

  it('fills an existing empty directory and leaves an existing database alone', async () => {
    const dataDir = join(directory, 'db')
    await mkdir(dataDir)
    await ensurePgliteDataDir(dataDir, { command: fakeChild(WRITES_DATABASE) })
    expect(await readFile(join(dataDir, 'PG_VERSION'), 'utf8')).toBe('17\n')
    // A database is there now: no child runs (this one would fail).
    await ensurePgliteDataDir(dataDir, { command: fakeChild('process.exit(1)') })
    expect(await readdir(directory)).toEqual(['db'])
  })

  it('refuses a directory that holds other files, without touching them', async () => {
    const dataDir = join(directory, 'db')
    await mkdir(dataDir)
    await writeFile(join(dataDir, 'notes.txt'), 'mine')
    await expect(ensurePgliteDataDir(dataDir, { command: fakeChild(WRITES_DATABASE) })).rejects.toThrow(/holds files but no database/)
    expect(await readdir(dataDir)).toEqual(['notes.txt'])
    expect(await readdir(directory)).toEqual(['db'])
  })
})
