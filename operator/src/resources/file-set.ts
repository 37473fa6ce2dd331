/**
 * A resources file set as embedded mode uses it: checked whole (every object, every reference),
 * applied as one transaction that also removes the rows of objects no longer declared, and,
 * while Gatehouse runs, watched: an edit is re-checked and re-applied, and a broken edit leaves
 * the running state as it was and logs every problem.
 */
import { unwatchFile, watchFile } from 'node:fs'
import type { Logger } from 'pino'
import type { Store } from '../store/index.ts'
import { applyResources } from './apply.ts'
import { fileSecretResolver, formatProblem, problemError, readResourceFiles, type FileProblem, type ReadFiles } from './files.ts'
import { namesOutside, pruneManagedRows } from './managed-rows.ts'
import { checkReferences, type KnownNames } from './references.ts'

export interface CheckedFileSet {
  read: ReadFiles
  /** Every problem: syntax, shape, duplicates, references. Empty: the set can be applied. */
  problems: FileProblem[]
}

/** Reads and checks a file set; `known` names rows outside the files that references may use. */
export async function checkFileSet(paths: readonly string[], env: NodeJS.ProcessEnv, known?: KnownNames): Promise<CheckedFileSet> {
  const read = await readResourceFiles(paths)
  const references = checkReferences(read, { ...fileSecretResolver(read, env), ...(known ? { known } : {}) })
  return { read, problems: [...read.problems, ...references] }
}

export interface FileSetTarget {
  store: Store
  organizationId: string
  env: NodeJS.ProcessEnv
}

/**
 * Checks the set against the store's other rows, then applies it and prunes in one transaction.
 * Throws the first problem (a ResourceError naming file, line, object and field).
 */
export async function applyFileSet(target: FileSetTarget, paths: readonly string[]): Promise<CheckedFileSet> {
  const known = await namesOutside(target.store, target.organizationId, 'file')
  const checked = await checkFileSet(paths, target.env, known)
  if (checked.problems.length > 0) throw Object.assign(problemError(checked.problems[0]!), { problems: checked.problems })
  const context = { organizationId: target.organizationId, managedBy: 'file' as const, ...fileSecretResolver(checked.read, target.env) }
  await applyResources(target.store, context, checked.read.resources, (tx, appliedIds) => pruneManagedRows(tx, target.organizationId, 'file', appliedIds))
  return checked
}

export interface FileSetWatch {
  /** Resolves once the edits seen so far have been handled (tests). */
  settled(): Promise<void>
  close(): void
}

/** How often the files' modification times are polled: an editor's save-by-rename is seen too. */
const POLL_INTERVAL_MS = 200

export function watchFileSet(target: FileSetTarget, paths: readonly string[], logger: Logger): FileSetWatch {
  let running: Promise<void> = Promise.resolve()
  let pending = false
  const reapply = async (): Promise<void> => {
    pending = false
    try {
      const checked = await applyFileSet(target, paths)
      logger.info({ files: paths, objects: checked.read.resources.length }, 'resources files applied')
    } catch (error) {
      const problems = (error as { problems?: FileProblem[] }).problems
      logger.error(
        { files: paths, problems: problems ? problems.map(formatProblem) : [(error as Error).message] },
        'resources files not applied; the previous state keeps serving',
      )
    }
  }
  const onChange = (): void => {
    // Edits that arrive while one is applied are folded into one more pass.
    if (pending) return
    pending = true
    running = running.then(reapply)
  }
  for (const path of paths) watchFile(path, { interval: POLL_INTERVAL_MS }, onChange)
  return {
    settled: () => running,
    close: () => {
      for (const path of paths) unwatchFile(path, onChange)
    },
  }
}
