/**
 * CPU the measure stage (metrics and the access log) adds per request: the same JSON exchange
 * through a pipeline without it, with it feeding the Prometheus metrics only, and with the access
 * log too (pino JSON, every request, to a destination that discards: the serialisation is counted,
 * the write to stdout is not). One process; prints µs per request. `make bench` runs it after the
 * load scenarios (`--stage-cpu-rounds`); alone: `node test/bench/measure-cpu.ts [--rounds 100000]`.
 */
import { Writable } from 'node:stream'
import { parseArgs } from 'node:util'
import { pino } from 'pino'
import { ExchangeContext } from '../../gateway/src/pipeline/context.ts'
import { RuntimeHolder } from '../../gateway/src/runtime/holder.ts'
import { composePipeline, newFacts, type Exchange, type Operation } from '../../gateway/src/pipeline/stage.ts'
import { measureStage } from '../../gateway/src/pipeline/stages/measure.ts'
import { createAccessLog } from '../../gateway/src/telemetry/access-log.ts'
import { createGatewayMetrics } from '../../gateway/src/telemetry/metrics.ts'
import { SNAPSHOT_SCHEMA_VERSION } from '../../gateway/src/snapshot/schema.ts'

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '100000' }, json: { type: 'boolean', default: false } } })
const rounds = Math.max(1000, Number(flags.rounds))

const chat: Operation = { name: 'chat', endpointType: 'chatComplete', format: 'openai', textual: true, cacheable: true }
const holder = new RuntimeHolder()
const applied = holder.apply({
  schemaVersion: SNAPSHOT_SCHEMA_VERSION, generation: 1, producedAt: new Date().toISOString(), producedBy: { component: 'bench', version: '0' },
  organizationId: 'org', workspaces: [{ id: 'ws', slug: 'ws', name: 'ws', status: 'active', logLevel: 'metadata' }],
  apiKeys: [{ id: 'key', hash: 'a'.repeat(64), type: 'workspace', subtype: 'service', workspaceId: 'ws', scopes: [], status: 'active' }],
  providers: [{ id: 'p', slug: 'openai', name: 'OpenAI', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1' }],
})
if (!applied.ok) throw new Error('snapshot')
const runtime = holder.current!
const provider = runtime.providers.byId('p')!
const key = runtime.keysByHash.get('a'.repeat(64))!
const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }
const answer = { kind: 'json' as const, status: 200, body: { id: 'x', model: 'gpt-4o-mini', choices: [] }, usage: { inputTokens: 12, outputTokens: 30 } }
const principal = { kind: 'api_key' as const, id: key.record.id, workspaceId: 'ws', userId: null, scopes: [], defaultConfig: null, key, attributes: {} }

function exchange(): Exchange {
  const context = new ExchangeContext({ traceId: 't', spanId: null, parentSpanId: null, spanName: null }, runtime, new AbortController().signal, Date.now())
  context.authenticated(principal, {})
  return { operation: chat, context, headers: {}, url: '/v1/chat/completions', params: {}, rawBody: body, body, upload: null, relayStreams: true, route: null, facts: newFacts(), responseHeaders: {} }
}
// What dispatch and the account stage leave in the facts of an answered exchange.
const terminal = async (e: Exchange) => {
  e.facts.provider = provider
  e.facts.upstreamModel = 'gpt-4o-mini'
  e.facts.attempts = 1
  e.facts.upstreamAttempts.push({ provider, targetKey: 'p', status: 200, durationMs: 3 })
  e.facts.usage = answer.usage
  e.facts.annotations.costUsd = 0.00002
  return { ...answer }
}

async function measure(label: string, run: (e: Exchange) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(20_000, rounds / 5); i++) await run(exchange())
  const start = process.cpuUsage()
  for (let i = 0; i < rounds; i++) {
    await run(exchange())
    if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve))
  }
  const used = process.cpuUsage(start)
  const us = (used.user + used.system) / rounds
  if (!flags.json) console.log(`${label.padEnd(44)} ${us.toFixed(2)} µs CPU/request`)
  return us
}

const discard = new Writable({ write: (_chunk, _encoding, done) => done() })
const metrics = createGatewayMetrics(holder, { processMetrics: false })
const bare = await measure('pipeline without the measure stage', composePipeline(chat, [], terminal).run)
const metricsOnly = await measure('with measure stage: metrics', composePipeline(chat, [measureStage({ observe: (o) => metrics.observeExchange(o) })], terminal).run)
const accessLog = createAccessLog(pino({ level: 'info' }, discard), { level: 'info', sampleRate: 1 })
const withLog = await measure('with measure stage: metrics + access log', composePipeline(chat, [measureStage({ observe: (o) => metrics.observeExchange(o), accessLog })], terminal).run)
const result = { metricsUs: metricsOnly - bare, metricsAndAccessLogUs: withLog - bare, rounds }
if (flags.json) console.log(JSON.stringify(result))
else console.log(`measure stage on the request path: metrics ${result.metricsUs.toFixed(2)} µs; metrics + access log ${result.metricsAndAccessLogUs.toFixed(2)} µs`)
