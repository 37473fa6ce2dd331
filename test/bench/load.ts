/**
 * The benchmark's load generator, run as its own process (pinned away from the servers) and driven
 * by `run.ts` over the IPC channel: one job per message, one result back. Modes:
 *  - `closed`: N keep-alive connections, each sending its next request as soon as the previous
 *    answer ended, for a duration. Measures throughput; latency there is mostly queueing.
 *  - `paced`: open loop. Requests are due at a fixed total rate whatever the answers do, spread
 *    round-robin over N connections; latency is measured from when each was sent, and the lag
 *    between due and sent time is reported so a generator that falls behind is visible.
 *  - `ttfb`: sequential streaming requests on one keep-alive connection; time to the response
 *    headers, to the first body byte, and to the end.
 * Requests go through undici's `dispatch` with a bare handler: no body objects, no streams, no
 * promise per chunk, so the generator stays cheap next to what it measures.
 */
import { Client } from 'undici'
import type { Dispatcher } from 'undici'
import { LatencyRecorder, type LatencySummary } from './histogram.ts'
import { readProcessCpu, readProcessMemory, readSystemCpu, systemBusyCpuMs, type ProcessCpu, type SystemCpu } from './procfs.ts'

export interface TargetRequest {
  /** `http://127.0.0.1:<port>` */
  origin: string
  path: string
  headers: Record<string, string>
  body: string
  /**
   * Every Nth request replaces `__VARY__` in the body with a new number; the others send it as
   * `hot`. Makes a cache see about (N-1)/N repeated requests.
   */
  newEvery?: number
}

export const VARY_MARKER = '__VARY__'

/** The body of the next request: the repeated one, or, every `newEvery`, a new one. */
function bodySource(target: TargetRequest): () => Buffer {
  const hot = Buffer.from(target.body.replace(VARY_MARKER, 'hot'))
  const every = target.newEvery
  if (every === undefined || !target.body.includes(VARY_MARKER)) return () => hot
  let count = 0
  return () => (++count % every === 0 ? Buffer.from(target.body.replace(VARY_MARKER, `n${count}`)) : hot)
}

export interface WatchedProcess {
  name: string
  pid: number
}

interface JobBase {
  target: TargetRequest
  /** Processes whose CPU time and memory are read over the measured window. */
  watch: WatchedProcess[]
}

export interface ClosedJob extends JobBase {
  mode: 'closed'
  connections: number
  warmupMs: number
  durationMs: number
  stream: boolean
}

export interface PacedJob extends JobBase {
  mode: 'paced'
  connections: number
  ratePerS: number
  warmupMs: number
  durationMs: number
  stream: boolean
}

export interface TtfbJob extends JobBase {
  mode: 'ttfb'
  warmupRequests: number
  requests: number
}

/**
 * The length of a turn. Each switch costs the incoming process a cold cache for a few requests of
 * the several hundred a turn serves at 50 connections; the host's speed moves within seconds.
 */
export const TURN_MS = 250

/**
 * Closed loop on several targets taking turns: one slice of `sliceMs` each, in order, until every
 * target has had `durationMs` of measured load (after `warmupMs` each of unmeasured turns). Two
 * targets compared this way are measured over the same seconds of the machine's life. Measured one
 * after the other, in windows seconds apart, four identical gateways on this project's shared VM
 * spread from 299 to 447 µs of CPU a request with no lasting rank, more than the features compared
 * (docs/benchmarks.md, "2026-11-29 (later)"); loaded side by side they agreed within 5 %.
 * A target's processes (`watch`) are read over the whole measured phase, so what they do between
 * their turns (collections, span exports, usage batches) is theirs too. Processes every target
 * uses (`shared`: the simulator) are read at each turn's start and end instead, and each target
 * gets what they spent in its own turns.
 */
