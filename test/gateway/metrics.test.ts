/**
 * /metrics and the access log after real traffic: the OpenAI SDK against a gateway in front of the
 * OpenAI simulators, with the limits, cache, guardrail and account stages composed as in
 * production. The exposition is parsed (test/helpers/prometheus-text.ts) and its names and label
 * sets checked: a chat, a stream, a 429 from a rate limit, a cache hit, a guardrail deny, a retry
 * then a fallback under a config; and 10,000 distinct model strings leave the series count bounded.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { Writable } from 'node:stream'
import OpenAI from 'openai'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { limiterFromEnv, limitsStage, UsageShipper, type LimiterSetup } from '@gatehouse/gateway'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { startTestGateway, WORKSPACE_ID, type TestGateway } from '../helpers/gateway.ts'
import { pollUntil } from '../helpers/processes.ts'
import { toolPath } from '../k8s/apiserver.ts'
import { allSamples, parsePrometheusText, samplesOf, sumOf, type Family } from '../helpers/prometheus-text.ts'

let primary: Simulator
let backup: Simulator
let gateway: TestGateway
let limits: LimiterSetup
let shipper: UsageShipper
const logLines: Array<Record<string, unknown>> = []

const FALLBACK_CONFIG = JSON.stringify({
  strategy: { mode: 'fallback' },
  retry: { attempts: 1, backoff_initial_ms: 1, backoff_max_ms: 1 },
  targets: [{ provider: '@primary' }, { provider: '@backup' }],
})
const CACHE_CONFIG = JSON.stringify({ provider: '@primary', cache: { mode: 'simple', max_age: 60 } })

beforeAll(async () => {
  // Dated ids and 10,000 made-up model names are what this suite sends: the simulator takes any model.
  primary = await startOpenAISimulator({ chunks: 4, models: 'any' })
  backup = await startOpenAISimulator({ chunks: 4, models: 'any' })
  limits = limiterFromEnv({})
  const limitsFactory = limitsStage({ limiter: limits.limiter, keyPrefix: limits.keyPrefix })
  shipper = new UsageShipper({ transport: async () => {} })
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logLines.push(JSON.parse(line) as Record<string, unknown>)
        done()
      },
    }),
  )
  gateway = await startTestGateway(
    [
      { slug: 'primary', kind: 'openai', baseUrl: primary.baseUrl },
      { slug: 'backup', kind: 'openai', baseUrl: backup.baseUrl },
    ],
    { features: { limits: limitsFactory }, metricsRegistries: [limitsFactory.registry], usage: shipper, logger, maxModelLabels: 50 },
  )
  gateway.update((snapshot) => {
    // Requests tagged `metadata.tier=limited` get one request a minute; the rest are unlimited.
    snapshot.limits = [
      { id: 'one-rpm', source: 'policy', ownerId: 'one-rpm', name: 'one rpm', kind: 'rate', type: 'requests', unit: 'rpm', value: 1, conditions: [{ key: 'metadata.tier', values: ['limited'] }] },
    ]
    snapshot.guardrails = [
      {
        id: 'no-passwords', slug: 'no-passwords', name: 'no passwords', workspaceId: null, version: 1, hooks: ['beforeRequestHook'], holdBack: { mode: 'none', windowChars: 256 },
        checks: [{ id: 'default.contains', parameters: { words: ['password'], operator: 'none' }, isEnabled: true }],
        actions: { deny: true },
      },
    ]
    snapshot.guardrailDefaults = [{ workspaceId: null, input: ['no-passwords'], output: [] }]
  })
}, 60_000)

afterAll(async () => {
  await gateway?.close()
  await shipper?.close()
  await limits?.limiter.close()
  await primary?.close()
  await backup?.close()
})

function client(headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@primary', ...headers } })
}

async function scrape(): Promise<Map<string, Family>> {
  const response = await fetch(`${gateway.url}/metrics`)
  expect(response.status).toBe(200)
  return parsePrometheusText(await response.text())
}

const chat = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'hello there' }] }

describe('metrics after real traffic', () => {
  it('counts a chat and a stream with GenAI and gatehouse metrics, labels bounded', async () => {
    await client().chat.completions.create(chat)
    const stream = await client().chat.completions.create({ ...chat, stream: true, stream_options: { include_usage: true } })
    for await (const chunk of stream) void chunk
    const families = await scrape()

    const ok = { operation: 'chat', workspace: 'test', provider: 'primary', model: 'gpt-4o', status_class: '2xx' }
    expect(sumOf(families, 'gatehouse_requests_total', ok)).toBeGreaterThanOrEqual(2)
    expect(families.get('gatehouse_requests_total')?.type).toBe('counter')
    expect(Object.keys(samplesOf(families, 'gatehouse_requests_total', ok)[0]!.labels).sort()).toEqual(['model', 'operation', 'provider', 'status_class', 'workspace'])
    expect(sumOf(families, 'gatehouse_request_duration_seconds_count', { operation: 'chat', workspace: 'test', status_class: '2xx' })).toBeGreaterThanOrEqual(2)
    expect(sumOf(families, 'gatehouse_upstream_attempts_total', { provider: 'primary', provider_kind: 'openai', status_class: '2xx' })).toBeGreaterThanOrEqual(2)
    expect(sumOf(families, 'gatehouse_tokens_total', { workspace: 'test', provider: 'primary', model: 'gpt-4o', type: 'output' })).toBeGreaterThanOrEqual(8)
    expect(sumOf(families, 'gatehouse_cost_usd_total', { workspace: 'test', provider: 'primary', model: 'gpt-4o' })).toBeGreaterThan(0)

    const genAi = { gen_ai_operation_name: 'chat', gen_ai_provider_name: 'openai', gen_ai_request_model: 'gpt-4o', gen_ai_response_model: 'gpt-4o' }
    expect(families.get('gen_ai_client_token_usage')?.type).toBe('histogram')
    expect(sumOf(families, 'gen_ai_client_token_usage_count', { ...genAi, gen_ai_token_type: 'input' })).toBeGreaterThanOrEqual(2)
    expect(sumOf(families, 'gen_ai_client_token_usage_count', { ...genAi, gen_ai_token_type: 'output' })).toBeGreaterThanOrEqual(2)
    // The convention's explicit buckets, not prom-client's defaults.
    const tokenBuckets = samplesOf(families, 'gen_ai_client_token_usage_bucket', { ...genAi, gen_ai_token_type: 'output' }).map((sample) => sample.labels.le)
    expect(tokenBuckets).toEqual(['1', '4', '16', '64', '256', '1024', '4096', '16384', '65536', '262144', '1048576', '4194304', '16777216', '67108864', '+Inf'])
    expect(sumOf(families, 'gen_ai_client_operation_duration_seconds_count', { ...genAi, error_type: '' })).toBeGreaterThanOrEqual(2)
    // Time to first token and per output token: the stream only.
    expect(sumOf(families, 'gen_ai_server_time_to_first_token_seconds_count', genAi)).toBe(1)
    expect(sumOf(families, 'gen_ai_server_time_per_output_token_seconds_count', genAi)).toBe(1)
    expect(samplesOf(families, 'gen_ai_server_time_to_first_token_seconds_bucket', genAi).map((sample) => sample.labels.le)[0]).toBe('0.001')

    // A dated id is counted under its family; the GenAI metrics keep the model as asked.
    const before = sumOf(families, 'gatehouse_requests_total', ok)
    await client().chat.completions.create({ ...chat, model: 'gpt-4o-2024-08-06' })
    const dated = await scrape()
    expect(sumOf(dated, 'gatehouse_requests_total', ok)).toBe(before + 1)
    expect(sumOf(dated, 'gen_ai_client_operation_duration_seconds_count', { ...genAi, gen_ai_request_model: 'gpt-4o-2024-08-06', gen_ai_response_model: 'gpt-4o-2024-08-06' })).toBe(1)

    // No key ids anywhere, and every metric has HELP and TYPE.
    const text = await (await fetch(`${gateway.url}/metrics`)).text()
    expect(text).not.toContain('key-ws')
    expect(text).not.toContain(gateway.workspaceKey)
    for (const family of families.values()) {
      expect(family.help, family.name).not.toBe('')
      expect(family.type, family.name).not.toBe('untyped')
    }
  })

  it('counts answers of a model without a price until an override prices it', async () => {
    const unpricedOf = async (): Promise<number> => sumOf(await scrape(), 'gatehouse_unpriced_requests_total', { workspace: 'test', provider: 'primary' })
    // Priced (the table has gpt-4o): not counted.
    const before = await unpricedOf()
    await client().chat.completions.create(chat)
    expect(await unpricedOf()).toBe(before)
    // No row and no family in the table: counted (the model label is bounded: `other` for a name the provider does not list).
    await client().chat.completions.create({ ...chat, model: 'acme-house-model-7' })
    expect(await unpricedOf()).toBe(before + 1)
    expect(sumOf(await scrape(), 'gatehouse_unpriced_requests_total', { workspace: 'test', provider: 'primary', model: 'other' })).toBeGreaterThanOrEqual(1)
    // A price override for the provider's kind prices it: no longer counted.
    gateway.update((snapshot) => {
      snapshot.prices = [{ provider: 'openai', model: 'acme-house-model-7', workspaceId: null, input: 0.000001, output: 0.000002, version: 'test-1' }]
    })
    await client().chat.completions.create({ ...chat, model: 'acme-house-model-7' })
    expect(await unpricedOf()).toBe(before + 1)
    gateway.update((snapshot) => {
      snapshot.prices = []
    })
  })

  it('reports a provider used only by direct routes in the breaker and in-flight gauges', async () => {
    // Only direct routes have reached `primary` so far (the configs come in later tests).
    // Break tried: dropping the direct branch's retryBudget.enter() (pipeline/stages/dispatch.ts)
    // left no primary sample in either gauge: the in-flight poll below timed out.
    primary.script({ firstByteDelayMs: 400 })
    const slow = client().chat.completions.create(chat)
    let during: Map<string, Family> | undefined
    await pollUntil(async () => {
      during = await scrape()
      return sumOf(during, 'gatehouse_upstream_active_requests', { provider: 'primary' }) === 1
    }, 5_000, 20)
    await slow
    const after = await scrape()
    expect(samplesOf(during!, 'gatehouse_upstream_circuit_breakers', { provider: 'primary', state: 'closed' }).map((sample) => sample.value)).toEqual([1])
    expect(samplesOf(after, 'gatehouse_upstream_active_requests', { provider: 'primary' }).map((sample) => sample.value)).toEqual([0])
    expect(sumOf(after, 'gatehouse_upstream_retrying_requests', { provider: 'primary' })).toBe(0)
  })

  it('counts a 429 from a rate limit as a refusal of the workspace', async () => {
    const limited = client({ 'x-gateway-metadata': JSON.stringify({ tier: 'limited' }) })
    await limited.chat.completions.create(chat)
    const refused = await limited.chat.completions.create(chat).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError)
    const families = await scrape()
    expect(sumOf(families, 'gatehouse_limit_refusals_total', { workspace: 'test', reason: 'rate_limited' })).toBe(1)
    expect(sumOf(families, 'gatehouse_request_errors_total', { operation: 'chat', workspace: 'test', error_code: 'rate_limited' })).toBe(1)
    expect(sumOf(families, 'gatehouse_requests_total', { operation: 'chat', workspace: 'test', status_class: '4xx' })).toBeGreaterThanOrEqual(1)
    // The limits stage's own decision counter is served on the same endpoint.
    expect(sumOf(families, 'gatehouse_limit_decisions_total', { outcome: 'rate_limited' })).toBe(1)
  })

  it('counts a cache miss then a hit', async () => {
    const cached = client({ 'x-gateway-config': CACHE_CONFIG })
    const body = { ...chat, messages: [{ role: 'user' as const, content: `cache me ${Date.now()}` }] }
    await cached.chat.completions.create(body)
    const second = await cached.chat.completions.create(body).withResponse()
    expect(second.response.headers.get('x-gateway-cache-status')).toBe('HIT')
    const families = await scrape()
    expect(sumOf(families, 'gatehouse_cache_requests_total', { workspace: 'test', result: 'hit' })).toBe(1)
    expect(sumOf(families, 'gatehouse_cache_requests_total', { workspace: 'test', result: 'miss' })).toBe(1)
  })

  it('counts a guardrail deny as a verdict and an error', async () => {
    const denied = await client().chat.completions.create({ ...chat, messages: [{ role: 'user', content: 'my password is hunter2' }] }).catch((error: unknown) => error)
    expect((denied as { status?: number }).status).toBe(446)
    const families = await scrape()
    expect(sumOf(families, 'gatehouse_guardrail_verdicts_total', { hook: 'beforeRequestHook', outcome: 'denied' })).toBe(1)
    expect(sumOf(families, 'gatehouse_request_errors_total', { operation: 'chat', workspace: 'test', error_code: 'guardrail_blocked' })).toBe(1)
  })

  it('counts a retry then a fallback as attempts, a retry and a fallback', async () => {
    primary.script({ status: 503 }, { status: 503 })
    const answer = await client({ 'x-gateway-config': FALLBACK_CONFIG }).chat.completions.create(chat).withResponse()
    expect(answer.response.headers.get('x-gateway-provider')).toBe('backup')
    const families = await scrape()
    expect(sumOf(families, 'gatehouse_upstream_attempts_total', { provider: 'primary', status_class: '5xx' })).toBe(2)
    expect(sumOf(families, 'gatehouse_upstream_fallbacks_total', { from_provider: 'primary', to_provider: 'backup' })).toBe(1)
    expect(sumOf(families, 'gatehouse_upstream_attempts_total', { provider: 'backup', status_class: '2xx' })).toBe(1)
    // The breaker of each target of the config is reported by provider and state.
    expect(samplesOf(families, 'gatehouse_upstream_circuit_breakers', { provider: 'primary', state: 'closed' })).toHaveLength(1)
  })

  it('reports the snapshot generation, its age and sync lag, and usage delivery', async () => {
    const families = await scrape()
    expect(sumOf(families, 'gatehouse_snapshot_generation')).toBe(gateway.snapshot.generation)
    expect(samplesOf(families, 'gatehouse_snapshot_age_seconds')).toHaveLength(1)
    expect(samplesOf(families, 'gatehouse_snapshot_sync_lag_seconds')).toHaveLength(1)
    expect(families.get('gatehouse_usage_records_shipped_total')?.type).toBe('counter')
    expect(samplesOf(families, 'gatehouse_usage_records_queued')).toHaveLength(1)
    expect(samplesOf(families, 'gatehouse_usage_spool_over_bound')).toHaveLength(1)
  })

  it('writes one access-log line per exchange with the usage record ids and no secret', async () => {
    logLines.length = 0
    const answer = await client({ 'x-gateway-trace-id': 'trace-access-log-1' }).chat.completions.create(chat).withResponse()
    const lines = logLines.filter((line) => line.log === 'access')
    expect(lines).toHaveLength(1)
    const line = lines[0]!
    expect(line).toMatchObject({
      msg: 'request',
      traceId: 'trace-access-log-1',
      operation: 'chat',
      path: '/v1/chat/completions',
      workspaceId: WORKSPACE_ID,
      apiKeyId: 'key-ws',
      provider: 'primary',
      modelRequested: 'gpt-4o',
      status: 200,
      errorCode: null,
      streamed: false,
    })
    expect(line.requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(line.inputTokens).toBeGreaterThan(0)
    expect(line.costUsd).toBeGreaterThan(0)
    expect(answer.response.headers.get('x-gateway-trace-id')).toBe('trace-access-log-1')
    expect(JSON.stringify(logLines)).not.toContain(gateway.workspaceKey)
    expect(JSON.stringify(logLines)).not.toContain('sk-simulator')
  })
})

// Built by `make promtool` (make test-tools); the Kubernetes suites' bin folder.
const promtool = toolPath('promtool')

describe.skipIf(!existsSync(promtool))('the exposition after traffic', () => {
  it('passes promtool check metrics (Prometheus naming conventions)', async () => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text()
    const checked = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' })
    expect(checked.status, `${checked.stdout}${checked.stderr}`).toBe(0)
  })
})

describe('cardinality', () => {
  it('keeps the series count bounded after 10,000 distinct model strings', async () => {
    primary.options.recordLimit = 0
    const before = allSamples(await scrape()).length
    const total = 10_000
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < total) {
        const index = next++
        // Half look like a priced family (`gpt-4o-…` is priced as gpt-4o), half are made up.
        const model = index % 2 === 0 ? `gpt-4o-${index}` : `made-up-model-${index}`
        const response = await fetch(`${gateway.baseUrl}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'x-gateway-provider': '@primary', 'content-type': 'application/json' },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
        })
        expect(response.status).toBe(200)
        await response.arrayBuffer()
      }
    }
    await Promise.all(Array.from({ length: 16 }, worker))
    const families = await scrape()
    const models = new Set(allSamples(families).flatMap((sample) => [sample.labels.model, sample.labels.gen_ai_request_model, sample.labels.gen_ai_response_model]).filter((value) => value !== undefined))
    // The gateway here admits 50 model names (maxModelLabels); the rest read `other`.
    expect(models.size).toBeLessThanOrEqual(50 + 2)
    expect(models.has('other')).toBe(true)
    const after = allSamples(families).length
    // Each admitted model adds a fixed set of series (about 50: counters and histogram buckets), so the
    // growth is bounded by the cap, not by the traffic: uncapped, each of the 10,000 names would add its own.
    expect(after - before).toBeLessThan(total / 2)
  }, 300_000)
})
