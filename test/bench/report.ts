/**
 * Turns the load generator's results into the benchmark's verdict: the comparisons between the
 * three targets, the acceptance targets with PASS/FAIL, and the compact table printed at the end.
 * Pure functions over data, so run.ts only orchestrates.
 */
import type { LoadResult } from './load.ts'

export const TARGETS = ['direct', 'bare', 'gatehouse'] as const
export type TargetName = (typeof TARGETS)[number]

export const TARGET_LABELS: Record<TargetName, string> = {
  direct: 'direct → simulator',
  bare: 'bare Node proxy (floor)',
  gatehouse: 'Gatehouse (auth on)',
}

export type ScenarioName = 'sat' | 'stream-sat' | 'paced' | 'serial' | 'ttfb' | 'cache-sat' | 'prompt-sat'

export interface ScenarioRun {
  scenario: ScenarioName
  target: TargetName
  /** 1-based repetition; repetitions are interleaved over scenarios and targets. */
  rep: number
  result: LoadResult
}

/** One scenario × target over its repetitions: the median of each metric, failures summed. */
export interface Aggregate {
  scenario: ScenarioName
  target: TargetName
  reps: number
  requestsPerS: number
  perRepRequestsPerS: number[]
  p50Us: number
  p90Us: number
  p99Us: number
  perRepP99Us: number[]
  firstByteP50Us: number | null
  firstByteP99Us: number | null
  perRepFirstByteP50Us: number[]
  /** CPU of the target process (bare proxy or Gatehouse) per request; null for direct. */
  proxyCpuUsPerRequest: number | null
  /** Minor page faults of the proxy per request (procfs.ts: dear on this project's VM). */
  proxyFaultsPerRequest: number | null
  simulatorCpuUsPerRequest: number | null
  /** Largest VmRSS sampled over every repetition. */
  rssMaxKb: number | null
  /** VmHWM after the last repetition: the process's peak since it started. */
  hwmKb: number | null
  failed: number
  firstError: string | null
  foreignCores: number | null
  sendLagP99Us: number | null
}

export interface TargetCheck {
  id: 'throughput' | 'added-p99-paced' | 'added-ttfb' | 'stream-cpu' | 'rss-under-load' | 'cache-hit-throughput'
  description: string
  definition: string
  value: number | null
  unit: 'ratio' | 'µs' | 'MB'
  threshold: string
  pass: boolean | null
  context: Record<string, number | null>
  /** CPU used by processes outside the benchmark during the judged runs (largest median), in cores. */
  foreignCores: number | null
  /** False when foreign load was high enough that the verdict says more about the machine than about Gatehouse. */
  reliable: boolean
}

/** Above this, other processes compete for the two cores and latency tails are scheduling noise. */
export const NOISY_FOREIGN_CORES = 0.25

export const DEFINITIONS = {
  throughput:
    'throughput ratio = Gatehouse req/s ÷ bare-proxy req/s in the same run, closed loop (sat: 50 keep-alive connections, non-streaming); medians over the interleaved repetitions.',
  addedP99:
    'added p99 = Gatehouse p99 − bare-proxy p99 of the PACED run (open loop: a fixed total rate spread round-robin over 50 keep-alive connections, well below saturation, latency from send to last byte); medians over the repetitions. The overhead Gatehouse adds over the Node floor; "vs direct" (Gatehouse p99 − direct p99) is context only.',
  addedTtfb:
    'added TTFB = Gatehouse first-byte p50 − bare-proxy first-byte p50, sequential stream:true requests on one keep-alive connection (request sent → first body byte); medians over the repetitions.',
  streamCpu:
    'streaming CPU ratio = Gatehouse CPU µs per streamed request ÷ bare-proxy CPU µs per streamed request (stream-sat: 50 connections, the same stream through each); medians over the repetitions.',
  rss: 'RSS under load = the largest VmRSS of the Gatehouse process sampled during every repetition of every scenario.',
  cacheHits:
    'cache-hit throughput = Gatehouse req/s in cache-sat (a caching config; every 10th request new, the rest repeated, so about 90 % are served from the in-process cache) ÷ the bare proxy req/s in the same scenario (which calls the simulator every time).',
} as const

/** Median; the mean of the two middle values for an even count; NaN when empty. */
export function median(values: readonly number[]): number {
  const finite = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b)
  const n = finite.length
  if (n === 0) return Number.NaN
  const middle = Math.floor(n / 2)
  return n % 2 === 1 ? finite[middle]! : (finite[middle - 1]! + finite[middle]!) / 2
}

