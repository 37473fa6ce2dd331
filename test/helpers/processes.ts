/**
 * Runs Gatehouse commands as real processes for suites that cross process boundaries (cluster
 * mode, restarts, kills). Each process logs JSON lines (pino); `waitForLog` resolves on the first
 * line matching a predicate, e.g. the line that carries the listening URL.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'

const GATEHOUSE_BIN = fileURLToPath(new URL('../../operator/bin/gatehouse.js', import.meta.url))

export interface LogLine {
  msg?: string
  url?: string
  [key: string]: unknown
}

export interface GatehouseProcess {
  readonly child: ChildProcess
  readonly lines: LogLine[]
  readonly output: string[]
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>
  /** SIGKILL: the process gets no chance to clean up (a crash). */
  kill(): Promise<void>
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>
}

/**
 * `nodeFlags`: V8 flags of the `node` command line, as a container's command carries them;
 * `script`: the command's script, the sources' by default (the production build's in test/build).
 */
export function startGatehouse(args: string[], env: Record<string, string>, nodeFlags: readonly string[] = [], script = GATEHOUSE_BIN): GatehouseProcess {
  const child = spawn(process.execPath, [...nodeFlags, script, ...args], {
    // Metrics on an ephemeral port and no drain window, so parallel processes never collide on
    // 9464 and a stop does not wait 5 s; a test that needs either sets it.
    env: { PATH: process.env.PATH ?? '', GATEHOUSE_LOG_LEVEL: 'info', GATEHOUSE_METRICS_PORT: '0', GATEHOUSE_SHUTDOWN_DELAY_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: LogLine[] = []
  const output: string[] = []
  const waiters = new Set<{ predicate: (line: LogLine) => boolean; resolve: (line: LogLine) => void }>()
  let buffered = ''
  const onData = (chunk: Buffer): void => {
    buffered += chunk.toString('utf8')
    let newline: number
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const text = buffered.slice(0, newline)
      buffered = buffered.slice(newline + 1)
      output.push(text)
      if (!text.startsWith('{')) continue
      let line: LogLine
      try {
        line = JSON.parse(text) as LogLine
      } catch {
        continue
      }
      lines.push(line)
      for (const waiter of waiters) {
        if (waiter.predicate(line)) {
          waiters.delete(waiter)
          waiter.resolve(line)
        }
      }
    }
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')))
  const exited = once(child, 'exit')

  return {
    child,
    lines,
    output,
    waitForLog(predicate, timeoutMs = 30_000) {
      const seen = lines.find(predicate)
      if (seen) return Promise.resolve(seen)
      return new Promise((resolve, reject) => {
        const waiter = { predicate, resolve: (line: LogLine) => (clearTimeout(timer), resolve(line)) }
        const timer = setTimeout(() => {
          waiters.delete(waiter)
          reject(new Error(`no matching log line within ${timeoutMs} ms; output:\n${output.slice(-30).join('\n')}`))
        }, timeoutMs)
        waiters.add(waiter)
        void exited.then(() => {
          if (!waiters.has(waiter)) return
          waiters.delete(waiter)
          clearTimeout(timer)
          reject(new Error(`process exited before the expected log line; output:\n${output.slice(-30).join('\n')}`))
        })
      })
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}

/** Waits until `check` returns true, polling; returns the elapsed milliseconds. */
export async function pollUntil(check: () => Promise<boolean>, timeoutMs = 10_000, intervalMs = 5): Promise<number> {
  const started = performance.now()
  while (performance.now() - started < timeoutMs) {
    if (await check()) return performance.now() - started
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
  throw new Error(`condition not met within ${timeoutMs} ms`)
}

/** A TCP port free on 127.0.0.1 right now (for processes that must be told their port up front). */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      probe.close(() => resolve(port))
    })
  })
}
