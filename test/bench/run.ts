/**
 * `make bench`: one bounded loopback run comparing, for non-streaming and streaming chat,
 *  - direct: the load generator → the OpenAI simulator;
 *  - bare: → the thinnest Node proxy (node:http + undici Pool.stream), the Node floor;
 *  - gatehouse: → Gatehouse with authentication on.
 * Each scenario runs every target in turn (interleaved) after a warm-up. The load generator is its
 * own process; with `taskset` it runs on core 0 and the servers on core 1 ("layout B" of
 * shared/reference/performance.md). Prints a table, the ratios and PASS/FAIL for the acceptance
 * targets, and writes bench-results/<timestamp>.json and bench-results/latest.json. A missed
 * target is reported, never an exit status: only a broken run fails.
 *
 *   node test/bench/run.ts [--duration-s 8] [--warmup-s 2] [--paced-rate 800] [--profile] ...
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, release } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { TURN_MS, VARY_MARKER, type LoadJob, type LoadResult, type TargetRequest, type WatchedProcess } from './load.ts'
import { Loader } from './loader.ts'
import { hasTaskset, killAllNow, LOADER_CORE, pin, SERVER_CORE, startNode, stopAll, type Started } from './processes.ts'
import { readProcessMemory } from './procfs.ts'
import { formatHotSpots, hotSpots } from './profile-summary.ts'
import { DEFAULT_PROCESSES_PER_VARIANT, FEATURE_METADATA_HEADER, FEATURE_SCENARIO, formatFeatures, startFeatureGateways, summariseFeatures, warmUntilSteady, type FeatureRun } from './feature-scenario.ts'
import { bareProxyArgs, benchGatewayScript, describeServerRuntime, serverArgs, serverEnv, warmCompileCache } from './server-env.ts'
import { aggregateAll, checkTargets, formatChecks, formatScenario, TARGET_LABELS, TARGETS, type ScenarioName, type ScenarioRun, type TargetName } from './report.ts'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const RESULTS_DIR = join(ROOT, 'bench-results')
const PROFILE_DIR = join(RESULTS_DIR, 'profiles')

const { values: flags } = parseArgs({
  options: {
    reps: { type: 'string', default: '3' },
    'duration-s': { type: 'string', default: '4' },
    // Unmeasured load before each measure. A warm process left idle for a minute (the other
    // scenarios' turn) spent 25-30 % more CPU a request in its first 2 s of load again and 10-15 %
    // in the next 3 s, with or without bytecode flushing (2026-11-29, two gateways, 60 s idle, two
    // rounds): one second of warm-up left most of that in the measured window.
    'warmup-s': { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    'paced-rate': { type: 'string', default: '800' },
    'serial-s': { type: 'string', default: '2' },
    'ttfb-requests': { type: 'string', default: '500' },
    scenarios: { type: 'string', default: 'sat,stream-sat,paced,serial,ttfb,cache-sat,prompt-sat,feature-sat' },
    // In-process: the CPU per request the measure stage (metrics, access log) adds; 0 skips it.
    'stage-cpu-rounds': { type: 'string', default: '100000' },
    // feature-sat: fresh processes per variant (feature-scenario.ts); a repetition takes their median.
    'feature-processes': { type: 'string', default: String(DEFAULT_PROCESSES_PER_VARIANT) },
    profile: { type: 'boolean', default: false },
    'no-pin': { type: 'boolean', default: false },
  },
})

function positive(name: string, raw: string | undefined): number {
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got ${raw}`)
  return value
}

const reps = Math.round(positive('reps', flags.reps))
const durationMs = positive('duration-s', flags['duration-s']) * 1000
const warmupMs = positive('warmup-s', flags['warmup-s']) * 1000
const connections = Math.round(positive('connections', flags.connections))
const pacedRatePerS = positive('paced-rate', flags['paced-rate'])
const serialMs = positive('serial-s', flags['serial-s']) * 1000
const ttfbRequests = Math.round(positive('ttfb-requests', flags['ttfb-requests']))
const featureProcesses = Math.round(positive('feature-processes', flags['feature-processes']))
const requested = flags.scenarios!.split(',').map((name) => name.trim())
for (const name of requested) {
  if (!['sat', 'stream-sat', 'paced', 'serial', 'ttfb', 'cache-sat', 'prompt-sat', FEATURE_SCENARIO].includes(name)) throw new Error(`unknown scenario '${name}'`)
}
// The feature scenario has processes and targets of its own (feature-scenario.ts); the others share the report's.
const featureScenario = requested.includes(FEATURE_SCENARIO)
const scenarios = requested.filter((name) => name !== FEATURE_SCENARIO) as ScenarioName[]

/** A 0.26 KB chat body like the baseline's: a system and a user message. */
/** The saved config of the bench gateway that caches answers (gateway-process.ts). */
const BENCH_CACHED_CONFIG = 'bench-cached'

