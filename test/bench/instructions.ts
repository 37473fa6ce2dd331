/**
 * Instructions per request of the bench gateway, counted by valgrind's callgrind: a figure that
 * does not move with the machine's load, so a change's cost can be compared while other work runs
 * (`make bench` measures CPU time, which needs a quiet machine). Slow: the gateway runs about 50×
 * slower under valgrind, so counts are over a few thousand requests.
 *
 *   node test/bench/instructions.ts [--variant plain|metering|trace0|trace100|limits] [--target gatehouse|bare] [--stream] [--warmup 20000] [--requests 1500] [--concurrency 4] [--cache-sim] [--keep-dump FILE] [--perf-map-dir DIR]
 *
 * `metering` ships a usage record per request over HTTP to the loopback sink (as feature-sat's
 * metering gateway does); `trace0`/`trace100` export OTLP http/protobuf there, sampling 0 % or 100 %.
 * `limits` counts feature-sat's three limits in Redis (bench-variant.ts) and adds Redis's own CPU
 * and script calls per request over the measured requests (redis-cpu.ts).
 * The gateway (gateway-process.ts) starts under callgrind with the servers' V8 flags (the young
 * generation's size moves what garbage collection costs per request), with instrumentation off;
 * after the warm-up (uninstrumented, so several times quicker) it is switched on
 * (`callgrind_control -i on`) and the counters zeroed, the measured requests run, and a dump
 * (`callgrind_control -d`) gives the instructions of exactly those requests, JIT included.
 * `--target bare` counts the bare Node proxy (bare-proxy.ts) the same way: the floor that the
 * streaming target (at most 2 × its CPU per request) is judged against, in instructions.
 * Prints one JSON line: {target, variant, stream, requests, instructionsPerRequest, and its parts:
 * requestPathInstructionsPerRequest, gcInstructionsPerRequest, compilerInstructionsPerRequest;
 * runtimeLiteralKeyInstructionsPerRequest, which says whether the run hit a slow path of V8's
 * that inflates the request path by about 40,000 (callgrind-dump.ts: a note on stderr then)}.
 * The collector and the optimising compilers run in bursts that move the total by tens of percent
 * between runs (callgrind-dump.ts); compare changes by the request-path part, and say the rest.
 * `--keep-dump` copies the dump to FILE (V8's builtins and GC are named there; JIT code is not).
 * `--perf-map-dir` has V8 write its perf map (perf-PID.map: JIT code's addresses and names) there.
 * `--cache-sim` runs callgrind's cache and branch models too and adds `missesPerRequest`: L1 and
 * last-level misses for instruction fetches (I1mr, ILmr), data reads and writes (D1mr, DLmr, D1mw,
 * DLmw), and mispredicted conditional and indirect branches (Bcm, Bim). Instructions are not
 * time: on this project's VM the two servers execute about as many a request while Gatehouse takes
 * twice the proxy's CPU, and these counts are where the difference shows (docs/operations.md, "Memory").
 */
import { execFileSync, spawn } from 'node:child_process'
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { readCallgrindDump, readDumpTotals, runtimeLiteralKeyInstructions } from './callgrind-dump.ts'
import { startNode, stopAll } from './processes.ts'
import { FEATURE_METADATA_HEADER } from './feature-scenario.ts'
import { bareProxyArgs, benchGatewayScript, serverArgs } from './server-env.ts'
import { BENCH_REDIS_URL, benchChatBody, benchLimits, benchVariant, driveChat, variantEnv, variantFeatures } from './bench-variant.ts'
import { readRedisCpu, redisPerRequest } from './redis-cpu.ts'
import { generateApiKey } from '@gatehouse/gateway/snapshot'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const { values: flags } = parseArgs({
  options: {
    variant: { type: 'string', default: 'plain' },
    target: { type: 'string', default: 'gatehouse' },
    stream: { type: 'boolean', default: false },
    // As many as a fresh gateway takes to settle (feature-scenario.ts warmUntilSteady: 20,000 to
    // 25,000). After 1,500, V8 was still compiling: the request path counted 412,000 instructions
    // a request and the optimising compilers 116,000; after 20,000, 344,000 and 12,000 (2026-11-30).
    warmup: { type: 'string', default: '20000' },
    requests: { type: 'string', default: '1500' },
    concurrency: { type: 'string', default: '4' },
    'keep-dump': { type: 'string' },
    'perf-map-dir': { type: 'string' },
    'cache-sim': { type: 'boolean', default: false },
  },
})
const variant = benchVariant(flags.variant!)
const target = flags.target!
if (!['gatehouse', 'bare'].includes(target)) throw new Error(`unknown --target ${target}`)
if (target === 'bare' && variant !== 'plain') throw new Error('--target bare has no variants')

