/**
 * Instructions per request of the bench gateway, counted by valgrind's callgrind: a figure that
 * does not move with the machine's load, so a change's cost can be compared while other work runs
 * (`make bench` measures CPU time, which needs a quiet machine). Slow: the gateway runs about 50×
 * slower under valgrind, so counts are over a few thousand requests.
 *
 *   node test/bench/instructions.ts [--variant plain|trace0|trace100|limits] [--stream] [--warmup 1500] [--requests 1500]
 *
 * The gateway (gateway-process.ts) starts under callgrind with collection on; after the warm-up
 * the counters are zeroed (`callgrind_control -z`), the measured requests run, and a dump
 * (`callgrind_control -d`) gives the instructions of exactly those requests, JIT included.
 * Prints one JSON line: {variant, stream, requests, instructionsPerRequest}.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { startNode, stopAll } from './processes.ts'
import { withoutOtel } from './feature-scenario.ts'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const { values: flags } = parseArgs({
  options: {
    variant: { type: 'string', default: 'plain' },
    stream: { type: 'boolean', default: false },
    warmup: { type: 'string', default: '1500' },
    requests: { type: 'string', default: '1500' },
    concurrency: { type: 'string', default: '4' },
  },
})
const variant = flags.variant!
if (!['plain', 'trace0', 'trace100'].includes(variant)) throw new Error(`unknown --variant ${variant}`)

function variantEnv(sinkUrl: string | null): NodeJS.ProcessEnv {
  const env = withoutOtel(process.env)
  if (variant === 'plain' || sinkUrl === null) return env
  return {
    ...env,
    OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: variant === 'trace100' ? '1' : '0',
  }
}

interface GatewayReady {
  url: string
  workspaceKey: string
  provider: string
}

/** Starts gateway-process.ts under callgrind and resolves with its ready line and pid. */
function startUnderCallgrind(upstreamBaseUrl: string, env: NodeJS.ProcessEnv, outDir: string): Promise<{ pid: number; ready: GatewayReady; stop: () => void }> {
  const child = spawn('valgrind', [
    '--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${join(outDir, 'callgrind.out.%p')}`,
    process.execPath, join(ROOT, 'test/bench/gateway-process.ts'), '--upstream', upstreamBaseUrl,
  ], { stdio: ['ignore', 'pipe', 'pipe'], env })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (text: string) => { stderr = (stderr + text).slice(-4000) })
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway under valgrind not ready in 10 min: ${stderr}`)), 600_000)
    let buffered = ''
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      buffered += text
      const line = buffered.split('\n').find((candidate) => candidate.startsWith('{'))
      if (!line) return
      clearTimeout(timer)
      resolvePromise({ pid: child.pid!, ready: JSON.parse(line) as GatewayReady, stop: () => child.kill('SIGTERM') })
    })
    child.once('exit', (code) => reject(new Error(`gateway under valgrind exited ${code}: ${stderr}`)))
  })
}

async function drive(pool: Pool, ready: GatewayReady, count: number, concurrency: number): Promise<void> {
  const body = JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are a concise assistant that answers benchmark questions.' },
      { role: 'user', content: 'Write one short sentence about measuring gateway overhead on loopback.' },
    ],
    max_tokens: 64,
    ...(flags.stream ? { stream: true } : {}),
  })
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      next += 1
      const response = await pool.request({
        path: '/v1/chat/completions', method: 'POST', body,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ready.workspaceKey}`, 'x-gateway-provider': ready.provider },
      })
      await response.body.text()
      if (response.statusCode !== 200) throw new Error(`gateway answered ${response.statusCode}`)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}

/** The total `summary:` (or `totals:`) Ir of the newest dump file in `outDir` for `pid`. */
function dumpedInstructions(outDir: string, pid: number): number {
  const files = readdirSync(outDir).filter((name) => name.startsWith(`callgrind.out.${pid}.`)).sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()))
  const newest = files.at(-1)
  if (!newest) throw new Error('callgrind wrote no dump')
  const text = readFileSync(join(outDir, newest), 'utf8')
  const match = /^(?:summary|totals):\s+(\d+)/m.exec(text)
  if (!match) throw new Error(`no totals in ${newest}`)
  return Number(match[1])
}

const outDir = mkdtempSync(join(tmpdir(), 'gatehouse-callgrind-'))
try {
  const simulator = await startNode<{ baseUrl: string }>('simulator', [join(ROOT, 'test/simulators/cli.ts'), 'openai', '--chunks', '20', '--api-key', 'any'])
  const sink = variant === 'plain' ? null : await startNode<{ url: string }>('loopback-sink', [join(ROOT, 'test/bench/loopback-sink.ts')])
  const gateway = await startUnderCallgrind(simulator.ready.baseUrl, variantEnv(sink?.ready.url ?? null), outDir)
  const pool = new Pool(gateway.ready.url, { connections: Number(flags.concurrency) })
  await drive(pool, gateway.ready, Number(flags.warmup), Number(flags.concurrency))
  execFileSync('callgrind_control', ['-z', String(gateway.pid)], { stdio: 'ignore' })
  await drive(pool, gateway.ready, Number(flags.requests), Number(flags.concurrency))
  execFileSync('callgrind_control', ['-d', String(gateway.pid)], { stdio: 'ignore' })
  const instructions = dumpedInstructions(outDir, gateway.pid)
  process.stdout.write(JSON.stringify({ variant, stream: flags.stream, requests: Number(flags.requests), instructionsPerRequest: Math.round(instructions / Number(flags.requests)) }) + '\n')
  await pool.close()
  gateway.stop()
} finally {
  await stopAll()
  rmSync(outDir, { recursive: true, force: true })
}
