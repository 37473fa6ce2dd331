/**
 * Test helper: a deterministic generated data set of usage records (seeded PRNG), spread over a
 * time range across workspaces, keys, providers, models, configs, status codes, cache statuses
 * and metadata, with latencies from a heavy-tailed distribution so percentiles are meaningful.
 */
import type { UsageRecord } from '@gatehouse/gateway/snapshot'

function prng(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

const PROVIDERS = [
  { id: 'prov-openai', slug: 'openai', kind: 'openai', models: ['gpt-4o', 'gpt-4o-mini'] },
  { id: 'prov-claude', slug: 'claude', kind: 'anthropic', models: ['claude-3-5-sonnet-20241022', 'claude-3-5-haiku-20241022'] },
  { id: 'prov-gemini', slug: 'gemini', kind: 'google', models: ['gemini-2.0-flash'] },
] as const
const STATUSES = [200, 200, 200, 200, 200, 200, 200, 200, 400, 429, 500, 503] as const

export interface GeneratedOptions {
  count: number
  fromMs: number
  toMs: number
  organizationId: string
  workspaceIds: readonly string[]
  seed?: number
}

export function generateUsageRecords(options: GeneratedOptions): UsageRecord[] {
  const random = prng(options.seed ?? 42)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!
  const records: UsageRecord[] = []
  for (let index = 0; index < options.count; index++) {
    const provider = pick(PROVIDERS)
    const statusCode = pick(STATUSES)
    const ok = statusCode < 400
    const inputTokens = ok ? 10 + Math.floor(random() * 2000) : 0
    const outputTokens = ok ? Math.floor(random() * 800) : 0
    const atMs = options.fromMs + Math.floor(random() * (options.toMs - options.fromMs))
    const workspaceId = pick(options.workspaceIds)
    const cache = random()
    const hit = cache < 0.15
    // A hit costs nothing; what the answer would have cost is what it saved.
    const priced = ok ? Math.round(inputTokens * 2.5 + outputTokens * 10) / 1e6 : 0
    records.push({
      id: `gen-${options.seed ?? 42}-${index}`,
      createdAt: new Date(atMs).toISOString(),
      organizationId: options.organizationId,
      workspaceId,
      apiKeyId: `key-${workspaceId}-${Math.floor(random() * 3)}`,
      userId: random() < 0.7 ? `user-${Math.floor(random() * 20)}` : null,
      traceId: `trace-${index}`,
      spanId: null,
      parentSpanId: null,
      spanName: null,
      providerId: provider.id,
      providerSlug: provider.slug,
      providerKind: provider.kind,
      integrationId: null,
      configId: random() < 0.5 ? 'cfg-main' : null,
      deploymentId: null,
      promptId: random() < 0.2 ? 'prompt-1' : null,
      promptVersionId: null,
      mcpServerId: null,
      mcpToolName: null,
      agentServerId: null,
      agentMethod: null,
      route: 'chat',
      endpointType: 'chatComplete',
      modelRequested: pick(provider.models),
      modelServed: null,
      attempts: 1,
      retries: 0,
      targetPath: null,
      statusCode,
      errorCode: ok ? null : 'provider_error',
      cacheStatus: cache < 0.1 ? 'HIT' : cache < 0.15 ? 'SEMANTIC HIT' : cache < 0.6 ? 'MISS' : null,
      streamed: random() < 0.5,
      aborted: false,
      finishReason: ok ? 'stop' : null,
      inputTokens,
      outputTokens,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
      reasoningTokens: 0,
      audioInputTokens: 0,
      cachedAudioInputTokens: 0,
      audioOutputTokens: 0,
      audioSeconds: null,
      inputCharacters: 0,
      images: 0,
      imageInputTokens: 0,
      estimated: false,
      costUsd: hit ? 0 : priced,
      cacheSavedCostUsd: hit && ok ? priced : null,
      pricingVersion: 'gatehouse-2026-11-29.2',
      // Log-normal around ~400 ms with a long tail.
      latencyMs: Math.round(Math.exp(6 + 0.9 * Math.sqrt(-2 * Math.log(random() || 1e-9)) * Math.cos(2 * Math.PI * random())) * 10) / 10,
      ttftMs: null,
      metadata: { team: pick(['search', 'chat', 'ads']), ...(random() < 0.3 ? { env: 'prod' } : {}) },
      logLevel: 'metadata',
      requestBody: null,
      responseBody: null,
      bodiesDropped: false,
      annotations: {},
    })
  }
  return records
}
