/**
 * `make run`'s memory (docs/operations.md, "Memory"): the embedded process started as the Makefile
 * starts it (EMBEDDED_NODE_FLAGS, examples/resources.yaml), first on a fresh data directory (PGlite
 * initdb and the migrations), then again on the directory that start left (a restart). Each start:
 * wait until it serves, send requests (refused ones: no key, no upstream) and /metrics scrapes,
 * idle, then read VmRSS and VmHWM from /proc.
 *
 *   node test/bench/embedded-memory.ts [--requests 100] [--idle-ms 10000] [--runs 1]
 * BENCH_LOG_LEVEL shows the process's log. Linux only (reads /proc).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { EMBEDDED_NODE_FLAGS } from '../../operator/src/cli/node-flags.ts'
import { startGatehouse } from '../helpers/processes.ts'
import { readProcessMemory } from './procfs.ts'

const RESOURCES = fileURLToPath(new URL('../../examples/resources.yaml', import.meta.url))
const { values } = parseArgs({ options: { requests: { type: 'string', default: '100' }, 'idle-ms': { type: 'string', default: '10000' }, runs: { type: 'string', default: '1' } } })
const requests = Number(values.requests)
const idleMs = Number(values['idle-ms'])
const runs = Number(values.runs)

interface Reading {
  startMs: number
  rssMb: number
  hwmMb: number
}

async function oneStart(dataDir: string): Promise<Reading> {
  const started = performance.now()
  const gatehouse = startGatehouse(['start', '--port', '0', '--data-dir', dataDir, '-f', RESOURCES], { GATEHOUSE_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', GATEHOUSE_METRICS_PORT: 'data' }, EMBEDDED_NODE_FLAGS)
  try {
    const serving = await gatehouse.waitForLog((line) => line.msg === 'Gatehouse is serving', 120_000)
    const startMs = performance.now() - started
    const url = serving.url!
    for (let index = 0; index < requests; index++) {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      })
      await response.arrayBuffer()
      if (index % 10 === 0) await (await fetch(`${url}/metrics`)).arrayBuffer()
    }
    await new Promise((resolve) => setTimeout(resolve, idleMs))
    const memory = readProcessMemory(gatehouse.child.pid!)
    return { startMs, rssMb: (memory?.rssKb ?? NaN) / 1024, hwmMb: (memory?.hwmKb ?? NaN) / 1024 }
  } finally {
    await gatehouse.stop()
  }
}

const line = (label: string, reading: Reading): string =>
  `${label}: serving ${(reading.startMs / 1000).toFixed(1)} s after spawn; idle RSS ${reading.rssMb.toFixed(1)} MB, peak ${reading.hwmMb.toFixed(1)} MB\n`

process.stdout.write(`load average ${loadavg().map((value) => value.toFixed(1)).join(' ')}\n`)
for (let run = 1; run <= runs; run++) {
  const directory = await mkdtemp(join(tmpdir(), 'gatehouse-embedded-memory-'))
  try {
    process.stdout.write(line(`run ${run}, first start (fresh data dir)`, await oneStart(join(directory, 'data'))))
    process.stdout.write(line(`run ${run}, restart (existing data dir)`, await oneStart(join(directory, 'data'))))
  } finally {
    await rm(directory, { recursive: true, force: true })
  }
}
process.stdout.write(`load average ${loadavg().map((value) => value.toFixed(1)).join(' ')}\n`)
