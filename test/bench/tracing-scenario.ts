/**
 * The `trace-sat` scenario of `make bench`: what OpenTelemetry tracing costs per request. Two more
 * Gatehouse processes run beside the run's plain one (the floor), each exporting OTLP
 * http/protobuf to a loopback sink (otlp-sink.ts): one sampling every request
 * (`parentbased_traceidratio` 1), one none (ratio 0: spans are made but not recorded, and
 * `traceparent` still goes to the provider). Each gets the same non-streaming closed-loop load as
 * `sat`; the figure is the gateway process's CPU per request (batching and export included),
 * reported against the floor measured in the same repetition.
 */
import { join } from 'node:path'
import type { LoadResult } from './load.ts'
import { startNode, type Started } from './processes.ts'

export const TRACING_SCENARIO = 'trace-sat'

/** Targets of issue 13: added CPU per request. */
export const TRACING_TARGETS_US = { 'sampled 0 %': 20, 'sampled 100 %': 60 } as const

export type TracingVariantName = 'floor (no tracing)' | keyof typeof TRACING_TARGETS_US

export interface TracingVariant {
  name: TracingVariantName
  origin: string
  workspaceKey: string
  provider: string
  pid: number
}

interface GatewayReady {
  url: string
  workspaceKey: string
  provider: string
}

/** The environment of a process that must not trace (the floor): no OTEL_* from the caller's shell. */
export function withoutOtel(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('OTEL_')))
}

export async function startTracedGateways(root: string, upstreamBaseUrl: string): Promise<{ variants: Array<Omit<TracingVariant, 'name'> & { name: keyof typeof TRACING_TARGETS_US }>; servers: Started<unknown>[] }> {
  const sink = await startNode<{ url: string }>('otlp-sink', [join(root, 'test/bench/otlp-sink.ts')])
  const traced = async (ratio: '0' | '1'): Promise<Started<GatewayReady>> =>
    startNode<GatewayReady>(`gatehouse traced ${ratio}`, [join(root, 'test/bench/gateway-process.ts'), '--upstream', upstreamBaseUrl], {
      // Loading the SDK and its exporters takes seconds more than a plain start on a busy machine.
      timeoutMs: 120_000,
      env: {
        ...withoutOtel(process.env),
        OTEL_EXPORTER_OTLP_ENDPOINT: sink.ready.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: ratio,
        OTEL_SERVICE_NAME: 'gatehouse-bench',
      },
    })
  const [none, all] = await Promise.all([traced('0'), traced('1')])
  const variant = (name: keyof typeof TRACING_TARGETS_US, started: Started<GatewayReady>) => ({
    name,
    origin: started.ready.url,
    workspaceKey: started.ready.workspaceKey,
    provider: started.ready.provider,
    pid: started.pid,
  })
  return { variants: [variant('sampled 0 %', none), variant('sampled 100 %', all)], servers: [sink, none, all] }
}

export interface TracingRun {
  variant: TracingVariantName
  rep: number
  result: LoadResult
}

function median(values: number[]): number | null {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** CPU µs per request of the gateway process of each run (the watched process named `gateway`). */
function cpuUs(run: TracingRun): number | null {
  return run.result.processes.find((process) => process.name === 'gateway')?.cpuUsPerRequest ?? null
}

export interface TracingSummary {
  variant: TracingVariantName
  cpuUsPerRequest: number | null
  /** Median over repetitions of (variant − floor of the same repetition). */
  addedUsPerRequest: number | null
  targetUs: number | null
  met: boolean | null
  requestsPerS: number | null
}

export function summariseTracing(runs: TracingRun[]): TracingSummary[] {
  const names: TracingVariantName[] = ['floor (no tracing)', 'sampled 0 %', 'sampled 100 %']
  return names.map((variant) => {
    const mine = runs.filter((run) => run.variant === variant)
    const added = mine.flatMap((run) => {
      const floor = runs.find((other) => other.rep === run.rep && other.variant === 'floor (no tracing)')
      const own = cpuUs(run)
      const base = floor ? cpuUs(floor) : null
      return own === null || base === null ? [] : [own - base]
    })
    const targetUs = variant === 'floor (no tracing)' ? null : TRACING_TARGETS_US[variant]
    const addedUs = variant === 'floor (no tracing)' ? null : median(added)
    return {
      variant,
      cpuUsPerRequest: median(mine.flatMap((run) => cpuUs(run) ?? [])),
      addedUsPerRequest: addedUs,
      targetUs,
      met: targetUs === null || addedUs === null ? null : addedUs < targetUs,
      requestsPerS: median(mine.map((run) => run.result.requestsPerS)),
    }
  })
}

export function formatTracing(summaries: TracingSummary[]): string {
  const lines = ['tracing (trace-sat: non-streaming, closed loop; CPU of the gateway process per request, export to a loopback OTLP sink included)']
  for (const summary of summaries) {
    const cpu = summary.cpuUsPerRequest === null ? '—' : `${summary.cpuUsPerRequest.toFixed(1)} µs`
    const added = summary.addedUsPerRequest === null ? '' : `, adds ${summary.addedUsPerRequest.toFixed(1)} µs (target < ${summary.targetUs} µs: ${summary.met ? 'PASS' : 'FAIL'})`
    lines.push(`  ${summary.variant.padEnd(20)} ${cpu.padStart(10)}/request, ${summary.requestsPerS?.toFixed(0) ?? '—'} req/s${added}`)
  }
  return lines.join('\n')
}