/** The saved prompt of the bench gateway (gateway-process.ts); it renders to `chatBody(false)`. */
const BENCH_PROMPT_PATH = '/v1/prompts/bench-prompt/completions'
const PROMPT_BODY = JSON.stringify({ variables: { subject: 'measuring gateway overhead on loopback' } })

function chatBody(stream: boolean, vary = ''): string {
  return JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are a concise assistant that answers benchmark questions.' },
      { role: 'user', content: `Write one short sentence about measuring gateway overhead on loopback.${vary}` },
    ],
    max_tokens: 64,
    ...(stream ? { stream: true } : {}),
  })
}

interface SimulatorReady {
  url: string
  baseUrl: string
}
interface ProxyReady {
  url: string
}
interface GatewayReady {
  url: string
  workspaceKey: string
  provider: string
}

interface Targets {
  upstream: SimulatorReady
  origins: Record<TargetName, string>
  headers: Record<string, string>
  servers: Record<'simulator' | 'bare' | 'gatehouse', Started<unknown>>
}

/** `node` arguments of the bare proxy and of Gatehouse, relaying to `upstream`. */
async function serverCommands(upstream: SimulatorReady): Promise<{ bare: string[]; gatehouse: string[] }> {
  return {
    bare: bareProxyArgs(ROOT, upstream.url),
    gatehouse: serverArgs(await benchGatewayScript(ROOT), ['--upstream', upstream.baseUrl]),
  }
}