/** Median of the values present (null, undefined and NaN left out); null when none is. */
export function medianOrNull(values: readonly (number | null | undefined)[]): number | null {
  const present = values.filter((value): value is number => value !== null && value !== undefined && !Number.isNaN(value))
  return present.length === 0 ? null : median(present)
}

function maxOrNull(values: readonly (number | null | undefined)[]): number | null {
  const present = values.filter((value): value is number => value !== null && value !== undefined)
  return present.length === 0 ? null : Math.max(...present)
}

export function aggregate(runs: ScenarioRun[], scenario: ScenarioName, target: TargetName): Aggregate | null {
  const results = runs.filter((run) => run.scenario === scenario && run.target === target).map((run) => run.result)
  if (results.length === 0) return null
  const usage = (result: LoadResult, name: string): LoadResult['processes'][number] | undefined => result.processes.find((entry) => entry.name === name)
  const stream = results.some((result) => result.firstByte !== null)
  return {
    scenario,
    target,
    reps: results.length,
    requestsPerS: median(results.map((result) => result.requestsPerS)),
    perRepRequestsPerS: results.map((result) => result.requestsPerS),
    p50Us: median(results.map((result) => result.latency.p50Us)),
    p90Us: median(results.map((result) => result.latency.p90Us)),
    p99Us: median(results.map((result) => result.latency.p99Us)),
    perRepP99Us: results.map((result) => result.latency.p99Us),
    firstByteP50Us: stream ? medianOrNull(results.map((result) => result.firstByte?.p50Us)) : null,
    firstByteP99Us: stream ? medianOrNull(results.map((result) => result.firstByte?.p99Us)) : null,
    perRepFirstByteP50Us: stream ? results.map((result) => result.firstByte?.p50Us ?? Number.NaN) : [],
    proxyCpuUsPerRequest: target === 'direct' ? null : medianOrNull(results.map((result) => usage(result, target)?.cpuUsPerRequest)),
    proxyFaultsPerRequest: target === 'direct' ? null : medianOrNull(results.map((result) => usage(result, target)?.minorFaultsPerRequest)),
    simulatorCpuUsPerRequest: medianOrNull(results.map((result) => usage(result, 'simulator')?.cpuUsPerRequest)),
    rssMaxKb: target === 'direct' ? null : maxOrNull(results.map((result) => usage(result, target)?.rssMaxKb)),
    hwmKb: target === 'direct' ? null : maxOrNull(results.map((result) => usage(result, target)?.hwmKb)),
    failed: results.reduce((sum, result) => sum + result.errors + result.non2xx + result.incomplete, 0),
    firstError: results.find((result) => result.firstError !== null)?.firstError ?? null,
    foreignCores: medianOrNull(results.map((result) => result.foreignCores)),
    sendLagP99Us: medianOrNull(results.map((result) => result.sendLag?.p99Us)),
  }
}

export function aggregateAll(runs: ScenarioRun[], scenarios: readonly ScenarioName[]): Aggregate[] {
  return scenarios.flatMap((scenario) => TARGETS.map((target) => aggregate(runs, scenario, target)).filter((entry): entry is Aggregate => entry !== null))
}

function find(aggregates: Aggregate[], scenario: ScenarioName, target: TargetName): Aggregate | null {
  return aggregates.find((entry) => entry.scenario === scenario && entry.target === target) ?? null
}

function difference(a: number | null | undefined, b: number | null | undefined): number | null {
  return a === null || a === undefined || b === null || b === undefined || Number.isNaN(a) || Number.isNaN(b) ? null : a - b
}

/** A target is only judged on runs without failed requests: a fast error is not a fast answer. */
function clean(entry: Aggregate | null): boolean {
  return entry !== null && entry.failed === 0 && entry.requestsPerS > 0
}

function verdict(value: number | null, entries: (Aggregate | null)[], passes: (value: number) => boolean): Pick<TargetCheck, 'pass' | 'foreignCores' | 'reliable'> {
  const foreignCores = maxOrNull(entries.map((entry) => entry?.foreignCores))
  return {
    pass: value === null || !entries.every(clean) ? null : passes(value),
    foreignCores,
    reliable: foreignCores !== null && foreignCores <= NOISY_FOREIGN_CORES,
  }
}

/**
 * The throughput ratio predicted from CPU time per request, for layout B where the simulator and
 * the target share one core: (bare + simulator µs/req) ÷ (Gatehouse + simulator µs/req). CPU per
 * request barely moves with foreign load, so this is the noise-robust reading of the ratio.
 */
