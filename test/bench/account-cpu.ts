/**
 * CPU metering adds per request, in one process: the same JSON exchange through a pipeline with and
 * without the account stage, under each log level a workspace can have (`full` is the default:
 * bodies redacted and kept; `metadata`: counts and metadata), with the real shipper queueing,
 * serialising and framing batches as the HTTP transport sends them (the send itself is left out:
 * feature-sat in run.ts measures it end to end). Bodies are parsed afresh for every exchange, as a
 * server does, so keeping them until a batch is serialised costs what it costs in a gateway.
 *
 *   node test/bench/account-cpu.ts [--rounds 100000] [--reps 3]
 *
 * Prints µs per request for each repetition, then the minimum and median added over the floor.
 */
import { parseArgs } from 'node:util'
import { rememberRawJson } from '../../gateway/src/core/raw-json.ts'
import { ExchangeContext, readTrace } from '../../gateway/src/pipeline/context.ts'
import { composePipeline, newFacts, type Exchange, type Operation, type StageFactory } from '../../gateway/src/pipeline/stage.ts'
import { accountStage } from '../../gateway/src/pipeline/stages/account.ts'
import { RuntimeHolder } from '../../gateway/src/runtime/holder.ts'
import { SNAPSHOT_SCHEMA_VERSION } from '../../gateway/src/snapshot/schema.ts'
import type { LogLevel } from '../../gateway/src/snapshot/usage-record.ts'
import { batchParts } from '../../gateway/src/usage/http-transport.ts'
import { UsageShipper } from '../../gateway/src/usage/shipper.ts'

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '100000' }, reps: { type: 'string', default: '3' } } })
const rounds = Number(flags.rounds)
const reps = Number(flags.reps)

const chat: Operation = { name: 'chat', endpointType: 'chatComplete', format: 'openai', textual: true, cacheable: true }
const LEVELS: readonly LogLevel[] = ['full', 'metadata']
const holder = new RuntimeHolder()
const applied = holder.apply({
  schemaVersion: SNAPSHOT_SCHEMA_VERSION, generation: 1, producedAt: new Date().toISOString(), producedBy: { component: 'bench', version: '0' },
  organizationId: 'org',
  workspaces: LEVELS.map((level) => ({ id: `ws-${level}`, slug: `ws-${level}`, name: level, status: 'active' as const, logLevel: level })),
  apiKeys: LEVELS.map((level, index) => ({ id: `key-${level}`, hash: String(index).repeat(64), type: 'workspace' as const, subtype: 'service' as const, workspaceId: `ws-${level}`, scopes: [], status: 'active' as const })),
  providers: [{ id: 'p', slug: 'openai', name: 'OpenAI', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1' }],
})
if (!applied.ok) throw new Error(`bench snapshot rejected: ${JSON.stringify(applied.problems)}`)
const runtime = holder.current!
const provider = runtime.providers.byId('p')!

// Bodies like those of `make bench` (run.ts's 0.26 KB chat body, a one-sentence answer).
const requestText = JSON.stringify({
  model: 'gpt-4o-mini', max_tokens: 64,
  messages: [
    { role: 'system', content: 'You are a concise assistant that answers benchmark questions.' },
    { role: 'user', content: 'Write one short sentence about measuring gateway overhead on loopback.' },
  ],
})
const answerText = JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created: 1_764_000_000, model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Measuring gateway overhead on loopback isolates the cost the gateway itself adds to each request.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 31, completion_tokens: 17, total_tokens: 48 },
})

function principal(level: LogLevel) {
  const key = runtime.keysByHash.get(String(LEVELS.indexOf(level)).repeat(64))!
  return { kind: 'api_key' as const, id: key.record.id, workspaceId: `ws-${level}`, userId: null, scopes: [], defaultConfig: null, key, attributes: {} }
}

function exchange(level: LogLevel): Exchange {
  const context = new ExchangeContext(readTrace({}), runtime, new AbortController().signal, Date.now())
  context.authenticated(principal(level), { team: 'bench' })
  const body = JSON.parse(requestText) as Record<string, unknown>
  return {
    operation: chat, context, headers: {}, url: '/v1/chat/completions', params: {}, rawBody: body, body, upload: null, relayStreams: true,
    route: null, facts: newFacts(), responseHeaders: {},
  }
}

async function terminal(e: Exchange) {
  e.facts.provider = provider
  e.facts.upstreamModel = 'gpt-4o-mini'
  // As dispatch does for an answer relayed unchanged: its text is kept (and logged) as it came.
  const body = JSON.parse(answerText) as unknown
  rememberRawJson(body, answerText)
  return { kind: 'json' as const, status: 200, body, usage: { inputTokens: 31, outputTokens: 17 } }
}

async function measure(stages: StageFactory[], level: LogLevel, after?: () => Promise<void>): Promise<number> {
  const run = composePipeline(chat, stages, terminal).run
  for (let i = 0; i < Math.min(20_000, rounds / 5); i++) await run(exchange(level))
  await after?.()
  const start = process.cpuUsage()
  for (let i = 0; i < rounds; i++) {
    await run(exchange(level))
    // A server yields to I/O between requests; the shipper's work off the request path runs there.
    if (i % 64 === 63) await new Promise((resolve) => setImmediate(resolve))
  }
  await after?.()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / rounds
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const added: Record<LogLevel, number[]> = { full: [], metadata: [], off: [] }
for (let rep = 1; rep <= reps; rep++) {
  const floor = await measure([], 'full')
  const line = [`rep ${rep}: floor ${floor.toFixed(2)} µs`]
  for (const level of LEVELS) {
    const shipper = new UsageShipper({ transport: async (batch) => void batchParts(batch) })
    const metered = await measure([accountStage({ sink: shipper })], level, () => shipper.flush())
    added[level].push(metered - floor)
    line.push(`log level ${level} ${metered.toFixed(2)} µs (+${(metered - floor).toFixed(2)})`)
  }
  console.log(line.join(', '))
}
for (const level of LEVELS) {
  console.log(`metering adds, log level ${level.padEnd(8)}: min ${Math.min(...added[level]).toFixed(2)} µs, median ${median(added[level]).toFixed(2)} µs CPU/request (target < 15 µs, #12)`)
}