export interface AlternatingJob {
  mode: 'alternating'
  targets: Array<{ target: TargetRequest; watch: WatchedProcess[] }>
  shared?: WatchedProcess[]
  connections: number
  sliceMs: number
  warmupMs: number
  durationMs: number
  stream: boolean
}

export type LoadJob = ClosedJob | PacedJob | TtfbJob

export interface ProcessUsage {
  name: string
  pid: number
  cpuMs: number | null
  /** CPU time of the process divided by the requests completed in the window. */
  cpuUsPerRequest: number | null
  /** Minor page faults of the process in the window, per request completed (procfs.ts says why they matter). */
  minorFaultsPerRequest: number | null
  /** Average cores the process kept busy over the window. */
  cores: number | null
  /** Largest VmRSS seen by the 250 ms sampler during the window. */
  rssMaxKb: number | null
  /** VmHWM at the end of the window: the process's peak since it started. */
  hwmKb: number | null
}

export interface LoadResult {
  mode: LoadJob['mode']
  windowS: number
  /** Successful (2xx, complete) requests sent within the measured window. */
  requests: number
  requestsPerS: number
  errors: number
  non2xx: number
  /** Streams that ended without `data: [DONE]`. */
  incomplete: number
  firstError: string | null
  /** Request start to the last byte of the answer. */
  latency: LatencySummary
  /** Request start to the first byte of the body (stream targets only). */
  firstByte: LatencySummary | null
  /** Request start to the response headers (ttfb mode). */
  headers: LatencySummary | null
  /** Paced mode: how late requests were sent compared with their due time. */
  sendLag: LatencySummary | null
  /** Offered rate (paced mode). */
  offeredPerS: number | null
  /** Bytes of the last successful answer's body, for the report. */
  responseBytes: number
  processes: ProcessUsage[]
  /** CPU the whole machine spent minus the watched processes and the generator, in cores. */
  foreignCores: number | null
  generatorCores: number | null
}

interface Outcome {
  ok: boolean
  status: number
  error: Error | null
  complete: boolean
  bytes: number
  headersNs: bigint
  firstByteNs: bigint
  endNs: bigint
}

const DONE_MARKER = Buffer.from('data: [DONE]')

/** Sends one request and resolves when its answer ended (or failed); never rejects. */
function send(client: Client, target: TargetRequest, body: Buffer, stream: boolean): Promise<Outcome> {
  return new Promise((resolve) => {
    const outcome: Outcome = { ok: false, status: 0, error: null, complete: !stream, bytes: 0, headersNs: 0n, firstByteNs: 0n, endNs: 0n }
    // Only the tail is kept: enough to see the final `[DONE]` of a stream without buffering it.
    let tail: Buffer | null = null
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart() {},
      onResponseStart(_controller, statusCode) {
        outcome.status = statusCode
        outcome.headersNs = process.hrtime.bigint()
      },
      onResponseData(_controller, chunk) {
        if (outcome.firstByteNs === 0n) outcome.firstByteNs = process.hrtime.bigint()
        outcome.bytes += chunk.length
        if (stream) tail = chunk
      },
      onResponseEnd() {
        outcome.endNs = process.hrtime.bigint()
        outcome.ok = outcome.status >= 200 && outcome.status < 300
        if (stream && tail !== null) outcome.complete = (tail as Buffer).includes(DONE_MARKER)
        resolve(outcome)
      },
      onResponseError(_controller, error) {
        outcome.endNs = process.hrtime.bigint()
        outcome.error = error
        resolve(outcome)
      },
    }
    client.dispatch({ method: 'POST', path: target.path, headers: target.headers, body }, handler)
  })
}

function newClient(origin: string): Client {
  return new Client(origin, { pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 30_000, bodyTimeout: 30_000 })
}

/** Counts what happened in the measured window and keeps the latency samples. */
class Tally {
  readonly latency: LatencyRecorder
  readonly firstByte: LatencyRecorder
  readonly headers: LatencyRecorder
  readonly sendLag: LatencyRecorder
  ok = 0
  errors = 0
  non2xx = 0
  incomplete = 0
  responseBytes = 0
  firstError: string | null = null

