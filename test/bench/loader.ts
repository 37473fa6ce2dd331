/**
 * The load generator as its own process (load.ts, forked), so its CPU is never the measured
 * server's: a job goes in over IPC, its result comes back.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AlternatingJob, LoadJob, LoadMessage, LoadResult } from './load.ts'
import { track } from './processes.ts'

export class Loader {
  readonly child: ChildProcess

  constructor() {
    this.child = fork(join(dirname(fileURLToPath(import.meta.url)), 'load.ts'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    track(this.child)
  }

  run(job: LoadJob): Promise<LoadResult> {
    return this.#send(job, (message) => (message.kind === 'result' ? message.result : null))
  }

  /** One result per target, in the job's order. */
  runAlternating(job: AlternatingJob): Promise<LoadResult[]> {
    return this.#send(job, (message) => (message.kind === 'results' ? message.results : null))
  }

  #send<T>(job: LoadJob | AlternatingJob, read: (message: LoadMessage) => T | null): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`load generator exited (code ${code})`))
      this.child.once('exit', onExit)
      this.child.once('message', (message: LoadMessage) => {
        this.child.off('exit', onExit)
        const answer = read(message)
        if (answer !== null) resolve(answer)
        else reject(new Error(`load generator: ${message.kind === 'error' ? message.message : `an answer of kind '${message.kind}' to a ${job.mode} job`}`))
      })
      this.child.send(job)
    })
  }
}
