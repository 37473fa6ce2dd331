/**
 * Sidecar start-up and idle memory, the two numbers sidecar mode promises (< 1 s to serve from the
 * cached snapshot, < 80 MB resident when idle). A cache directory is prepared as a sidecar leaves
 * it (the binding's slice sealed with the pod-local key, the confirmed identity), the control plane
 * is unreachable (a closed loopback port), and `gatehouse sidecar` is started as the webhook
 * writes it. Prints, per run: spawn → first chat completion answered on loopback (against the
 * OpenAI simulator, no key), and the resident set after idling.
 *
 * The sidecar runs as the image runs it: the production build of the command (operator/scripts/
 * bundle.ts, built here into bench-results/dist-command), the image's environment (SERVER_ENV) and
 * the webhook's (SIDECAR_ENV). The image ships a V8 compile cache warmed at build time (Dockerfile,
 * NODE_COMPILE_CACHE), so a sidecar starts with its modules already compiled. Here the first run
 * fills a cache shared by the runs (it is reported as cold and left out of the median, unless it
 * is the only run). BENCH_FROM_SOURCES=1 runs the TypeScript sources instead of the build.
 *
 *   node test/bench/sidecar-start.ts [--runs 4] [--idle-ms 5000]     (also part of `make bench`)
 * BENCH_NODE_OPTIONS replaces the sidecar's NODE_OPTIONS, BENCH_NODE_ARGS the V8 flags of its command
 * line (SIDECAR_NODE_FLAGS); BENCH_LOG_LEVEL shows its log. A missed budget is reported as FAIL,
 * never as an exit status (as test/bench/run.ts): only a broken run fails.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { SERVER_ENV } from '../../operator/src/cli/node-flags.ts'
import { COMMAND_ENTRY } from '../../operator/scripts/bundle.ts'
import { SIDECAR_ENV, SIDECAR_NODE_FLAGS } from '../../operator/src/webhook/inject.ts'
import { freePort } from '../helpers/processes.ts'
import { prepareSidecarCache } from '../helpers/sidecar-cache.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import { readProcessMemory } from './procfs.ts'
import { builtOrSources } from './server-env.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const GATEHOUSE_BIN = await builtOrSources(ROOT, 'dist-command', COMMAND_ENTRY, 'gatehouse')
const { values } = parseArgs({ options: { runs: { type: 'string', default: '4' }, 'idle-ms': { type: 'string', default: '5000' } } })
const runs = Number(values.runs)
const idleMs = Number(values['idle-ms'])
const BUDGET_START_MS = 1000
const BUDGET_RSS_MB = 80

let lastBody = ''

async function chat(url: string): Promise<number> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  })
  lastBody = await response.text()
  return response.status
}

async function oneRun(upstream: string, compileCache: string): Promise<{ startMs: number; rssMb: number; hwmMb: number }> {
  const directory = await mkdtemp(join(tmpdir(), 'gatehouse-sidecar-bench-'))
  await prepareSidecarCache(directory, { upstream, upstreamKey: 'sk-bench' })
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const started = performance.now()
  // The webhook's command: node, its V8 flags, the CLI (BENCH_NODE_ARGS replaces the flags).
  const nodeFlags = process.env.BENCH_NODE_ARGS === undefined ? SIDECAR_NODE_FLAGS : process.env.BENCH_NODE_ARGS.split(' ').filter(Boolean)
  const child = spawn(process.execPath, [...nodeFlags, GATEHOUSE_BIN, 'sidecar'], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      // As the image and the webhook set it (node-flags.ts, operator/src/webhook/inject.ts).
      ...SERVER_ENV,
      ...SIDECAR_ENV,
      ...(process.env.BENCH_NODE_OPTIONS === undefined ? {} : { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS }),
      // As the image sets it (Dockerfile).
      NODE_COMPILE_CACHE: compileCache,
      GATEHOUSE_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      // The control plane is down: the sidecar must serve from its cache alone.
      GATEHOUSE_CONTROL_PLANE_URL: `http://127.0.0.1:${await freePort()}`,
      GATEHOUSE_SIDECAR_DEPLOYMENT: 'ai-config/ai',
      GATEHOUSE_SIDECAR_TOKEN_FILE: join(directory, 'absent-token'),
      GATEHOUSE_SNAPSHOT_CACHE: directory,
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_HEALTH_HOST: '127.0.0.1',
      GATEHOUSE_HEALTH_PORT: '0',
    },
    stdio: ['ignore', process.env.BENCH_LOG_LEVEL ? 'inherit' : 'ignore', 'inherit'],
  })
  try {
    let startMs = -1
    while (performance.now() - started < 60_000) {
      const status = await chat(url).catch(() => 0)
      if (status === 200) {
        startMs = performance.now() - started
        break
      }
      if (status !== 0) throw new Error(`the sidecar answered HTTP ${status}: ${lastBody}`)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    if (startMs < 0) throw new Error('the sidecar did not serve within 60 s')
    await new Promise((resolve) => setTimeout(resolve, idleMs))
    const memory = readProcessMemory(child.pid!)
    return { startMs, rssMb: (memory?.rssKb ?? NaN) / 1024, hwmMb: (memory?.hwmKb ?? NaN) / 1024 }
  } finally {
    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('exit', resolve))
    await rm(directory, { recursive: true, force: true })
  }
}

const simulator = await startOpenAISimulator({ chunks: 2, apiKeys: ['sk-bench'] })
const compileCache = await mkdtemp(join(tmpdir(), 'gatehouse-sidecar-compile-cache-'))
try {
  const results = []
  for (let run = 0; run < runs; run++) results.push(await oneRun(simulator.baseUrl, compileCache))
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!
  for (const [index, result] of results.entries()) {
    const note = index === 0 ? ' (cold compile cache)' : ''
    process.stdout.write(`sidecar run ${index + 1}${note}: first answer ${result.startMs.toFixed(0)} ms after spawn; idle RSS ${result.rssMb.toFixed(1)} MB (peak ${result.hwmMb.toFixed(1)} MB)\n`)
  }
  const counted = results.length > 1 ? results.slice(1) : results
  const startMs = median(counted.map((r) => r.startMs))
  const rssMb = median(counted.map((r) => r.rssMb))
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL')
  process.stdout.write(`Sidecar targets (median of ${counted.length}, warm compile cache; reported, never fail the make target):\n`)
  process.stdout.write(`  [${verdict(startMs < BUDGET_START_MS)}] serving from the cached snapshot: ${startMs.toFixed(0)} ms after spawn (needs < ${BUDGET_START_MS} ms)\n`)
  process.stdout.write(`  [${verdict(rssMb < BUDGET_RSS_MB)}] idle resident memory: ${rssMb.toFixed(1)} MB (needs < ${BUDGET_RSS_MB} MB)\n`)
} finally {
  await simulator.close()
  await rm(compileCache, { recursive: true, force: true })
}
