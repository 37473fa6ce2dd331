/**
 * An A/B of the servers' V8 flags, judged by what `make bench` judges: CPU time per request under
 * the `sat` load (closed loop, 50 connections, non-streaming), with run.ts's layout (the load
 * generator on core 0, the simulator and the gateways on core 1).
 *
 * Fresh processes of the same code differ by up to 30 % in CPU per request for as long as they
 * live, and this machine's speed moves by as much from minute to minute; a single process per arm,
 * or arms measured one after the other, decides nothing. So each arm runs in several processes,
 * every process is warmed up until steady (feature-scenario.ts), and each round loads every
 * process in 250 ms turns (load.ts, AlternatingJob), the arms alternating (A1 B1 A2 B2 …, then B
 * first in the next round). Printed:
 * each arm's median over all its measurements, each process's own median, and the median over
 * rounds of (B − A) within a round, which a slow minute hits on both sides alike.
 *
 *   node test/bench/flags-ab.ts --a="--max-semi-space-size=4" --b="--max-semi-space-size=8" [--processes 3] [--rounds 4] [--variant plain|metering|trace0|trace100|limits] [--target gatehouse|bare] [--stream]
 *   node test/bench/flags-ab.ts --b-env="MALLOC_ARENA_MAX=1"
 *
 * `--a-env`/`--b-env` add environment variables (space-separated NAME=value) to one arm's servers,
 * over the image's (SERVER_ENV): an A/B of the C library's allocator settings, or of a preloaded
 * allocator. An arm without `--a`/`--b` runs with the servers' own flags.
 *
 * `--target bare` runs the A/B on the bare Node proxy (bare-proxy.ts) instead: a flag that helps
 * both servers alike moves make bench's ratios less than its CPU figures.
 */
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { BENCH_VARIANTS, benchChatBody, benchLimits, benchVariant, variantEnv, variantFeatures } from './bench-variant.ts'
import { FEATURE_METADATA_HEADER, warmUntilSteady } from './feature-scenario.ts'
import { TURN_MS, type LoadResult, type TargetRequest } from './load.ts'
import { Loader } from './loader.ts'
import { hasTaskset, killAllNow, LOADER_CORE, pin, SERVER_CORE, startNode, stopAll } from './processes.ts'
import { median } from './report.ts'
import { bareProxyArgs, benchGatewayScript, serverArgs, serverEnv, serverNodeFlags, warmCompileCache } from './server-env.ts'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const CONNECTIONS = 50

const { values: flags } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    'a-env': { type: 'string', default: '' },
    'b-env': { type: 'string', default: '' },
    processes: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '4' },
    variant: { type: 'string', default: 'plain' },
    target: { type: 'string', default: 'gatehouse' },
    'duration-s': { type: 'string', default: '4' },
    // The stream-sat load instead (streamed answers, 20 chunks).
    stream: { type: 'boolean', default: false },
  },
})
if (flags.a === undefined && flags.b === undefined && !flags['a-env'] && !flags['b-env']) {
  throw new Error(`usage: [--a="<V8 flags>"] [--b="<V8 flags>"] [--a-env="NAME=value"] [--b-env="NAME=value"] [--processes 3] [--rounds 4] [--variant ${BENCH_VARIANTS.join('|')}] [--target gatehouse|bare] [--stream]`)
}
/** An arm's flags: as given, or the servers' own (SERVER_NODE_FLAGS) when only the environment differs. */
const armFlags = (given: string | undefined): readonly string[] => (given === undefined ? serverNodeFlags() : given.split(' ').filter(Boolean))
const arms = { A: armFlags(flags.a), B: armFlags(flags.b) } as const
type Arm = keyof typeof arms

