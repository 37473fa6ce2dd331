/**
 * CPU the request-path features add per request, against the same run's floor: the same JSON chat
 * exchange through the pipeline with no feature stage (the floor), then with
 *   (a) metering on: the account stage with the real shipper (serialisation and framing amortised),
 *       at the default log level (full: bodies redacted and kept; account-cpu.ts has each level);
 *   (b) three limits on every request (a request rate, a token rate and a token budget) on the
 *       Redis limiter (GATEHOUSE_TEST_REDIS_URL, default 127.0.0.1:6379; one round trip each);
 *   (c) two inline guardrail checks (one before the request, one on the answer).
 * All in one process, so only the stages differ; the provider call is a canned answer, its body and
 * the request's parsed afresh for every exchange, as a server does. 32 exchanges are in flight at a
 * time, as under load (the limiter's Redis round trips overlap).
 *
 *   node test/bench/features-cpu.ts [--rounds 20000] [--gateway-floor-us 384] [--only limits]
 *
 * `--only metering|limits|guardrails` measures the floor and that one feature (a profile of one
 * feature, `node --cpu-prof`, is then not mixed with the others').
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
import { batchParts } from '../../gateway/src/usage/http-transport.ts'
import { UsageShipper } from '../../gateway/src/usage/shipper.ts'
import { dropPrefix } from '../helpers/redis.ts'

const FEATURES = ['metering', 'limits', 'guardrails'] as const
const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '20000' }, 'gateway-floor-us': { type: 'string', default: '384' }, only: { type: 'string' } } })
if (flags.only !== undefined && !(FEATURES as readonly string[]).includes(flags.only)) throw new Error(`--only: one of ${FEATURES.join(', ')}`)
const measured = (feature: (typeof FEATURES)[number]): boolean => flags.only === undefined || flags.only === feature
const rounds = Number(flags.rounds)
const gatewayFloorUs = Number(flags['gateway-floor-us'])
const CONCURRENCY = 32
const redisUrl = process.env.GATEHOUSE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

const chat: Operation = { name: 'chat', endpointType: 'chatComplete', format: 'openai', textual: true, cacheable: true }
const holder = new RuntimeHolder()
const applied = holder.apply({
  schemaVersion: SNAPSHOT_SCHEMA_VERSION, generation: 1, producedAt: new Date().toISOString(), producedBy: { component: 'bench', version: '0' },
  organizationId: 'org', workspaces: [{ id: 'ws', slug: 'ws', name: 'ws', status: 'active' }],
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
const provider = runtime.providers.byId('p')!
const key = runtime.keysByHash.get('a'.repeat(64))!
const requestText = JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'hello, how are you today?' }] })
const answerText = JSON.stringify({ id: 'x', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Fine, thank you for asking.' }, finish_reason: 'stop' }] })

const principal = { kind: 'api_key' as const, id: key.record.id, workspaceId: 'ws', userId: null, scopes: [], defaultConfig: null, key, attributes: {} }
function exchange(): Exchange {
  const context = new ExchangeContext({ traceId: 't', spanId: null, parentSpanId: null, spanName: null }, runtime, new AbortController().signal, Date.now())
  context.authenticated(principal, { team: 'a' })
  const body = JSON.parse(requestText) as Record<string, unknown>
  return {
    operation: chat, context, headers: {}, url: '/v1/chat/completions', params: {}, rawBody: body, body, upload: null, relayStreams: true,
    route: { kind: 'direct', target: { provider, upstreamModel: 'gpt-4o-mini' } }, facts: { ...newFacts(), provider, upstreamModel: 'gpt-4o-mini' }, responseHeaders: {},
  }
}
const terminal = async () => ({ kind: 'json' as const, status: 200, body: JSON.parse(answerText) as unknown, usage: { inputTokens: 12, outputTokens: 30 } })

function pipeline(stages: StageFactory[]) {
  return composePipeline(chat, stages, terminal).run
}

interface MeasureHooks {
  /** Before the measured rounds (after the warm-up). */
  start?: () => Promise<void>
  /** After the measured rounds, inside the measured CPU (e.g. flushing what was batched). */
  after?: () => Promise<void>
}