async function startServers(): Promise<Targets> {
  // Both as the image starts Gatehouse (server-env.ts): RSS under load depends on the heap settings.
  const unused = { url: 'http://127.0.0.1:9', baseUrl: 'http://127.0.0.1:9/v1' }
  await warmCompileCache(ROOT, Object.entries(await serverCommands(unused)).map(([name, args]) => ({ name, args })))
  const simulator = await startNode<SimulatorReady>('simulator', [join(ROOT, 'test/simulators/cli.ts'), 'openai', '--chunks', '20', '--api-key', 'any'])
  const commands = await serverCommands(simulator.ready)
  const profile = flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []
  const [bare, gatehouse] = await Promise.all([
    startNode<ProxyReady>('bare', commands.bare, { env: serverEnv(ROOT) }),
    startNode<GatewayReady>('gatehouse', [...profile, ...commands.gatehouse], { env: serverEnv(ROOT) }),
  ])
  // The same request bytes go to every target: the simulator accepts any bearer token (`--api-key any`) and ignores
  // the routing header, so direct and bare pay for the same headers Gatehouse reads.
  return {
    upstream: simulator.ready,
    origins: { direct: simulator.ready.url, bare: bare.ready.url, gatehouse: gatehouse.ready.url },
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${gatehouse.ready.workspaceKey}`,
      'x-gateway-provider': `@${gatehouse.ready.provider}`,
    },
    servers: { simulator, bare, gatehouse },
  }
}

/** One request of each kind to each target before measuring anything: a broken target fails the run. */
async function smokeCheck(targets: Targets): Promise<Record<TargetName, { jsonBytes: number; streamBytes: number }>> {
  const sizes = {} as Record<TargetName, { jsonBytes: number; streamBytes: number }>
  for (const target of TARGETS) {
    const url = `${targets.origins[target]}/v1/chat/completions`
    const json = await fetch(url, { method: 'POST', headers: targets.headers, body: chatBody(false) })
    const jsonText = await json.text()
    if (json.status !== 200 || !jsonText.includes('"chat.completion"')) throw new Error(`${target}: non-streaming smoke request got ${json.status}: ${jsonText.slice(0, 300)}`)
    const stream = await fetch(url, { method: 'POST', headers: targets.headers, body: chatBody(true) })
    const streamText = await stream.text()
    if (stream.status !== 200 || !streamText.trimEnd().endsWith('data: [DONE]')) throw new Error(`${target}: streaming smoke request got ${stream.status}: ${streamText.slice(0, 300)}`)
    sizes[target] = { jsonBytes: Buffer.byteLength(jsonText), streamBytes: Buffer.byteLength(streamText) }
  }
  return sizes
}

/**
 * The closed-loop scenarios whose targets take turns (TURN_MS) rather than whole
 * windows one after the other: throughput and CPU per request, compared between the targets. On a
 * shared VM whose speed moves by tens of percent within seconds, windows seconds apart measured
 * the machine's drift as much as the targets (feature-scenario.ts). `serial` (one connection)
 * and the latency scenarios keep whole windows.
 */
const ALTERNATING_SCENARIOS: ReadonlySet<ScenarioName> = new Set(['sat', 'stream-sat', 'cache-sat', 'prompt-sat'])

async function sequentially(loader: Loader, jobs: LoadJob[]): Promise<LoadResult[]> {
  const results: LoadResult[] = []
  for (const job of jobs) results.push(await loader.run(job))
  return results
}

function jobFor(scenario: ScenarioName, target: TargetRequest, watch: WatchedProcess[]): LoadJob {
  switch (scenario) {
    case 'sat':
    case 'prompt-sat':
      return { mode: 'closed', target, watch, connections, warmupMs, durationMs, stream: false }
    case 'stream-sat':
      return { mode: 'closed', target, watch, connections, warmupMs, durationMs, stream: true }
    case 'paced':
      return { mode: 'paced', target, watch, connections, ratePerS: pacedRatePerS, warmupMs, durationMs, stream: false }
    case 'serial':
      return { mode: 'closed', target, watch, connections: 1, warmupMs: Math.min(warmupMs, 1000), durationMs: serialMs, stream: false }
    case 'ttfb':
      return { mode: 'ttfb', target: { ...target, body: chatBody(true) }, watch, warmupRequests: 50, requests: ttfbRequests }
    case 'cache-sat':
      // The config header means nothing to the simulator and the bare proxy: they answer every request.
      return {
        mode: 'closed',
        target: { ...target, headers: { ...target.headers, 'x-gateway-config': BENCH_CACHED_CONFIG }, body: chatBody(false, VARY_MARKER), newEvery: 10 },
        watch,
        connections,
        warmupMs,
        durationMs,
        stream: false,
      }
  }
}

function progressLine(rep: number, scenario: ScenarioName, target: TargetName, result: LoadResult): string {
  const failed = result.errors + result.non2xx + result.incomplete
  const firstByte = result.firstByte ? `, first byte p50 ${(result.firstByte.p50Us / 1000).toFixed(3)} ms` : ''
  return `  #${rep} ${scenario.padEnd(10)} ${TARGET_LABELS[target].padEnd(24)} ${result.requestsPerS.toFixed(0).padStart(6)} req/s, p50 ${(result.latency.p50Us / 1000).toFixed(3)} ms, p99 ${(result.latency.p99Us / 1000).toFixed(3)} ms${firstByte}${failed ? `, ${failed} FAILED (${result.firstError})` : ''}`
}

function cpuModel(): string {
  return cpus()[0]?.model ?? 'unknown'
}

function latestProfile(): string | null {
  try {
    const files = readdirSync(PROFILE_DIR)
      .filter((name) => name.endsWith('.cpuprofile'))
      .map((name) => join(PROFILE_DIR, name))
    return files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0] ?? null
  } catch {
    return null
  }
}

