/**
 * CPU the request-path features add per request, against the same run's floor: the same JSON chat
 * exchange through the pipeline with no feature stage (the floor), then with
 *   (a) metering on: the account stage with the real shipper (serialisation amortised);
 *   (b) three limits on every request (a request rate, a token rate and a token budget) on the
 *       Redis limiter (GATEHOUSE_TEST_REDIS_URL, default 127.0.0.1:6379; one round trip each);
 *   (c) two inline guardrail checks (one before the request, one on the answer).
 * All in one process, so only the stages differ; the provider call is a canned answer. 32 exchanges
 * are in flight at a time, as under load (the limiter's Redis round trips overlap).
 *
 *   node test/bench/features-cpu.ts [--rounds 20000] [--gateway-floor-us 384]
 *
 * `--gateway-floor-us` is the whole gateway's CPU per request in `make bench` (README), used to
 * print the throughput each feature leaves, were CPU the bottleneck: floor / (floor + added).
 */
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import { limiterFromEnv } from '../../gateway/src/limits/from-env.ts'
import { ExchangeContext } from '../../gateway/src/pipeline/context.ts'
import { composePipeline, newFacts, type Exchange, type Operation, type StageFactory } from '../../gateway/src/pipeline/stage.ts'
import { accountStage } from '../../gateway/src/pipeline/stages/account.ts'
import { guardrailFeature } from '../../gateway/src/pipeline/stages/guardrails.ts'
import { limitsStage } from '../../gateway/src/pipeline/stages/limits.ts'
import { RuntimeHolder } from '../../gateway/src/runtime/holder.ts'
import { SNAPSHOT_SCHEMA_VERSION } from '../../gateway/src/snapshot/schema.ts'
import { UsageShipper } from '../../gateway/src/usage/shipper.ts'
import { dropPrefix } from '../helpers/redis.ts'

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '20000' }, 'gateway-floor-us': { type: 'string', default: '384' } } })
const rounds = Number(flags.rounds)
const gatewayFloorUs = Number(flags['gateway-floor-us'])
const CONCURRENCY = 32
const redisUrl = process.env.GATEHOUSE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