  constructor(capacity: number) {
    this.latency = new LatencyRecorder(capacity)
    this.firstByte = new LatencyRecorder(capacity)
    this.headers = new LatencyRecorder(capacity)
    this.sendLag = new LatencyRecorder(capacity)
  }

  add(startNs: bigint, outcome: Outcome): void {
    if (outcome.error) {
      this.errors++
      this.firstError ??= outcome.error.message
      return
    }
    if (!outcome.ok) {
      this.non2xx++
      this.firstError ??= `HTTP ${outcome.status}`
      return
    }
    if (!outcome.complete) {
      this.incomplete++
      this.firstError ??= 'stream ended without [DONE]'
      return
    }
    this.ok++
    this.responseBytes = outcome.bytes
    this.latency.recordSince(startNs, outcome.endNs)
    this.headers.recordSince(startNs, outcome.headersNs)
    if (outcome.firstByteNs !== 0n) this.firstByte.recordSince(startNs, outcome.firstByteNs)
  }
}

/** What a process spent over a stretch of load (CPU ms and minor faults), as its usage figures; memory is read by the caller. */
function usageOf(entry: WatchedProcess, spent: ProcessCpu | null, requests: number, elapsedMs: number): ProcessUsage {
  return {
    name: entry.name,
    pid: entry.pid,
    cpuMs: spent?.cpuMs ?? null,
    cpuUsPerRequest: spent === null || requests === 0 ? null : (spent.cpuMs * 1000) / requests,
    minorFaultsPerRequest: spent === null || requests === 0 ? null : spent.minorFaults / requests,
    cores: spent === null || elapsedMs === 0 ? null : spent.cpuMs / elapsedMs,
    rssMaxKb: null,
    hwmKb: null,
  }
}

/** Reads CPU of the watched processes, of the generator and of the machine at both window ends. */
class UsageWindow {
  readonly #watch: WatchedProcess[]
  readonly #startCpu: (ProcessCpu | null)[]
  readonly #startSelf: NodeJS.CpuUsage
  readonly #startSystem: SystemCpu | null
  readonly #startNs: bigint
  readonly #rssMaxKb: (number | null)[]
  readonly #sampler: NodeJS.Timeout

  constructor(watch: WatchedProcess[]) {
    this.#watch = watch
    this.#rssMaxKb = watch.map(() => null)
    this.#startSystem = readSystemCpu()
    this.#startSelf = process.cpuUsage()
    this.#startCpu = watch.map((entry) => readProcessCpu(entry.pid))
    this.#startNs = process.hrtime.bigint()
    this.#sample()
    this.#sampler = setInterval(() => this.#sample(), 250)
  }

