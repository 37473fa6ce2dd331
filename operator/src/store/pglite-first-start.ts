/**
 * A first start on an empty data directory: PGlite's initdb (a second WASM instance beside the
 * database's own) and the first migrations grow the process's WebAssembly memory to about 580 MB,
 * and WebAssembly memory is never given back, so a first `make run` idled about 75 MB above a
 * restart (docs/operations.md, "Memory"). Closing and reopening did not help without an explicit
 * GC, and a worker thread was worse (same process). So a child process (node with this process's
 * flags) creates the database and exits; this process then opens it as on a restart.
 *
 * The child works in a temporary directory beside the data directory, which is renamed into place
 * only once the database is migrated: an interrupted first start never leaves a half-initialised
 * data directory behind (at most a `<dir>.init-*` sibling, which is never read).
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { access, mkdir, mkdtemp, readdir, rename, rm, rmdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * Beside this module: the TypeScript source, or in the production build (operator/scripts/bundle.ts),
 * where this code sits in a chunk in dist/, the child's own entry there.
 */
const CHILD_SCRIPT = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './pglite-init-child.ts' : './pglite-init-child.mjs', import.meta.url))
/** The end of the child's stderr kept for the error message (its stack, PGlite's initdb output). */
const STDERR_TAIL_CHARS = 4000

export interface FirstStartOptions {
  /** The child's command line (default: this node, its flags, pglite-init-child.ts); tests make it fail. */
  command?: readonly string[]
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false)
}

/** Whether `dataDir` already holds a database (PGlite's own test: a PG_VERSION file). */
export async function hasPgliteDatabase(dataDir: string): Promise<boolean> {
  return exists(join(dataDir, 'PG_VERSION'))
}

/** This process's flags for the child; an inspector port would collide with this process's. */
function childNodeFlags(): string[] {
  return process.execArgv.filter((flag) => !/^--(inspect|debug)/.test(flag))
}

async function runChild(command: readonly string[], target: string): Promise<void> {
  const [executable, ...args] = command
  const child = spawn(executable!, [...args, target], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    stderr = (stderr + text).slice(-STDERR_TAIL_CHARS)
  })
  // 'close' comes after stderr's last chunk; `once` rejects if the child cannot be spawned.
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null]
  if (code === 0) return
  const how = signal ? `was killed by ${signal}` : `exited with status ${code}`
  throw new Error(`initialising the embedded database failed: the initdb process ${how}${stderr.trim() ? `:\n${stderr.trim()}` : ' with no output'}`)
}

/**
 * Makes sure `dataDir` holds a migrated PGlite database, creating it in a child process when it
 * does not. An existing empty directory is filled; one that holds other files is refused rather
 * than touched.
 */
export async function ensurePgliteDataDir(dataDir: string, options: FirstStartOptions = {}): Promise<void> {
  if (await hasPgliteDatabase(dataDir)) return
  const present = await readdir(dataDir).catch(() => null)
  if (present !== null && present.length > 0) {
    throw new Error(`${dataDir} holds files but no database (no PG_VERSION): not a PGlite data directory, or one left by an interrupted start of an older version; move it away to start afresh`)
  }
  await mkdir(dirname(dataDir), { recursive: true, mode: 0o700 })
  const temporary = await mkdtemp(`${dataDir}.init-`)
  try {
    await runChild(options.command ?? [process.execPath, ...childNodeFlags(), CHILD_SCRIPT], temporary)
    if (!(await hasPgliteDatabase(temporary))) throw new Error(`initialising the embedded database failed: the initdb process left no database in ${temporary}`)
    if (present !== null) await rmdir(dataDir).catch(() => {})
    await rename(temporary, dataDir).catch(async (error: unknown) => {
      // Another process starting on the same directory got there first: use its database.
      if (!(await hasPgliteDatabase(dataDir))) throw error
    })
  } finally {
    await rm(temporary, { recursive: true, force: true })
  }
}
