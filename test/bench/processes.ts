/**
 * The benchmark's child processes: start one, wait for the JSON line it prints once ready, pin it
 * to a core, and stop every one of them (by their own pids) when the run ends, fails, or is
 * interrupted.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'

export interface Started<Ready> {
  name: string
  child: ChildProcess
  pid: number
  ready: Ready
}

const children = new Set<ChildProcess>()

export function hasTaskset(): boolean {
  return spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0
}

/**
 * Layout B of shared/reference/performance.md: the load generator and the orchestrator on one
 * core, every measured server (and the simulator) on the other.
 */
export const LOADER_CORE = 0
export const SERVER_CORE = 1

/** Pins every thread of `pid` to `core`; threads created later inherit it. */
export function pin(pid: number, core: number): void {
  const done = spawnSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' })
  if (done.status !== 0) throw new Error(`taskset could not pin pid ${pid} to core ${core}`)
}

/** Starts `node <args>` and resolves with the first stdout line parsed as JSON. */
export function startNode<Ready>(name: string, args: string[], options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Started<Ready>> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env })
  children.add(child)
  child.once('exit', () => children.delete(child))
  let stderr = ''
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (text: string) => {
    // Keep the tail for the error message; a healthy child writes nothing here.
    stderr = (stderr + text).slice(-4000)
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not report ready within ${options.timeoutMs ?? 20_000} ms`)), options.timeoutMs ?? 20_000)
    const lines = createInterface({ input: child.stdout! })
    const fail = (error: Error): void => {
      clearTimeout(timer)
      lines.close()
      reject(new Error(`${error.message}${stderr ? `\n${name} stderr:\n${stderr}` : ''}`))
    }
    child.once('exit', (code, signal) => fail(new Error(`${name} exited early (code ${code}, signal ${signal})`)))
    child.once('error', fail)
    lines.once('line', (line) => {
      clearTimeout(timer)
      lines.close()
      // Nothing else is read from stdout; drain it so the child never blocks on a full pipe.
      child.stdout!.resume()
      try {
        resolve({ name, child, pid: child.pid!, ready: JSON.parse(line) as Ready })
      } catch {
        reject(new Error(`${name} printed a line that is not JSON: ${line.slice(0, 200)}`))
      }
    })
  })
}

/** Registers an already-spawned child (the IPC load generator) for cleanup. */
export function track(child: ChildProcess): void {
  children.add(child)
  child.once('exit', () => children.delete(child))
}

/** SIGTERM each child, then SIGKILL whatever is still there after `graceMs`. */
export async function stopAll(graceMs = 3000): Promise<void> {
  const running = [...children]
  await Promise.all(
    running.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve()
          const timer = setTimeout(() => {
            child.kill('SIGKILL')
            resolve()
          }, graceMs)
          child.once('exit', () => {
            clearTimeout(timer)
            resolve()
          })
          child.kill('SIGTERM')
        }),
    ),
  )
}

/** Last resort on a synchronous exit path: no waiting is possible there. */
export function killAllNow(): void {
  for (const child of children) child.kill('SIGKILL')
}