interface TargetReady {
  url: string
  /** Gatehouse only: the workspace key and provider slug its requests carry. */
  workspaceKey?: string
  provider?: string
}

/** The measured server's command line: as `make bench` starts it (both servers with the image's V8 flags). */
async function targetArgs(upstream: { url: string; baseUrl: string }): Promise<string[]> {
  // V8's perf map names JIT code, which a callgrind dump names by address only.
  const perfMap = flags['perf-map-dir'] ? ['--perf-basic-prof', `--perf-basic-prof-path=${flags['perf-map-dir']}`] : []
  if (target === 'bare') return [...perfMap, ...bareProxyArgs(ROOT, upstream.url)]
  return [
    ...perfMap, ...serverArgs(await benchGatewayScript(ROOT), []),
    '--upstream', upstream.baseUrl,
    '--features', variantFeatures(variant),
    // Under valgrind a second holds a few dozen requests: batches leave full (500 records), as under load.
    '--usage-flush-ms', '600000',
  ]
}

/** Starts the measured server under callgrind and resolves with its ready line and pid. */
function startUnderCallgrind(args: string[], env: NodeJS.ProcessEnv, outDir: string): Promise<{ pid: number; ready: TargetReady; stop: () => void }> {
  const child = spawn('valgrind', [
    '--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${join(outDir, 'callgrind.out.%p')}`,
    // Uninstrumented until the warm-up is over: several times quicker, so the warm-up can be as long as V8's tiering needs.
    '--instr-atstart=no',
    ...(flags['cache-sim'] ? ['--cache-sim=yes', '--branch-sim=yes'] : []),
    process.execPath, ...args,
  ], { stdio: ['ignore', 'pipe', 'pipe'], env })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (text: string) => { stderr = (stderr + text).slice(-4000) })
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${target} under valgrind not ready in 10 min: ${stderr}`)), 600_000)
    let buffered = ''
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      buffered += text
      const line = buffered.split('\n').find((candidate) => candidate.startsWith('{'))
      if (!line) return
      clearTimeout(timer)
      resolvePromise({ pid: child.pid!, ready: JSON.parse(line) as TargetReady, stop: () => child.kill('SIGTERM') })
    })
    child.once('exit', (code) => reject(new Error(`${target} under valgrind exited ${code}: ${stderr}`)))
  })
}

function drive(pool: Pool, ready: TargetReady, count: number, concurrency: number): Promise<void> {
  // The bare proxy relays the same header bytes (the simulator takes any key and ignores the routing header).
  const headers = { authorization: `Bearer ${ready.workspaceKey ?? BARE_KEY}`, 'x-gateway-provider': ready.provider ?? 'openai-bench', ...FEATURE_METADATA_HEADER }
  return driveChat(pool, headers, benchChatBody(flags.stream), count, concurrency)
}

/** The newest dump file in `outDir` for `pid`. */
function newestDump(outDir: string, pid: number): string {
  const files = readdirSync(outDir).filter((name) => name.startsWith(`callgrind.out.${pid}.`)).sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()))
  const newest = files.at(-1)
  if (!newest) throw new Error('callgrind wrote no dump')
  return join(outDir, newest)
}

/** Above this, a run's tick objects took V8's slow path (callgrind-dump.ts, runtimeLiteralKeyInstructions). */
const RUNTIME_LITERAL_KEYS_WARNING = 1000

/** The cache and branch models' miss counts (`--cache-sim`), as callgrind names them. */
const MISS_EVENTS = ['I1mr', 'ILmr', 'D1mr', 'DLmr', 'D1mw', 'DLmw', 'Bcm', 'Bim'] as const

/** A workspace key of the real format, so the bare proxy relays as many header bytes as Gatehouse reads. */
const BARE_KEY = generateApiKey('workspace')

const outDir = mkdtempSync(join(tmpdir(), 'gatehouse-callgrind-'))
const limits = variant === 'limits' ? benchLimits() : null
let stopMeasured = (): void => {}
// Under valgrind the gateway reads Redis's answers 50 times later: the default 500 ms command
// timeout would fail calls that Redis answered at once (503 from the fail-closed budget).
const limitsEnv = limits ? { ...limits.env, GATEHOUSE_REDIS_TIMEOUT_MS: '30000' } : undefined
try {
  const simulator = await startNode<{ url: string; baseUrl: string }>('simulator', [join(ROOT, 'test/simulators/cli.ts'), 'openai', '--chunks', '20', '--api-key', 'any'])
  const sink = variant === 'plain' || variant === 'limits' ? null : await startNode<{ url: string }>('loopback-sink', [join(ROOT, 'test/bench/loopback-sink.ts')])
  const gateway = await startUnderCallgrind(await targetArgs(simulator.ready), variantEnv(variant, sink?.ready.url ?? null, limitsEnv), outDir)
  stopMeasured = gateway.stop
  const pool = new Pool(gateway.ready.url, { connections: Number(flags.concurrency) })
  await drive(pool, gateway.ready, Number(flags.warmup), Number(flags.concurrency))
  const redisBefore = limits ? await readRedisCpu(BENCH_REDIS_URL) : null
  execFileSync('callgrind_control', ['--instr=on', String(gateway.pid)], { stdio: 'ignore' })
  execFileSync('callgrind_control', ['-z', String(gateway.pid)], { stdio: 'ignore' })
  await drive(pool, gateway.ready, Number(flags.requests), Number(flags.concurrency))
  execFileSync('callgrind_control', ['-d', String(gateway.pid)], { stdio: 'ignore' })
  const redis = redisBefore ? redisPerRequest(redisBefore, await readRedisCpu(BENCH_REDIS_URL), Number(flags.requests)) : {}
  const dump = newestDump(outDir, gateway.pid)
  if (flags['keep-dump']) copyFileSync(dump, flags['keep-dump'])
  const text = readFileSync(dump, 'utf8')
  const cost = readCallgrindDump(text)
  const perRequest = (instructions: number): number => Math.round(instructions / Number(flags.requests))
  const totals = flags['cache-sim'] ? readDumpTotals(text) : null
  const misses = totals ? { missesPerRequest: Object.fromEntries(MISS_EVENTS.map((event) => [event, perRequest(totals[event] ?? 0)])) } : {}
  const runtimeLiteralKeys = perRequest(runtimeLiteralKeyInstructions(cost))
  if (runtimeLiteralKeys > RUNTIME_LITERAL_KEYS_WARNING) {
    process.stderr.write(`note: ${runtimeLiteralKeys} instructions a request in V8's runtime for object-literal keys: Node's tick objects took the slow path in this run although Gatehouse holds one (callgrind-dump.ts, gateway/src/core/tick-shape.ts); the request path reads about 40,000 high\n`)
  }
  process.stdout.write(JSON.stringify({
    target, variant, stream: flags.stream, requests: Number(flags.requests),
    instructionsPerRequest: perRequest(cost.totalInstructions),
    requestPathInstructionsPerRequest: perRequest(cost.totalInstructions - cost.gcInstructions - cost.compilerInstructions),
    gcInstructionsPerRequest: perRequest(cost.gcInstructions),
    compilerInstructionsPerRequest: perRequest(cost.compilerInstructions),
    runtimeLiteralKeyInstructionsPerRequest: runtimeLiteralKeys,
    ...redis,
    ...misses,
  }) + '\n')
  await pool.close()
} finally {
  // A failed run must not leave its server running under valgrind (stopAll knows only startNode's children).
  stopMeasured()
  await stopAll()
  await limits?.cleanUp()
  rmSync(outDir, { recursive: true, force: true })
}
