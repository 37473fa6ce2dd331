/**
 * CPU tracing adds per request, in one process, without HTTP around it: the same JSON exchange
 * through the trace stage and one traced upstream attempt (with `traceparent` written into the
 * outgoing headers, as the transport does), first with tracing off (the floor: no stage, no SDK),
 * then with the SDK sampling 0 % and 100 %, exporting OTLP http/protobuf to a loopback sink in this
 * process (its CPU counted too). Steadier than the `feature-sat` scenario of run.ts on a busy machine,
 * which measures the same thing end to end.
 *
 *   node test/bench/trace-cpu.ts [--rounds 50000] [--reps 3] [--allocations]
 *
 * `--allocations` also prints, per measurement, the bytes each exchange allocates and where
 * (allocation-sites.ts): what fills the young generation and, under load, gets promoted.
 *
 * Each repetition measures the floor and both sampling ratios again; the minimum and the median
 * of what each adds are printed last (the machine is shared: the minimum is the least disturbed).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { injectTraceContext } from '../../gateway/src/core/tracing.ts'
import { tracedAttempt } from '../../gateway/src/pipeline/attempt-span.ts'
import { ExchangeContext, readTrace } from '../../gateway/src/pipeline/context.ts'
import { composePipeline, newFacts, type Exchange, type Operation, type StageFactory } from '../../gateway/src/pipeline/stage.ts'
import { traceStage } from '../../gateway/src/pipeline/stages/trace.ts'
import { RuntimeHolder } from '../../gateway/src/runtime/holder.ts'
import { SNAPSHOT_SCHEMA_VERSION } from '../../gateway/src/snapshot/schema.ts'
import { startTracing } from '../../gateway/src/telemetry/tracing.ts'
import { allocationSites, formatAllocationSites } from './allocation-sites.ts'
import { FEATURE_TARGETS } from './feature-scenario.ts'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '50000' }, reps: { type: 'string', default: '3' }, allocations: { type: 'boolean', default: false } } })
const rounds = Number(values.rounds)
const reps = Number(values.reps)

const chat: Operation = { name: 'chat', endpointType: 'chatComplete', format: 'openai', textual: true, cacheable: true }
const holder = new RuntimeHolder()
const applied = holder.apply({
  schemaVersion: SNAPSHOT_SCHEMA_VERSION, generation: 1, producedAt: new Date().toISOString(), producedBy: { component: 'bench', version: '0' },
  organizationId: 'org', workspaces: [{ id: 'ws', slug: 'ws', name: 'ws', status: 'active' }],
  apiKeys: [{ id: 'key', hash: 'a'.repeat(64), type: 'workspace', subtype: 'service', workspaceId: 'ws', scopes: [], status: 'active' }],
  providers: [{ id: 'p', slug: 'openai', name: 'OpenAI', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1' }],
})
if (!applied.ok) throw new Error('bench snapshot rejected')
const runtime = holder.current!
const provider = runtime.providers.byId('p')!
const key = runtime.keysByHash.get('a'.repeat(64))!
const principal = { kind: 'api_key' as const, id: key.record.id, workspaceId: 'ws', userId: null, scopes: [], defaultConfig: null, key, attributes: {} }
const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], max_tokens: 64, temperature: 0.2 }
const target = { route: { provider, upstreamModel: 'gpt-4o-mini' }, forwardedHeaders: null, healthKey: 'p' } as Parameters<typeof tracedAttempt>[1]

function exchange(): Exchange {
  const context = new ExchangeContext(readTrace({}), runtime, new AbortController().signal, Date.now())
  context.authenticated(principal, {})
  return { operation: chat, context, headers: {}, url: '/v1/chat/completions', params: {}, rawBody: body, body, upload: null, relayStreams: true, route: null, facts: newFacts(), responseHeaders: {} }
}

// The dispatch terminal's part: one attempt, whose outgoing headers get the trace context.
const terminal = (e: Exchange) =>
  tracedAttempt(e, target, async () => {
    injectTraceContext({})
    e.facts.provider = provider
    e.facts.upstreamModel = 'gpt-4o-mini'
    return { kind: 'json' as const, status: 200, body: { id: 'chatcmpl-1', model: 'gpt-4o-mini', choices: [{ finish_reason: 'stop' }] }, usage: { inputTokens: 12, outputTokens: 30 } }
  })

async function measure(label: string, stages: StageFactory[]): Promise<number> {
  const run = composePipeline(chat, stages, terminal).run
  for (let i = 0; i < Math.min(10_000, rounds); i++) await run(exchange())
  const faultsBefore = process.resourceUsage().minorPageFault
  const start = process.cpuUsage()
  for (let i = 0; i < rounds; i++) {
    await run(exchange())
    // A server yields to I/O between requests; span batches are exported there.
    if (i % 200 === 199) await new Promise((resolve) => setImmediate(resolve))
  }
  const used = process.cpuUsage(start)
  const us = (used.user + used.system) / rounds
  const faults = (process.resourceUsage().minorPageFault - faultsBefore) / rounds
  console.log(`${label.padEnd(40)} ${us.toFixed(2)} µs CPU/request, ${faults.toFixed(2)} page faults/request`)
  if (values.allocations) console.log(formatAllocationSites(label, await allocationSites(async () => void (await run(exchange())), 20_000)))
  return us
}

let exportedBytes = 0
const sink = createServer((request, response) => {
  request.on('data', (chunk: Buffer) => (exportedBytes += chunk.length))
  request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end())
})
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve))

const RATIOS = [['0', 'tracing 0 %'], ['1', 'tracing 100 %']] as const
const added: Record<(typeof RATIOS)[number][1], number[]> = { 'tracing 0 %': [], 'tracing 100 %': [] }
for (let rep = 1; rep <= reps; rep++) {
  for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name]
  const floor = await measure(`#${rep} tracing off (floor)`, [])
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/protobuf'
  process.env.OTEL_TRACES_SAMPLER = 'parentbased_traceidratio'
  for (const [ratio, name] of RATIOS) {
    process.env.OTEL_TRACES_SAMPLER_ARG = ratio
    const tracing = await startTracing({ serviceName: 'gatehouse-bench' })
    const us = await measure(`#${rep} tracing on, ${name}`, [traceStage()])
    await tracing!.shutdown()
    added[name].push(us - floor)
  }
}
sink.close()
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
for (const [, name] of RATIOS) {
  const target = FEATURE_TARGETS[name].addedUs!
  const least = Math.min(...added[name])
  console.log(`${name}: adds min ${least.toFixed(2)}, median ${median(added[name]).toFixed(2)} µs CPU/request over ${reps} repetitions (target < ${target} µs: ${median(added[name]) < target ? 'PASS' : 'FAIL'})`)
}
console.log(`exported ${(exportedBytes / 1024).toFixed(0)} KiB of spans to the loopback sink`)