async function main(): Promise<void> {
  const startedAt = new Date()
  mkdirSync(RESULTS_DIR, { recursive: true })
  const pinned = !flags['no-pin'] && cpus().length >= 2 && hasTaskset()
  const layout = pinned
    ? `B: load generator + orchestrator on core ${LOADER_CORE}; simulator, bare proxy and Gatehouse on core ${SERVER_CORE} (only the target under test gets traffic)`
    : 'unpinned: taskset missing, fewer than 2 CPUs, or --no-pin; every process floats over all cores'
  console.log(`Gatehouse loopback benchmark — node ${process.version}, ${cpus().length} × ${cpuModel()}, load avg ${loadavg().map((value) => value.toFixed(2)).join(' ')}`)
  console.log(`layout ${layout}`)
  console.log(describeServerRuntime())
  console.log(`plan: ${reps} interleaved repetitions of ${scenarios.length > 0 ? `${scenarios.join(', ')} × direct, bare, gatehouse` : 'no shared scenario'}; ${connections} connections, ${durationMs / 1000} s measured after ${warmupMs / 1000} s warm-up per target; paced ${pacedRatePerS} req/s; serial ${serialMs / 1000} s; ttfb ${ttfbRequests} requests${featureScenario ? `; ${FEATURE_SCENARIO} × bare proxy and fresh Gatehouse processes: floor, metering, three Redis limits, two guardrails, tracing sampled 0 % and 100 %` : ''}`)

  const targets = await startServers()
  const loader = new Loader()
  if (pinned) {
    pin(process.pid, LOADER_CORE)
    pin(loader.child.pid!, LOADER_CORE)
    for (const server of Object.values(targets.servers)) pin(server.pid, SERVER_CORE)
  }
  const featured = featureScenario ? await startFeatureGateways(ROOT, targets.upstream, featureProcesses) : null
  if (pinned && featured) for (const server of featured.servers) pin(server.pid, SERVER_CORE)
  const sizes = await smokeCheck(targets)
  const coldMemory = Object.fromEntries(Object.entries(targets.servers).map(([name, server]) => [name, readProcessMemory(server.pid)]))
  console.log(`answers: ${sizes.direct.jsonBytes} B JSON, ${sizes.direct.streamBytes} B stream (22 SSE events); all three targets answered the smoke requests`)

  const runs: ScenarioRun[] = []
  const featureRuns: FeatureRun[] = []
  const simulatorWatch: WatchedProcess = { name: 'simulator', pid: targets.servers.simulator.pid }
  // The feature scenario's processes are fresh: each is warmed up until its CPU per request holds
  // still (feature-scenario.ts), as the run's main Gatehouse is by the scenarios before it.
  for (const variant of featured?.variants ?? []) {
    const headers = { ...targets.headers, ...FEATURE_METADATA_HEADER, ...variant.headers }
    const warm = await warmUntilSteady((job) => loader.run(job), { origin: variant.origin, path: '/v1/chat/completions', headers, body: chatBody(false) }, variant, connections)
    const cpu = (us: number | null): string => (us === null ? '—' : `${us.toFixed(0)} µs`)
    console.log(`  warm-up ${`${variant.name} ${variant.instance}`.padEnd(24)} ${warm.requests} requests in ${warm.rounds} rounds, CPU/request ${cpu(warm.firstCpuUs)} → ${cpu(warm.lastCpuUs)}${warm.steady ? '' : ' (not steady: the machine is busy)'}`)
  }
  // Repetitions interleave everything, so a burst of foreign load hits every target alike.
  for (let rep = 1; rep <= reps; rep++) {
    for (const scenario of scenarios) {
      const jobs = TARGETS.map((target) => {
        const rendersPrompt = scenario === 'prompt-sat' && target === 'gatehouse'
        const request: TargetRequest = {
          origin: targets.origins[target],
          path: rendersPrompt ? BENCH_PROMPT_PATH : '/v1/chat/completions',
          headers: targets.headers,
          body: rendersPrompt ? PROMPT_BODY : chatBody(scenario === 'stream-sat'),
        }
        const own = target === 'direct' ? [] : [{ name: target, pid: targets.servers[target].pid }]
        return { target, job: jobFor(scenario, request, [simulatorWatch, ...own]), own }
      })
      const first = jobs[0]!.job
      // Closed-loop throughput scenarios: the three targets take turns in short slices (load.ts,
      // AlternatingJob), so a ratio between them is measured over the same seconds.
      const results = first.mode === 'closed' && ALTERNATING_SCENARIOS.has(scenario)
        ? await loader.runAlternating({
          mode: 'alternating',
          targets: jobs.map(({ job, own }) => ({ target: job.target, watch: own })),
          shared: [simulatorWatch],
          connections: first.connections, sliceMs: TURN_MS, warmupMs: first.warmupMs, durationMs: first.durationMs, stream: first.stream,
        })
        : await sequentially(loader, jobs.map(({ job }) => job))
      for (const [index, { target }] of jobs.entries()) {
        runs.push({ scenario, target, rep, result: results[index]! })
        console.log(progressLine(rep, scenario, target, results[index]!))
      }
    }
    // Each instance's variants take turns (feature-scenario.ts).
    for (const instance of new Set((featured?.variants ?? []).map((variant) => variant.instance))) {
      const group = featured!.variants.filter((variant) => variant.instance === instance)
      const results = await loader.runAlternating({
        mode: 'alternating',
        targets: group.map((variant) => ({
          target: { origin: variant.origin, path: '/v1/chat/completions', headers: { ...targets.headers, ...FEATURE_METADATA_HEADER, ...variant.headers }, body: chatBody(false) },
          watch: [{ name: 'server', pid: variant.pid }],
        })),
        connections, sliceMs: TURN_MS, warmupMs, durationMs, stream: false,
      })
      for (const [index, variant] of group.entries()) {
        const result = results[index]!
        featureRuns.push({ variant: variant.name, instance: variant.instance, rep, result })
        const failed = result.errors + result.non2xx + result.incomplete
        console.log(`  #${rep} ${FEATURE_SCENARIO.padEnd(10)} ${`${variant.name} ${variant.instance}`.padEnd(24)} ${result.requestsPerS.toFixed(0).padStart(6)} req/s, p50 ${(result.latency.p50Us / 1000).toFixed(3)} ms${failed ? `, ${failed} FAILED (${result.firstError})` : ''}`)
      }
    }
  }
  await featured?.cleanUp()
  const features = featureRuns.length > 0 ? summariseFeatures(featureRuns) : null

  const aggregates = aggregateAll(runs, scenarios)
  const checks = checkTargets(aggregates)
  console.log('')
  for (const scenario of scenarios) console.log(formatScenario(aggregates, scenario) + '\n')
  console.log(`cold RSS (after start + smoke requests): bare ${mbText(coldMemory.bare?.rssKb)} MB, Gatehouse ${mbText(coldMemory.gatehouse?.rssKb)} MB, simulator ${mbText(coldMemory.simulator?.rssKb)} MB`)
  console.log(formatChecks(checks))
  if (features) console.log(`\n${formatFeatures(features, featured?.skipped ?? [])}`)

  await stopAll()
  let profile: { file: string; summary: ReturnType<typeof hotSpots> } | null = null
  if (flags.profile) {
    const file = latestProfile()
    if (file) {
      profile = { file, summary: hotSpots(JSON.parse(readFileSync(file, 'utf8')), 30) }
      console.log(`\nGatehouse CPU profile ${file}\n${formatHotSpots(profile.summary)}`)
    }
  }

  const stageCpu = measureStageCpu(Number(flags['stage-cpu-rounds']))

  const finishedAt = new Date()
  const record = {
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    environment: {
      node: process.version,
      undici: (JSON.parse(readFileSync(join(ROOT, 'node_modules/undici/package.json'), 'utf8')) as { version: string }).version,
      cpuModel: cpuModel(),
      cpuCount: cpus().length,
      kernel: release(),
      loadAverageAtEnd: loadavg(),
      layout: pinned ? 'B' : 'unpinned',
      layoutDescription: layout,
    },
    plan: { reps, scenarios, connections, durationMs, warmupMs, pacedRatePerS, serialMs, ttfbRequests, profile: flags.profile },
    responses: sizes,
    coldMemoryKb: coldMemory,
    stageCpu,
    aggregates,
    targets: checks,
    runs,
    features: features === null ? null : { summary: features, runs: featureRuns, skipped: featured?.skipped ?? [] },
    profile,
  }
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-')
  const json = JSON.stringify(record, null, 2) + '\n'
  writeFileSync(join(RESULTS_DIR, `${stamp}.json`), json)
  writeFileSync(join(RESULTS_DIR, 'latest.json'), json)
  console.log(`\nwrote bench-results/${stamp}.json and bench-results/latest.json (${((finishedAt.getTime() - startedAt.getTime()) / 1000).toFixed(0)} s)`)
}

/** test/bench/measure-cpu.ts in a child process (the load processes are stopped by then). */
function measureStageCpu(rounds: number): { metricsUs: number; metricsAndAccessLogUs: number; rounds: number } | null {
  if (!(rounds > 0)) return null
  const output = execFileSync(process.execPath, [join(ROOT, 'test/bench/measure-cpu.ts'), '--rounds', String(rounds), '--json'], { encoding: 'utf8' })
  const result = JSON.parse(output.trim().split('\n').at(-1)!) as { metricsUs: number; metricsAndAccessLogUs: number; rounds: number }
  console.log(`\nmeasure stage CPU per request (in process, ${rounds} requests): metrics ${result.metricsUs.toFixed(2)} µs, metrics + access log ${result.metricsAndAccessLogUs.toFixed(2)} µs`)
  return result
}

function mbText(kb: number | undefined): string {
  return kb === undefined ? '—' : (kb / 1024).toFixed(0)
}

process.on('exit', killAllNow)
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the benchmark's processes`)
    void stopAll(1000).finally(() => process.exit(130))
  })
}

main().then(() => process.exit(0), async (error: unknown) => {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  await stopAll(1000)
  process.exit(1)
})
