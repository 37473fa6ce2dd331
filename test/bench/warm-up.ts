/**
 * How a fresh bench gateway warms up: it is started with the servers' V8 flags, loaded closed-loop
 * (JSON chat, as `sat`), and every two seconds the CPU per request of its main thread and of its
 * other threads (V8's workers: the optimising compiler and concurrent GC) and its page faults per
 * request are printed. Optionally it idles once in the middle, to see whether a pause costs a
 * warm process anything (feature-sat's processes idle while the others are measured).
 *
 *   node test/bench/warm-up.ts [--seconds 30] [--connections 20] [--idle-at 20 --idle-s 30] [--features metering]
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { FEATURE_METADATA_HEADER } from './feature-scenario.ts'
import { benchGatewayScript, serverNodeFlags, withoutOtel } from './server-env.ts'
import { benchChatBody } from './bench-variant.ts'
import { startNode, stopAll } from './processes.ts'
import { readProcessCpu } from './procfs.ts'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '30' },
    connections: { type: 'string', default: '20' },
    'idle-at': { type: 'string' },
    'idle-s': { type: 'string', default: '30' },
    features: { type: 'string', default: '' },
  },
})
const WINDOW_MS = 2000
const connections = Number(flags.connections)

/** CPU ms of the main thread and of all the others, from /proc/<pid>/task. */
function threadCpuMs(pid: number): { main: number; others: number } {
  let main = 0
  let others = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
    } catch {
      continue
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ms = (Number(fields[11]) + Number(fields[12])) * 10
    if (tid === String(pid)) main += ms
    else others += ms
  }
  return { main, others }
}

const simulator = await startNode<{ baseUrl: string }>('simulator', [join(ROOT, 'test/simulators/cli.ts'), 'openai', '--chunks', '20', '--api-key', 'any'])
const gateway = await startNode<{ url: string; workspaceKey: string; provider: string }>('gatehouse', [
  ...serverNodeFlags(), await benchGatewayScript(ROOT), '--upstream', simulator.ready.baseUrl, '--features', flags.features!,
], { env: withoutOtel(process.env) })
const pool = new Pool(gateway.ready.url, { connections })
const body = benchChatBody()
const headers = { 'content-type': 'application/json', authorization: `Bearer ${gateway.ready.workspaceKey}`, 'x-gateway-provider': gateway.ready.provider, ...FEATURE_METADATA_HEADER }

let served = 0
let loading = true
async function worker(): Promise<void> {
  while (loading) {
    const response = await pool.request({ path: '/v1/chat/completions', method: 'POST', body, headers })
    await response.body.text()
    if (response.statusCode !== 200) throw new Error(`gateway answered ${response.statusCode}`)
    served++
  }
}
let workers = Array.from({ length: connections }, worker)

try {
  let before = { process: readProcessCpu(gateway.pid)!, threads: threadCpuMs(gateway.pid), served }
  const idleAt = flags['idle-at'] === undefined ? null : Number(flags['idle-at'])
  for (let elapsedS = 0; elapsedS < Number(flags.seconds); elapsedS += WINDOW_MS / 1000) {
    if (elapsedS === idleAt) {
      loading = false
      await Promise.all(workers)
      console.log(`-- idle ${flags['idle-s']} s --`)
      await new Promise((resolve) => setTimeout(resolve, Number(flags['idle-s']) * 1000))
      loading = true
      workers = Array.from({ length: connections }, worker)
      before = { process: readProcessCpu(gateway.pid)!, threads: threadCpuMs(gateway.pid), served }
    }
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS))
    const now = { process: readProcessCpu(gateway.pid)!, threads: threadCpuMs(gateway.pid), served }
    const requests = now.served - before.served
    const perRequest = (ms: number): string => ((ms * 1000) / requests).toFixed(0).padStart(4)
    console.log(`${String(elapsedS + WINDOW_MS / 1000).padStart(3)} s  ${String(now.served).padStart(7)} requests  CPU µs/request ${perRequest(now.process.cpuMs - before.process.cpuMs)} (main thread ${perRequest(now.threads.main - before.threads.main)}, other threads ${perRequest(now.threads.others - before.threads.others)})  page faults/request ${((now.process.minorFaults - before.process.minorFaults) / requests).toFixed(2)}`)
    before = now
  }
} finally {
  loading = false
  await Promise.allSettled(workers)
  await pool.close()
  await stopAll()
}