export function cpuModelRatio(bare: Aggregate | null, gatehouse: Aggregate | null): number | null {
  const bareUs = bare?.proxyCpuUsPerRequest
  const gatehouseUs = gatehouse?.proxyCpuUsPerRequest
  if (bareUs === null || bareUs === undefined || gatehouseUs === null || gatehouseUs === undefined) return null
  const simulatorUs = median([bare!.simulatorCpuUsPerRequest ?? Number.NaN, gatehouse!.simulatorCpuUsPerRequest ?? Number.NaN])
  const shared = Number.isNaN(simulatorUs) ? 0 : simulatorUs
  return (bareUs + shared) / (gatehouseUs + shared)
}

export function checkTargets(aggregates: Aggregate[]): TargetCheck[] {
  const satBare = find(aggregates, 'sat', 'bare')
  const satGate = find(aggregates, 'sat', 'gatehouse')
  const ratio = satBare && satGate && satBare.requestsPerS > 0 ? satGate.requestsPerS / satBare.requestsPerS : null

  const pacedDirect = find(aggregates, 'paced', 'direct')
  const pacedBare = find(aggregates, 'paced', 'bare')
  const pacedGate = find(aggregates, 'paced', 'gatehouse')
  const addedP99 = difference(pacedGate?.p99Us, pacedBare?.p99Us)

  const ttfbDirect = find(aggregates, 'ttfb', 'direct')
  const ttfbBare = find(aggregates, 'ttfb', 'bare')
  const ttfbGate = find(aggregates, 'ttfb', 'gatehouse')
  const addedTtfb = difference(ttfbGate?.firstByteP50Us, ttfbBare?.firstByteP50Us)

  const streamBare = find(aggregates, 'stream-sat', 'bare')
  const streamGate = find(aggregates, 'stream-sat', 'gatehouse')
  const streamCpuRatio =
    streamBare?.proxyCpuUsPerRequest && streamGate?.proxyCpuUsPerRequest ? streamGate.proxyCpuUsPerRequest / streamBare.proxyCpuUsPerRequest : null
  const cacheBare = find(aggregates, 'cache-sat', 'bare')
  const cacheGate = find(aggregates, 'cache-sat', 'gatehouse')
  const cacheRatio = cacheBare && cacheGate && cacheBare.requestsPerS > 0 ? cacheGate.requestsPerS / cacheBare.requestsPerS : null
  const rssSamples = aggregates.filter((entry) => entry.target === 'gatehouse' && entry.rssMaxKb !== null).map((entry) => entry.rssMaxKb!)
  const rssMaxMb = rssSamples.length === 0 ? null : Math.max(...rssSamples) / 1024

  return [
    {
      id: 'throughput',
      description: 'Gatehouse non-streaming throughput ≥ 80 % of the bare Node proxy',
      definition: DEFINITIONS.throughput,
      value: ratio,
      unit: 'ratio',
      threshold: '>= 0.80',
      ...verdict(ratio, [satBare, satGate], (value) => value >= 0.8),
      context: {
        gatehouseRps: satGate?.requestsPerS ?? null,
        bareRps: satBare?.requestsPerS ?? null,
        directRps: find(aggregates, 'sat', 'direct')?.requestsPerS ?? null,
        gatehouseCpuUsPerRequest: satGate?.proxyCpuUsPerRequest ?? null,
        bareCpuUsPerRequest: satBare?.proxyCpuUsPerRequest ?? null,
        cpuModelRatio: cpuModelRatio(satBare, satGate),
      },
    },
    {
      id: 'added-p99-paced',
      description: 'added p99 latency at 50 connections (paced) < 1 ms',
      definition: DEFINITIONS.addedP99,
      value: addedP99,
      unit: 'µs',
      threshold: '< 1000',
      ...verdict(addedP99, [pacedBare, pacedGate], (value) => value < 1000),
      context: {
        gatehouseP99Us: pacedGate?.p99Us ?? null,
        bareP99Us: pacedBare?.p99Us ?? null,
        directP99Us: pacedDirect?.p99Us ?? null,
        addedP99VsDirectUs: difference(pacedGate?.p99Us, pacedDirect?.p99Us),
        addedP50VsBareUs: difference(pacedGate?.p50Us, pacedBare?.p50Us),
        addedP90VsBareUs: difference(pacedGate?.p90Us, pacedBare?.p90Us),
      },
    },
    {
      id: 'added-ttfb',
      description: 'added time to first byte (streaming) < 0.3 ms',
      definition: DEFINITIONS.addedTtfb,
      value: addedTtfb,
      unit: 'µs',
      threshold: '< 300',
      ...verdict(addedTtfb, [ttfbBare, ttfbGate], (value) => value < 300),
      context: {
        gatehouseFirstByteP50Us: ttfbGate?.firstByteP50Us ?? null,
        bareFirstByteP50Us: ttfbBare?.firstByteP50Us ?? null,
        directFirstByteP50Us: ttfbDirect?.firstByteP50Us ?? null,
        addedVsDirectUs: difference(ttfbGate?.firstByteP50Us, ttfbDirect?.firstByteP50Us),
      },
    },
    {
      id: 'stream-cpu',
      description: 'Gatehouse streaming CPU per request ≤ 2 × the bare Node proxy',
      definition: DEFINITIONS.streamCpu,
      value: streamCpuRatio,
      unit: 'ratio',
      threshold: '<= 2.0',
      ...verdict(streamCpuRatio, [streamBare, streamGate], (value) => value <= 2),
      context: {
        gatehouseCpuUsPerRequest: streamGate?.proxyCpuUsPerRequest ?? null,
        bareCpuUsPerRequest: streamBare?.proxyCpuUsPerRequest ?? null,
      },
    },
    {
      id: 'cache-hit-throughput',
      description: 'with simple caching and 90 % hits, Gatehouse throughput above the bare Node proxy',
      definition: DEFINITIONS.cacheHits,
      value: cacheRatio,
      unit: 'ratio',
      threshold: '> 1.0',
      ...verdict(cacheRatio, [cacheBare, cacheGate], (value) => value > 1),
      context: {
        gatehouseRps: cacheGate?.requestsPerS ?? null,
        bareRps: cacheBare?.requestsPerS ?? null,
        gatehouseP50Us: cacheGate?.p50Us ?? null,
        gatehouseSatP50Us: find(aggregates, 'sat', 'gatehouse')?.p50Us ?? null,
        gatehouseCpuUsPerRequest: cacheGate?.proxyCpuUsPerRequest ?? null,
      },
    },
    {
      id: 'rss-under-load',
      description: 'Gatehouse RSS under load < 150 MB',
      definition: DEFINITIONS.rss,
      value: rssMaxMb,
      unit: 'MB',
      threshold: '< 150',
      ...verdict(rssMaxMb, [satGate], (value) => value < 150),
      context: {},
    },
  ]
}

