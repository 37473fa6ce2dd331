/**
 * What a feature leaves to the garbage collector, in bytes: the bench gateway (gateway-process.ts,
 * with the servers' V8 flags) runs under `--trace-gc-nvp`, and over the measured requests this
 * prints the bytes promoted to the old generation per request, the young-generation collections
 * and the full ones, and the collections' main-thread pauses per request: figures that do not
 * move with the machine's load, unlike CPU time (printed too, all threads), and that callgrind
 * (instructions.ts) cannot give steadily: one full collection more or less in its
 * 1,500 requests moves its count by 150,000 instructions a request. Bytes promoted per request are
 * what full collections are paid from.
 *
 *   node test/bench/gc-promotion.ts [--variant plain|metering|trace0|trace100|limits] [--target gatehouse|bare] [--warmup 3000] [--requests 20000] [--concurrency 4]
 */
import { spawn } from 'node:child_process'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { startNode, stopAll } from './processes.ts'
import { FEATURE_METADATA_HEADER } from './feature-scenario.ts'
import { bareProxyArgs, benchGatewayScript, serverArgs } from './server-env.ts'
import { BENCH_REDIS_URL, benchChatBody, benchLimits, benchVariant, driveChat, variantEnv, variantFeatures } from './bench-variant.ts'
import { readProcessCpu } from './procfs.ts'
import { readRedisCpu, redisPerRequest } from './redis-cpu.ts'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const { values: flags } = parseArgs({
  options: {
    variant: { type: 'string', default: 'plain' },
    warmup: { type: 'string', default: '3000' },
    requests: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '4' },
    // `bare`: the bare Node proxy (bare-proxy.ts) under the same load, with the same flags.
    target: { type: 'string', default: 'gatehouse' },
  },
})
if (flags.target !== 'gatehouse' && flags.target !== 'bare') throw new Error('--target: gatehouse or bare')
const bare = flags.target === 'bare'
if (bare && flags.variant !== 'plain') throw new Error('--target bare measures the plain proxy: no --variant')
const variant = benchVariant(flags.variant!)

interface GcTotals {
  promotedBytes: number
  scavenges: number
  fullCollections: number
  /** Main-thread pauses of every collection (`pause=`, ms): the part of the collectors' work a request waits for. */
  pauseMs: number
}

interface ServerReady { url: string; workspaceKey?: string; provider?: string }

/** Starts the server with `--trace-gc-nvp` and sums what its collections report from `mark()` on. */
async function startTracedServer(upstream: { url: string; baseUrl: string }, env: NodeJS.ProcessEnv): Promise<{ ready: ServerReady; pid: number; mark: () => void; totals: () => GcTotals; stop: () => void }> {
  const args = bare
    ? bareProxyArgs(ROOT, upstream.url)
    : serverArgs(await benchGatewayScript(ROOT), ['--upstream', upstream.baseUrl, '--features', variantFeatures(variant)])
  const child = spawn(process.execPath, ['--trace-gc-nvp', ...args], { stdio: ['ignore', 'pipe', 'inherit'], env })
  let counting = false
  const totals: GcTotals = { promotedBytes: 0, scavenges: 0, fullCollections: 0, pauseMs: 0 }
  let buffered = ''
  return new Promise((resolvePromise, reject) => {
    child.once('exit', (code) => reject(new Error(`${flags.target} exited ${code}`)))
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      buffered += text
      const lines = buffered.split('\n')
      buffered = lines.pop()!
      for (const line of lines) {
        if (line.startsWith('{')) {
          resolvePromise({ ready: JSON.parse(line) as never, pid: child.pid!, mark: () => (counting = true), totals: () => ({ ...totals }), stop: () => child.kill('SIGTERM') })
          continue
        }
        if (!counting) continue
        const kind = / gc=(\w+)/.exec(line)?.[1]
        if (kind === undefined) continue
        if (kind === 's' || kind === 'mms') totals.scavenges++
        else totals.fullCollections++
        totals.promotedBytes += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0)
        totals.pauseMs += Number(/ pause=([\d.]+)/.exec(line)?.[1] ?? 0)
      }
    })
  })
}

function drive(pool: Pool, ready: ServerReady, count: number, concurrency: number): Promise<void> {
  // The proxy relays the same headers (the simulator accepts any key).
  const headers = { authorization: `Bearer ${ready.workspaceKey ?? 'any'}`, 'x-gateway-provider': ready.provider ?? 'openai', ...FEATURE_METADATA_HEADER }
  return driveChat(pool, headers, benchChatBody(), count, concurrency)
}

const limits = variant === 'limits' ? benchLimits() : null
try {
  const simulator = await startNode<{ url: string; baseUrl: string }>('simulator', [join(ROOT, 'test/simulators/cli.ts'), 'openai', '--chunks', '20', '--api-key', 'any'])
  const sink = variant === 'plain' || variant === 'limits' ? null : await startNode<{ url: string }>('loopback-sink', [join(ROOT, 'test/bench/loopback-sink.ts')])
  const gateway = await startTracedServer(simulator.ready, variantEnv(variant, sink?.ready.url ?? null, limits?.env))
  const pool = new Pool(gateway.ready.url, { connections: Number(flags.concurrency) })
  await drive(pool, gateway.ready, Number(flags.warmup), Number(flags.concurrency))
  const redisBefore = limits ? await readRedisCpu(BENCH_REDIS_URL) : null
  gateway.mark()
  const cpuBefore = readProcessCpu(gateway.pid)
  const requests = Number(flags.requests)
  await drive(pool, gateway.ready, requests, Number(flags.concurrency))
  const totals = gateway.totals()
  const cpuAfter = readProcessCpu(gateway.pid)
  const redis = redisBefore ? redisPerRequest(redisBefore, await readRedisCpu(BENCH_REDIS_URL), requests) : {}
  process.stdout.write(JSON.stringify({
    target: flags.target, variant, requests,
    promotedBytesPerRequest: Math.round(totals.promotedBytes / requests),
    requestsPerScavenge: Math.round(requests / Math.max(1, totals.scavenges)),
    fullCollections: totals.fullCollections,
    gcPauseUsPerRequest: Number(((1000 * totals.pauseMs) / requests).toFixed(1)),
    // Every thread's CPU (the concurrent marker's too); moves with the machine's load, unlike the rest.
    cpuUsPerRequest: cpuBefore && cpuAfter ? Number(((1000 * (cpuAfter.cpuMs - cpuBefore.cpuMs)) / requests).toFixed(1)) : null,
    ...redis,
  }) + '\n')
  await pool.close()
  gateway.stop()
} finally {
  await stopAll()
  await limits?.cleanUp()
}