/** `NAME=value NAME=value` as environment variables. */
function envAssignments(text: string): Record<string, string> {
  return Object.fromEntries(text.split(' ').filter(Boolean).map((assignment) => {
    const equals = assignment.indexOf('=')
    if (equals <= 0) throw new Error(`--a-env/--b-env take NAME=value pairs, got '${assignment}'`)
    return [assignment.slice(0, equals), assignment.slice(equals + 1)]
  }))
}
const armEnv: Record<Arm, Record<string, string>> = { A: envAssignments(flags['a-env']!), B: envAssignments(flags['b-env']!) }
const processes = Number(flags.processes)
const rounds = Number(flags.rounds)
const variant = benchVariant(flags.variant!)
const durationMs = Number(flags['duration-s']) * 1000
const target = flags.target!
if (!['gatehouse', 'bare'].includes(target)) throw new Error(`unknown --target ${target}`)
if (target === 'bare' && variant !== 'plain') throw new Error('--target bare has no variants')

interface Gateway { arm: Arm; instance: number; pid: number; target: TargetRequest }
interface Measured { arm: Arm; instance: number; round: number; cpuUs: number; requestsPerS: number }

function serverCpu(result: LoadResult): number {
  const cpu = result.processes.find((process) => process.name === 'server')?.cpuUsPerRequest
  if (cpu === undefined || cpu === null) throw new Error('the gateway\'s CPU was not read')
  return cpu
}