  #sample(): void {
    this.#watch.forEach((entry, index) => {
      const memory = readProcessMemory(entry.pid)
      if (memory) this.#rssMaxKb[index] = Math.max(this.#rssMaxKb[index] ?? 0, memory.rssKb)
    })
  }

  /** `requests`: completed in the window, or per watched process (alternating targets). */
  finish(requests: number | readonly number[]): { processes: ProcessUsage[]; foreignCores: number | null; generatorCores: number | null } {
    clearInterval(this.#sampler)
    this.#sample()
    const elapsedMs = Number(process.hrtime.bigint() - this.#startNs) / 1e6
    const self = process.cpuUsage(this.#startSelf)
    const generatorMs = (self.user + self.system) / 1000
    const endSystem = readSystemCpu()
    let watchedMs = 0
    const processes = this.#watch.map((entry, index): ProcessUsage => {
      const start = this.#startCpu[index]
      const end = readProcessCpu(entry.pid)
      const spent = start && end ? { cpuMs: end.cpuMs - start.cpuMs, minorFaults: end.minorFaults - start.minorFaults } : null
      if (spent !== null) watchedMs += spent.cpuMs
      const served = typeof requests === 'number' ? requests : requests[index]!
      return { ...usageOf(entry, spent, served, elapsedMs), rssMaxKb: this.#rssMaxKb[index] ?? null, hwmKb: readProcessMemory(entry.pid)?.hwmKb ?? null }
    })
    const foreignCores = this.#startSystem && endSystem ? Math.max(0, systemBusyCpuMs(this.#startSystem, endSystem) - watchedMs - generatorMs) / elapsedMs : null
    return { processes, foreignCores, generatorCores: generatorMs / elapsedMs }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Capacity for the latency samples: generous for the fastest target, still a few MB at most. */
function capacityFor(durationMs: number, maxRatePerS: number): number {
  return Math.max(1024, Math.ceil((durationMs / 1000) * maxRatePerS))
}

async function closeAll(clients: Client[]): Promise<void> {
  await Promise.all(clients.map((client) => client.destroy().catch(() => undefined)))
}

function result(job: { mode: LoadJob['mode']; stream?: boolean }, tally: Tally, windowS: number, usage: ReturnType<UsageWindow['finish']>, offeredPerS: number | null): LoadResult {
  const stream = job.mode === 'ttfb' || job.stream === true
  return {
    mode: job.mode,
    windowS,
    requests: tally.ok,
    requestsPerS: tally.ok / windowS,
    errors: tally.errors,
    non2xx: tally.non2xx,
    incomplete: tally.incomplete,
    firstError: tally.firstError,
    latency: tally.latency.summary(),
    firstByte: stream ? tally.firstByte.summary() : null,
    headers: job.mode === 'ttfb' ? tally.headers.summary() : null,
    sendLag: job.mode === 'paced' ? tally.sendLag.summary() : null,
    offeredPerS,
    responseBytes: tally.responseBytes,
    ...usage,
  }
}

/** One target's connections in a closed loop: `load(ms, tally)` keeps them busy that long and waits for the last answers. */
class ClosedLoop {
  readonly clients: Client[]
  readonly #target: TargetRequest
  readonly #stream: boolean
  readonly #nextBody: () => Buffer

  constructor(target: TargetRequest, connections: number, stream: boolean) {
    this.clients = Array.from({ length: connections }, () => newClient(target.origin))
    this.#target = target
    this.#stream = stream
    this.#nextBody = bodySource(target)
  }

  /** Seconds from the first request sent to the last answer. `tally` null: unmeasured. */
  async load(durationMs: number, tally: Tally | null): Promise<number> {
    const startedNs = process.hrtime.bigint()
    const stopAtNs = startedNs + BigInt(Math.round(durationMs * 1e6))
    const worker = async (client: Client): Promise<void> => {
      for (;;) {
        const startNs = process.hrtime.bigint()
        if (startNs >= stopAtNs) return
        const outcome = await send(client, this.#target, this.#nextBody(), this.#stream)
        tally?.add(startNs, outcome)
        // A dead target must not turn this loop into a busy spin.
        if (outcome.error) await sleep(10)
      }
    }
    await Promise.all(this.clients.map(worker))
    return Number(process.hrtime.bigint() - startedNs) / 1e9
  }
}

export async function runClosed(job: ClosedJob): Promise<LoadResult> {
  const loop = new ClosedLoop(job.target, job.connections, job.stream)
  const tally = new Tally(capacityFor(job.durationMs, 60_000))
  await loop.load(job.warmupMs, null)
  const usage = new UsageWindow(job.watch)
  const windowS = await loop.load(job.durationMs, tally)
  const used = usage.finish(tally.ok)
  await closeAll(loop.clients)
  return result(job, tally, windowS, used, null)
}

/** CPU time and page faults of processes all targets use, summed over each target's turns. */
class TurnUsage {
  readonly #watch: readonly WatchedProcess[]
  /** [target][process]: CPU ms and minor faults in the target's turns; null once a reading failed. */
  readonly #spent: Array<Array<ProcessCpu | null>>

  constructor(watch: readonly WatchedProcess[], targets: number) {
    this.#watch = watch
    this.#spent = Array.from({ length: targets }, () => watch.map(() => ({ cpuMs: 0, minorFaults: 0 })))
  }

  read(): (ProcessCpu | null)[] {
    return this.#watch.map((entry) => readProcessCpu(entry.pid))
  }

  add(target: number, before: (ProcessCpu | null)[]): void {
    const after = this.read()
    const spent = this.#spent[target]!
    spent.forEach((sum, index) => {
      const start = before[index]
      const end = after[index]
      spent[index] = sum === null || !start || !end ? null : { cpuMs: sum.cpuMs + end.cpuMs - start.cpuMs, minorFaults: sum.minorFaults + end.minorFaults - start.minorFaults }
    })
  }

  usage(target: number, requests: number, loadedS: number): ProcessUsage[] {
    return this.#watch.map((entry, index) => usageOf(entry, this.#spent[target]![index] ?? null, requests, loadedS * 1000))
  }
}

/** The targets in turns (AlternatingJob); one result per target, in the job's order. */
export async function runAlternating(job: AlternatingJob): Promise<LoadResult[]> {
  const loops = job.targets.map(({ target }) => new ClosedLoop(target, job.connections, job.stream))
  const tallies = job.targets.map(() => new Tally(capacityFor(job.durationMs, 60_000)))
  const turns = (totalMs: number): number => Math.round(totalMs / job.sliceMs)
  for (let turn = 0; turn < turns(job.warmupMs); turn++) for (const loop of loops) await loop.load(job.sliceMs, null)
  // One window over every target's processes: each process's CPU over the whole phase, divided by its own target's requests.
  // The shared processes are in it too (index -1, no requests of their own), so what they spend is not counted as foreign.
  const watched = [...job.targets.flatMap(({ watch }, index) => watch.map((entry) => ({ entry, index }))), ...(job.shared ?? []).map((entry) => ({ entry, index: -1 }))]
  const usage = new UsageWindow(watched.map(({ entry }) => entry))
  const loadedS = job.targets.map(() => 0)
  const shared = new TurnUsage(job.shared ?? [], job.targets.length)
  for (let turn = 0; turn < Math.max(1, turns(job.durationMs)); turn++) {
    for (const [index, loop] of loops.entries()) {
      const before = shared.read()
      loadedS[index]! += await loop.load(job.sliceMs, tallies[index]!)
      shared.add(index, before)
    }
  }
  const used = usage.finish(watched.map(({ index }) => tallies[index]?.ok ?? 0))
  await closeAll(loops.flatMap((loop) => loop.clients))
  return job.targets.map((_, index) => {
    const own = { ...used, processes: [...shared.usage(index, tallies[index]!.ok, loadedS[index]!), ...used.processes.filter((_, at) => watched[at]!.index === index)] }
    return result({ mode: 'closed', stream: job.stream }, tallies[index]!, loadedS[index]!, own, null)
  })
}

/**
 * Open loop: request k is due at start + k / rate. A timer wakes about every millisecond and sends
 * everything due, each on the next idle connection in round-robin order (all connections stay warm
 * and used); if none is idle, the request waits and its lag shows in `sendLag`.
 */
export async function runPaced(job: PacedJob): Promise<LoadResult> {
  const body = Buffer.from(job.target.body)
  const clients = Array.from({ length: job.connections }, () => newClient(job.target.origin))
  const busy = new Uint8Array(job.connections)
  const intervalNs = 1e9 / job.ratePerS
  const tally = new Tally(capacityFor(job.durationMs, job.ratePerS * 1.2))

  const phase = async (durationMs: number, measuring: boolean): Promise<number> => {
    const startNs = process.hrtime.bigint()
    const total = Math.floor((durationMs / 1000) * job.ratePerS)
    let issued = 0
    let nextClient = 0
    let inFlight = 0
    const waiting: bigint[] = []
    let finished: () => void = () => undefined
    const allDone = new Promise<void>((resolve) => {
      finished = resolve
    })

    const idleClient = (): number => {
      for (let step = 0; step < clients.length; step++) {
        const index = (nextClient + step) % clients.length
        if (busy[index] === 0) {
          nextClient = (index + 1) % clients.length
          return index
        }
      }
      return -1
    }

    const dispatch = (dueNs: bigint, index: number): void => {
      busy[index] = 1
      inFlight++
      const sentNs = process.hrtime.bigint()
      if (measuring) tally.sendLag.recordSince(dueNs, sentNs)
      void send(clients[index]!, job.target, body, job.stream).then((outcome) => {
        busy[index] = 0
        inFlight--
        if (measuring) tally.add(sentNs, outcome)
        const queued = waiting.shift()
        if (queued !== undefined) dispatch(queued, index)
        else if (issued >= total && inFlight === 0) finished()
      })
    }

    const tick = (): void => {
      const elapsedNs = Number(process.hrtime.bigint() - startNs)
      const due = Math.min(total, Math.floor(elapsedNs / intervalNs) + 1)
      while (issued < due) {
        const dueNs = startNs + BigInt(Math.round(issued * intervalNs))
        issued++
        const index = idleClient()
        if (index < 0) waiting.push(dueNs)
        else dispatch(dueNs, index)
      }
      if (issued < total) setTimeout(tick, 1)
      else if (inFlight === 0 && waiting.length === 0) finished()
    }

    tick()
    await allDone
    return Number(process.hrtime.bigint() - startNs) / 1e9
  }

  if (job.warmupMs > 0) await phase(job.warmupMs, false)
  const usage = new UsageWindow(job.watch)
  const windowS = await phase(job.durationMs, true)
  const used = usage.finish(tally.ok)
  await closeAll(clients)
  return result(job, tally, windowS, used, job.ratePerS)
}

export async function runTtfb(job: TtfbJob): Promise<LoadResult> {
  const body = Buffer.from(job.target.body)
  const client = newClient(job.target.origin)
  const tally = new Tally(job.requests)
  for (let i = 0; i < job.warmupRequests; i++) await send(client, job.target, body, true)
  const usage = new UsageWindow(job.watch)
  const windowStartNs = process.hrtime.bigint()
  for (let i = 0; i < job.requests; i++) {
    const startNs = process.hrtime.bigint()
    tally.add(startNs, await send(client, job.target, body, true))
  }
  const windowS = Number(process.hrtime.bigint() - windowStartNs) / 1e9
  const used = usage.finish(tally.ok)
  await closeAll([client])
  return result(job, tally, windowS, used, null)
}

export function runJob(job: LoadJob): Promise<LoadResult> {
  if (job.mode === 'closed') return runClosed(job)
  if (job.mode === 'paced') return runPaced(job)
  return runTtfb(job)
}

export type LoadMessage = { kind: 'result'; result: LoadResult } | { kind: 'results'; results: LoadResult[] } | { kind: 'error'; message: string }

if (import.meta.main) {
  if (!process.send) {
    process.stderr.write('load.ts is driven by run.ts over IPC: node test/bench/run.ts\n')
    process.exit(2)
  }
  process.on('message', (job: LoadJob | AlternatingJob) => {
    const done: Promise<LoadMessage> = job.mode === 'alternating'
      ? runAlternating(job).then((results) => ({ kind: 'results', results }))
      : runJob(job).then((outcome) => ({ kind: 'result', result: outcome }))
    done.then(
      (message) => process.send!(message),
      (error: unknown) => process.send!({ kind: 'error', message: error instanceof Error ? error.message : String(error) } satisfies LoadMessage),
    )
  })
  // The orchestrator closing the channel (it ended or died) ends the generator too.
  process.on('disconnect', () => process.exit(0))
}