// ---- formatting -------------------------------------------------------------------------------

function ms(us: number | null | undefined, digits = 2): string {
  return us === null || us === undefined || Number.isNaN(us) ? '—' : (us / 1000).toFixed(digits)
}

function num(value: number | null | undefined, digits = 0): string {
  return value === null || value === undefined || Number.isNaN(value) ? '—' : value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
}

function mb(kb: number | null | undefined): string {
  return kb === null || kb === undefined ? '—' : (kb / 1024).toFixed(0)
}

function signedMs(us: number | null): string {
  if (us === null) return '—'
  return `${us >= 0 ? '+' : ''}${(us / 1000).toFixed(3)}`
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, index) => Math.max(cell.length, ...rows.map((row) => (row[index] ?? '').length)))
  const line = (cells: string[]): string => cells.map((cell, index) => (index === 0 ? cell.padEnd(widths[index]!) : cell.padStart(widths[index]!))).join('  ')
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n')
}

const SCENARIO_TITLES: Record<ScenarioName, string> = {
  sat: 'sat — closed loop, 50 connections, non-streaming',
  'stream-sat': 'stream-sat — closed loop, 50 connections, stream:true',
  paced: 'paced — open loop, fixed rate over 50 connections, non-streaming',
  serial: 'serial — 1 connection, one request at a time, non-streaming',
  ttfb: 'ttfb — sequential stream:true on one keep-alive connection',
  'cache-sat': 'cache-sat — closed loop, 50 connections, non-streaming, under a caching config with 90 % of requests repeated (hits)',
  'prompt-sat': 'prompt-sat — closed loop, 50 connections, non-streaming; Gatehouse renders a saved prompt (POST /v1/prompts/{id}/completions), the others get the rendered chat body',
}

