/**
 * A vitest reporter that prints the slowest test files once the run ends, so `make test` shows
 * where the suite's time goes. It adds to the default reporter (it prints nothing else) and leaves
 * the exit status to vitest.
 */
import { relative } from 'node:path'
import type { Reporter, TestModule } from 'vitest/node'

/** What one file cost: import, setup and collection, then its tests and hooks. */
export function fileDurationMs(module: TestModule): number {
  const diagnostic = module.diagnostic()
  return diagnostic.environmentSetupDuration + diagnostic.prepareDuration + diagnostic.setupDuration + diagnostic.collectDuration + diagnostic.duration
}

export function slowestFilesReport(files: ReadonlyArray<{ path: string; durationMs: number }>, count: number): string {
  const slowest = [...files].sort((a, b) => b.durationMs - a.durationMs).slice(0, count)
  if (slowest.length === 0) return ''
  const lines = slowest.map(({ path, durationMs }) => `  ${(durationMs / 1000).toFixed(1).padStart(7)} s  ${path}`)
  return `\nSlowest ${slowest.length} test files:\n${lines.join('\n')}\n`
}

export default class SlowestFilesReporter implements Reporter {
  readonly #count: number

  constructor(options: { count?: number } = {}) {
    this.#count = options.count ?? 5
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const files = modules.map((module) => ({ path: relative(process.cwd(), module.moduleId), durationMs: fileDurationMs(module) }))
    process.stdout.write(slowestFilesReport(files, this.#count))
  }
}