async function measure(label: string, run: (e: Exchange) => Promise<unknown>, hooks: MeasureHooks = {}): Promise<number> {
  // Warm: the JIT takes some 20,000 exchanges to settle, its compiler threads counted in this process's CPU.
  for (let i = 0; i < Math.min(20_000, rounds / 4); i++) await run(exchange())
  await hooks.start?.()
  const start = process.cpuUsage()
  // CONCURRENCY exchanges in flight at a time, as under load (the limiter's round trips overlap).
  for (let i = 0; i < rounds; i += CONCURRENCY) {
    const answered = await Promise.all(Array.from({ length: CONCURRENCY }, () => run(exchange()) as Promise<{ status: number }>))
    const failed = answered.find((a) => a.status !== 200)
    if (failed) throw new Error(`${label}: answered ${failed.status}`)
    await new Promise((resolve) => setImmediate(resolve))
  }
  await hooks.after?.()
  const used = process.cpuUsage(start)
  const us = (used.user + used.system) / rounds
  console.log(`${label.padEnd(52)} ${us.toFixed(2)} µs CPU/request`)
  return us
}

const floor = await measure('floor: pipeline without feature stages', pipeline([]))

async function meteringUs(): Promise<number> {
  const shipper = new UsageShipper({ transport: async (batch) => void batchParts(batch), batchSize: 500 })
  return measure('(a) metering: account stage + shipper', pipeline([accountStage({ sink: shipper })]), { after: () => shipper.flush() })
}

/** Redis's own time in the limiter's scripts (INFO commandstats), µs per call of the scripts. */
async function scriptUs(redis: Redis): Promise<{ calls: number; usec: number }> {
  const info = await redis.info('commandstats')
  let calls = 0
  let usec = 0
  for (const match of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(match[1])
    usec += Number(match[2])
  }
  return { calls, usec }
}

async function limitsUs(): Promise<number> {
  const prefix = `bench-${randomUUID().slice(0, 8)}:`
  const setup = limiterFromEnv({ GATEHOUSE_REDIS_URL: redisUrl, GATEHOUSE_LIMITS_KEY_PREFIX: prefix })
  const observer = new Redis(redisUrl)
  let before = { calls: 0, usec: 0 }
  try {
    return await measure('(b) three limits on Redis (one round trip)', pipeline([limitsStage({ limiter: setup.limiter, keyPrefix: prefix })]), {
      start: async () => {
        before = await scriptUs(observer)
      },
      after: async () => {
        const after = await scriptUs(observer)
        // Redis's CPU is not this process's: reported beside it (a shared Redis counts others' scripts too).
        console.log(`    Redis time in scripts: ${((after.usec - before.usec) / rounds).toFixed(2)} µs/request over ${after.calls - before.calls} script calls`)
      },
    })
  } finally {
    await setup.limiter.close()
    await dropPrefix(observer, prefix)
    await observer.quit()
  }
}

async function guardrailsUs(): Promise<number> {
  const guards = guardrailFeature()
  // Sanity: the two guardrails are attached (a request naming a password is denied).
  const denied = await pipeline([guards.before, guards.after])({ ...exchange(), body: { ...(JSON.parse(requestText) as object), messages: [{ role: 'user', content: 'my password' }] } }).then(() => null, (error: unknown) => error)
  if (!(denied instanceof Error)) throw new Error('the bench guardrails did not deny: they are not attached')
  return measure('(c) two inline guardrail checks (before + after)', pipeline([guards.before, guards.after]))
}

const added = {
  metering: measured('metering') ? await meteringUs() - floor : null,
  limits: measured('limits') ? await limitsUs() - floor : null,
  guardrails: measured('guardrails') ? await guardrailsUs() - floor : null,
}
const TARGETS = { metering: 75, limits: 70, guardrails: 70 }
const share = (us: number) => `${((100 * gatewayFloorUs) / (gatewayFloorUs + us)).toFixed(0)} %`
const shown = FEATURES.filter((feature) => added[feature] !== null)

console.log('')
console.log(`CPU added per request over the floor (${floor.toFixed(2)} µs): ${shown.map((feature) => `${feature} ${added[feature]!.toFixed(2)} µs`).join(', ')}`)
console.log(`throughput left on a gateway using ${gatewayFloorUs} µs/request, were CPU the bottleneck: ${shown.map((feature) => `${feature} ${share(added[feature]!)} (target ≥ ${TARGETS[feature]} %)`).join(', ')}`)