async function main(): Promise<void> {
  const script = await benchGatewayScript(ROOT)
  const unused = 'http://127.0.0.1:9/v1'
  // Node keeps a compile cache per set of V8 flags: each arm's is warmed.
  await warmCompileCache(ROOT, (Object.keys(arms) as Arm[]).map((arm) => ({ name: `gatehouse ${arm}`, args: serverArgs(script, ['--upstream', unused], arms[arm]) })))
  const simulator = await startNode<{ url: string; baseUrl: string }>('simulator', [join(ROOT, 'test/simulators/cli.ts'), 'openai', '--chunks', '20', '--api-key', 'any'])
  const sink = variant === 'plain' || variant === 'limits' ? null : await startNode<{ url: string }>('loopback-sink', [join(ROOT, 'test/bench/loopback-sink.ts')])
  const limits = variant === 'limits' ? benchLimits() : null
  const baseEnv = serverEnv(ROOT, variantEnv(variant, sink?.ready.url ?? null, limits?.env))
  const envOf = (arm: Arm): NodeJS.ProcessEnv => ({ ...baseEnv, ...armEnv[arm] })
  try {
    const started: Gateway[] = []
    for (let instance = 1; instance <= processes; instance++) {
      for (const arm of Object.keys(arms) as Arm[]) {
        if (target === 'bare') {
          const proxy = await startNode<{ url: string }>(`bare ${arm}${instance}`, bareProxyArgs(ROOT, simulator.ready.url, arms[arm]), { env: envOf(arm) })
          const headers = { 'content-type': 'application/json', authorization: 'Bearer any', ...FEATURE_METADATA_HEADER }
          started.push({ arm, instance, pid: proxy.pid, target: { origin: proxy.ready.url, path: '/v1/chat/completions', headers, body: benchChatBody(flags.stream) } })
          continue
        }
        const gateway = await startNode<{ url: string; workspaceKey: string; provider: string }>(`gatehouse ${arm}${instance}`, serverArgs(script, ['--upstream', simulator.ready.baseUrl, '--features', variantFeatures(variant)], arms[arm]), { env: envOf(arm), timeoutMs: 120_000 })
        const headers = { 'content-type': 'application/json', authorization: `Bearer ${gateway.ready.workspaceKey}`, 'x-gateway-provider': `@${gateway.ready.provider}`, ...FEATURE_METADATA_HEADER }
        started.push({ arm, instance, pid: gateway.pid, target: { origin: gateway.ready.url, path: '/v1/chat/completions', headers, body: benchChatBody(flags.stream) } })
      }
    }
    const loader = new Loader()
    if (hasTaskset()) {
      pin(process.pid, LOADER_CORE)
      pin(loader.child.pid!, LOADER_CORE)
      for (const pid of [simulator.pid, ...(sink ? [sink.pid] : []), ...started.map((gateway) => gateway.pid)]) pin(pid, SERVER_CORE)
    }
    console.log(`flags A: ${arms.A.join(' ')}${flags['a-env'] ? ` env ${flags['a-env']}` : ''}\nflags B: ${arms.B.join(' ')}${flags['b-env'] ? ` env ${flags['b-env']}` : ''}\n${processes} processes each, ${target === 'bare' ? 'the bare proxy' : `variant ${variant}`}, ${rounds} rounds of ${durationMs / 1000} s, ${CONNECTIONS} connections${hasTaskset() ? ', layout B (run.ts)' : ', unpinned'}`)
    for (const gateway of started) {
      const warm = await warmUntilSteady((job) => loader.run(job), gateway.target, gateway, CONNECTIONS)
      console.log(`  warm-up ${gateway.arm}${gateway.instance}: ${warm.requests} requests, ${warm.firstCpuUs?.toFixed(0)} → ${warm.lastCpuUs?.toFixed(0)} µs${warm.steady ? '' : ' (not steady)'}`)
    }
    const measured: Measured[] = []
    for (let round = 1; round <= rounds; round++) {
      // `started` pairs each instance's A and B; in even rounds B goes first, so neither arm always follows the other.
      const order = round % 2 === 1 ? started : started.map((_, index) => started[index ^ 1]!)
      // Every process takes turns in 250 ms slices over the round (load.ts, AlternatingJob): both arms see the same seconds.
      const results = await loader.runAlternating({
        mode: 'alternating',
        targets: order.map((gateway) => ({ target: gateway.target, watch: [{ name: 'server', pid: gateway.pid }] })),
        connections: CONNECTIONS, sliceMs: TURN_MS, warmupMs: 1000, durationMs, stream: flags.stream!,
      })
      for (const [index, gateway] of order.entries()) {
        const result = results[index]!
        const failed = result.errors + result.non2xx + result.incomplete
        if (failed > 0) throw new Error(`${gateway.arm}${gateway.instance}: ${failed} requests failed (${result.firstError})`)
        const cpuUs = serverCpu(result)
        measured.push({ arm: gateway.arm, instance: gateway.instance, round, cpuUs, requestsPerS: result.requestsPerS })
        console.log(`  round ${round} ${gateway.arm}${gateway.instance}: ${cpuUs.toFixed(1)} µs/request, ${result.requestsPerS.toFixed(0)} req/s`)
      }
    }
    for (const arm of Object.keys(arms) as Arm[]) {
      const mine = measured.filter((entry) => entry.arm === arm)
      const perProcess = Array.from({ length: processes }, (_, index) => median(mine.filter((entry) => entry.instance === index + 1).map((entry) => entry.cpuUs)).toFixed(0))
      console.log(`${arm}: ${median(mine.map((entry) => entry.cpuUs)).toFixed(1)} µs/request (processes ${perProcess.join(', ')}), ${median(mine.map((entry) => entry.requestsPerS)).toFixed(0)} req/s`)
    }
    const differences = Array.from({ length: rounds }, (_, index) => {
      const inRound = measured.filter((entry) => entry.round === index + 1)
      return median(inRound.filter((entry) => entry.arm === 'B').map((entry) => entry.cpuUs)) - median(inRound.filter((entry) => entry.arm === 'A').map((entry) => entry.cpuUs))
    })
    console.log(`B − A within a round: median ${median(differences).toFixed(1)} µs/request (rounds: ${differences.map((difference) => difference.toFixed(1)).join(', ')})`)
  } finally {
    await stopAll()
    await limits?.cleanUp()
  }
}

process.on('exit', killAllNow)
main().then(() => process.exit(0), async (error: unknown) => {
  console.error(`flags-ab failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  await stopAll(1000)
  process.exit(1)
})