export function formatScenario(aggregates: Aggregate[], scenario: ScenarioName): string {
  const present = TARGETS.map((target) => find(aggregates, scenario, target)).filter((entry): entry is Aggregate => entry !== null)
  if (present.length === 0) return ''
  const stream = scenario === 'stream-sat' || scenario === 'ttfb'
  const header = ['target', 'req/s', 'per-rep req/s', 'p50 ms', 'p99 ms']
  if (stream) header.push('1st byte p50', '1st byte p99')
  header.push('vs bare', 'proxy CPU µs/req', 'proxy faults/req', 'sim CPU µs/req', 'RSS max MB', 'peak MB', 'failed')
  const bare = find(aggregates, scenario, 'bare')
  const rows = present.map((entry) => {
    const row = [TARGET_LABELS[entry.target], num(entry.requestsPerS), entry.perRepRequestsPerS.map((value) => num(value)).join('/'), ms(entry.p50Us, 3), ms(entry.p99Us)]
    if (stream) row.push(ms(entry.firstByteP50Us, 3), ms(entry.firstByteP99Us))
    row.push(
      bare && entry.target !== 'bare' && scenario !== 'paced' ? `${((entry.requestsPerS / bare.requestsPerS) * 100).toFixed(0)} %` : '',
      num(entry.proxyCpuUsPerRequest),
      num(entry.proxyFaultsPerRequest, 2),
      num(entry.simulatorCpuUsPerRequest),
      mb(entry.rssMaxKb),
      mb(entry.hwmKb),
      entry.failed === 0 ? '0' : `${entry.failed}!`,
    )
    return row
  })
  const noise = present.map((entry) => num(entry.foreignCores, 2)).join(' / ')
  const lag = scenario === 'paced' ? `; generator send lag p99 ${present.map((entry) => ms(entry.sendLagP99Us, 2)).join(' / ')} ms` : ''
  return `${SCENARIO_TITLES[scenario]}\n${table(header, rows)}\n(medians of ${present[0]!.reps} interleaved repetitions; foreign CPU, i.e. other processes on the machine, in cores: ${noise}${lag})`
}
function checkValue(unit: TargetCheck['unit'], value: number | null): string {
  if (value === null) return '—'
  if (unit === 'ratio') return `${(value * 100).toFixed(1)} %`
  if (unit === 'MB') return `${value.toFixed(0)} MB`
  return `${signedMs(value)} ms`
}

/** `>= 0.80` as `≥ 80.0 %`, `< 300` (µs) as `< +0.300 ms`, `< 150` (MB) as `< 150 MB`. */
function checkThreshold(check: TargetCheck): string {
  const [operator = '', number = ''] = check.threshold.split(' ')
  const shown = operator.replace('>=', '≥').replace('<=', '≤')
  return `${shown} ${checkValue(check.unit, Number(number))}`
}

export function formatChecks(checks: TargetCheck[]): string {
  const lines = ['Acceptance targets (reported, never fail the make target):']
  for (const check of checks) {
    const verdict = check.pass === null ? 'N/A ' : check.pass ? 'PASS' : 'FAIL'
    const noise = check.reliable || check.pass === null ? '' : ` — UNRELIABLE: other processes used ${num(check.foreignCores, 2)} of 2 cores meanwhile`
    lines.push(`  [${verdict}] ${check.description}: ${checkValue(check.unit, check.value)} (needs ${checkThreshold(check)})${noise}`)
    if (check.id === 'added-p99-paced') {
      lines.push(`         p99: Gatehouse ${ms(check.context.gatehouseP99Us, 3)} ms, bare ${ms(check.context.bareP99Us, 3)} ms, direct ${ms(check.context.directP99Us, 3)} ms; added vs direct ${signedMs(check.context.addedP99VsDirectUs ?? null)} ms`)
      lines.push(`         added vs bare at p50 ${signedMs(check.context.addedP50VsBareUs ?? null)} ms, at p90 ${signedMs(check.context.addedP90VsBareUs ?? null)} ms`)
    }
    if (check.id === 'added-ttfb') {
      lines.push(`         first byte p50: Gatehouse ${ms(check.context.gatehouseFirstByteP50Us, 3)} ms, bare ${ms(check.context.bareFirstByteP50Us, 3)} ms, direct ${ms(check.context.directFirstByteP50Us, 3)} ms; added vs direct ${signedMs(check.context.addedVsDirectUs ?? null)} ms`)
    }
    if (check.id === 'throughput') {
      lines.push(`         req/s: Gatehouse ${num(check.context.gatehouseRps)}, bare ${num(check.context.bareRps)}, direct ${num(check.context.directRps)}; CPU µs/req: Gatehouse ${num(check.context.gatehouseCpuUsPerRequest)}, bare ${num(check.context.bareCpuUsPerRequest)}`)
      const model = check.context.cpuModelRatio ?? null
      lines.push(`         ratio predicted from CPU per request (target + simulator sharing one core): ${model === null ? '—' : `${(model * 100).toFixed(1)} %`}`)
    }
  }
  lines.push('Definitions:')
  for (const check of checks) lines.push(`  - ${check.definition}`)
  return lines.join('\n')
}