const chat: Operation = { name: 'chat', endpointType: 'chatComplete', format: 'openai', textual: true, cacheable: true }
const holder = new RuntimeHolder()
const applied = holder.apply({
  schemaVersion: SNAPSHOT_SCHEMA_VERSION, generation: 1, producedAt: new Date().toISOString(), producedBy: { component: 'bench', version: '0' },
  organizationId: 'org', workspaces: [{ id: 'ws', slug: 'ws', name: 'ws', status: 'active', logLevel: 'metadata' }],
  apiKeys: [{ id: 'key', hash: 'a'.repeat(64), type: 'workspace', subtype: 'service', workspaceId: 'ws', scopes: [], status: 'active' }],
  providers: [{ id: 'p', slug: 'openai', name: 'OpenAI', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1' }],
  limits: [
    { id: 'rpm', source: 'api_key', ownerId: 'key', name: 'key', kind: 'rate', type: 'requests', unit: 'rpm', value: 1_000_000_000, conditions: [{ key: 'api_key', values: ['key'] }] },
    { id: 'tpm', source: 'workspace', ownerId: 'ws', name: 'ws', kind: 'rate', type: 'tokens', unit: 'rpm', value: 1_000_000_000_000, conditions: [{ key: 'workspace_id', values: ['ws'] }] },
    { id: 'budget', source: 'policy', ownerId: 'budget', name: 'budget', kind: 'usage', type: 'tokens', creditLimit: 1_000_000_000_000, conditions: [{ key: 'metadata.team', values: ['*'] }], groupBy: ['metadata.team'] },
  ],
  guardrails: [
    { id: 'g-in', slug: 'g-in', name: 'no secrets', workspaceId: null, version: 1, hooks: ['beforeRequestHook'], actions: { deny: true }, holdBack: { mode: 'none', windowChars: 256 },
      checks: [{ id: 'default.contains', parameters: { words: ['password', 'secret'], operator: 'none' }, isEnabled: true }] },
    { id: 'g-out', slug: 'g-out', name: 'short', workspaceId: null, version: 1, hooks: ['afterRequestHook'], actions: { deny: false }, holdBack: { mode: 'none', windowChars: 256 },
      checks: [{ id: 'default.wordCount', parameters: { maxWords: 500 }, isEnabled: true }] },
  ],
  guardrailDefaults: [{ workspaceId: null, input: ['g-in'], output: ['g-out'] }],
})
if (!applied.ok) throw new Error(`bench snapshot rejected: ${JSON.stringify(applied.problems)}`)
const runtime = holder.current!
const provider = runtime.providers.get('id:p')!
const key = runtime.keysByHash.get('a'.repeat(64))!
const body = { model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'hello, how are you today?' }] }
const answer = { kind: 'json' as const, status: 200, body: { id: 'x', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Fine, thank you for asking.' }, finish_reason: 'stop' }] }, usage: { inputTokens: 12, outputTokens: 30 } }

const principal = { kind: 'api_key' as const, id: key.record.id, workspaceId: 'ws', userId: null, scopes: [], defaultConfig: null, key, attributes: {} }
function exchange(): Exchange {
  const context = new ExchangeContext({ traceId: 't', spanId: null, parentSpanId: null, spanName: null }, runtime, new AbortController().signal, Date.now())
  context.authenticated(principal, { team: 'a' })
  return {
    operation: chat, context, headers: {}, url: '/v1/chat/completions', params: {}, rawBody: body, body, upload: null, relayStreams: true,
    route: { kind: 'direct', target: { provider, upstreamModel: 'gpt-4o-mini' } }, facts: { ...newFacts(), provider, upstreamModel: 'gpt-4o-mini' }, responseHeaders: {},
  }
}
const terminal = async () => ({ ...answer })

function pipeline(stages: StageFactory[]) {
  return composePipeline(chat, stages, terminal).run
}

async function measure(label: string, run: (e: Exchange) => Promise<unknown>, after?: () => Promise<void>): Promise<number> {
  for (let i = 0; i < Math.min(5_000, rounds / 4); i++) await run(exchange())
  const start = process.cpuUsage()
  // CONCURRENCY exchanges in flight at a time, as under load (the limiter's round trips overlap).
  for (let i = 0; i < rounds; i += CONCURRENCY) {
    const answered = await Promise.all(Array.from({ length: CONCURRENCY }, () => run(exchange()) as Promise<{ status: number }>))
    const failed = answered.find((a) => a.status !== 200)
    if (failed) throw new Error(`${label}: answered ${failed.status}`)
    await new Promise((resolve) => setImmediate(resolve))
  }
  await after?.()
  const used = process.cpuUsage(start)
  const us = (used.user + used.system) / rounds
  console.log(`${label.padEnd(52)} ${us.toFixed(2)} µs CPU/request`)
  return us
}

const floor = await measure('floor: pipeline without feature stages', pipeline([]))

const shipper = new UsageShipper({ transport: async () => {}, batchSize: 1000 })
const metering = await measure('(a) metering: account stage + shipper', pipeline([accountStage({ sink: shipper })]), () => shipper.flush())

const prefix = `bench-${randomUUID().slice(0, 8)}:`
const setup = limiterFromEnv({ GATEHOUSE_REDIS_URL: redisUrl, GATEHOUSE_LIMITS_KEY_PREFIX: prefix })
const limits = await measure('(b) three limits on Redis (one round trip)', pipeline([limitsStage({ limiter: setup.limiter, keyPrefix: prefix })]))
await setup.limiter.close()
const cleaner = new Redis(redisUrl)
await dropPrefix(cleaner, prefix)
await cleaner.quit()

const guards = guardrailFeature()
// Sanity: the two guardrails are attached (a request naming a password is denied).
const denied = await pipeline([guards.before, guards.after])({ ...exchange(), body: { ...body, messages: [{ role: 'user', content: 'my password' }] } }).then(() => null, (error: unknown) => error)
if (!(denied instanceof Error)) throw new Error('the bench guardrails did not deny: they are not attached')
const guardrails = await measure('(c) two inline guardrail checks (before + after)', pipeline([guards.before, guards.after]))

console.log('')
console.log(`CPU added per request over the floor (${floor.toFixed(2)} µs): metering ${(metering - floor).toFixed(2)} µs, three limits ${(limits - floor).toFixed(2)} µs, two guardrails ${(guardrails - floor).toFixed(2)} µs`)
const share = (added: number) => `${((100 * gatewayFloorUs) / (gatewayFloorUs + added)).toFixed(0)} %`
console.log(`throughput left on a gateway using ${gatewayFloorUs} µs/request, were CPU the bottleneck: metering ${share(metering - floor)} (target ≥ 75 %), limits ${share(limits - floor)} (≥ 70 %), guardrails ${share(guardrails - floor)} (≥ 70 %)`)
