/**
 * Gatehouse as the benchmark runs it: its own process, serving a snapshot file that holds one
 * workspace, one workspace key (real key format, stored as its peppered HMAC) and one OpenAI
 * provider pointing at the simulator. Authentication is on for every request.
 *
 *   node test/bench/gateway-process.ts --upstream http://127.0.0.1:PORT/v1 [--features limits,guardrails,metering] [--usage-flush-ms 1000]
 *
 * `--features` adds request-path features to the plain gateway, as the feature scenario of run.ts
 * measures them one at a time (feature-scenario.ts):
 *   limits      three limits on every request, counted in Redis (GATEHOUSE_REDIS_URL, under
 *               GATEHOUSE_LIMITS_KEY_PREFIX): a key's request rate, the workspace's token rate and a
 *               token budget grouped by the `team` metadata value (send `x-gateway-metadata`);
 *   guardrails  two inline checks: words refused in the input, a word count of the output;
 *   metering    a usage record per request, shipped in batches over HTTP to GATEHOUSE_USAGE_SINK_URL
 *               (the control plane's ingest route, here a loopback sink), as a deployed gateway does.
 *
 * Prints one JSON line `{"url","workspaceKey","provider","snapshotPath"}` once listening on
 * 127.0.0.1 (ephemeral port); stops on SIGTERM/SIGINT, removing the snapshot file. Exiting through
 * `process.exit` also lets `node --cpu-prof` write its profile. With OTEL_EXPORTER_OTLP_ENDPOINT
 * set it traces (telemetry/tracing.ts), as the tracing scenario of run.ts asks.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { GatewayServerOptions } from '@gatehouse/gateway'
import type { GatewaySnapshotInput } from '@gatehouse/gateway/snapshot'
import { holdTickObjectShape } from '@gatehouse/gateway/tick-shape'

// As the gatehouse command does (operator/bin/gatehouse.js): before the gateway's modules load.
holdTickObjectShape()
const { buildGatewayServer, httpUsageTransport, limiterFromEnv, limitsStage, RuntimeHolder, startTracing, startUsageShipping } = await import('@gatehouse/gateway')
const { generateApiKey } = await import('@gatehouse/gateway/snapshot')
const { buildSnapshot, TEST_PEPPER, WORKSPACE_ID } = await import('../helpers/gateway.ts')

const BENCH_PROVIDER_SLUG = 'openai-bench'

const FEATURES = ['limits', 'guardrails', 'metering'] as const
type Feature = (typeof FEATURES)[number]

const { values } = parseArgs({ options: { upstream: { type: 'string' }, features: { type: 'string', default: '' }, 'usage-flush-ms': { type: 'string' } } })
const features = new Set(values.features!.split(',').map((name) => name.trim()).filter((name) => name !== ''))
const unknown = [...features].filter((name) => !(FEATURES as readonly string[]).includes(name))
if (!values.upstream || unknown.length > 0) {
  process.stderr.write(`usage: node test/bench/gateway-process.ts --upstream http://127.0.0.1:PORT/v1 [--features ${FEATURES.join(',')}]\n`)
  process.exit(2)
}
const has = (feature: Feature): boolean => features.has(feature)

const workspaceKey = generateApiKey('workspace')
const snapshot = buildSnapshot([{ slug: BENCH_PROVIDER_SLUG, kind: 'openai', baseUrl: values.upstream, credentials: { apiKey: 'sk-bench-upstream' } }], {
  workspaceKey,
  adminKey: generateApiKey('admin'),
})
// The cache-sat scenario runs under this saved config (in-process cache, the embedded default).
snapshot.configs = [{ id: 'cfg-bench-cached', slug: 'bench-cached', workspaceId: null, config: { provider: `@${BENCH_PROVIDER_SLUG}`, cache: { mode: 'simple', max_age: 600 } } }]
// The prompt-sat scenario renders this saved prompt; it renders to the body the other scenarios send.
snapshot.prompts = [{
  id: 'prompt-bench', slug: 'bench-prompt', name: 'Bench', workspaceId: WORKSPACE_ID, virtualKey: BENCH_PROVIDER_SLUG, defaultVersionId: 'prompt-bench-v1',
  versions: [{
    id: 'prompt-bench-v1', version: 1, model: 'gpt-4o-mini', parameters: { max_tokens: 64 },
    template: JSON.stringify([
      { role: 'system', content: 'You are a concise assistant that answers benchmark questions.' },
      { role: 'user', content: 'Write one short sentence about {{subject}}.' },
    ]),
  }],
}]
if (has('limits')) {
  snapshot.limits = [
    { id: 'bench-rpm', source: 'api_key', ownerId: 'key-ws', name: 'key rpm', kind: 'rate', type: 'requests', unit: 'rpm', value: 1_000_000_000, conditions: [{ key: 'api_key', values: ['key-ws'] }] },
    { id: 'bench-tpm', source: 'workspace', ownerId: WORKSPACE_ID, name: 'workspace tpm', kind: 'rate', type: 'tokens', unit: 'rpm', value: 1_000_000_000_000, conditions: [{ key: 'workspace_id', values: [WORKSPACE_ID] }] },
    { id: 'bench-budget', source: 'policy', ownerId: 'bench-budget', name: 'team budget', kind: 'usage', type: 'tokens', creditLimit: 1_000_000_000_000, conditions: [{ key: 'metadata.team', values: ['*'] }], groupBy: ['metadata.team'] },
  ]
}
if (has('guardrails')) {
  snapshot.guardrails = [
    { id: 'bench-in', slug: 'bench-in', name: 'no secrets', workspaceId: null, version: 1, hooks: ['beforeRequestHook'], actions: { deny: true }, holdBack: { mode: 'none', windowChars: 256 },
      checks: [{ id: 'default.contains', parameters: { words: ['password', 'secret'], operator: 'none' }, isEnabled: true }] },
    { id: 'bench-out', slug: 'bench-out', name: 'short', workspaceId: null, version: 1, hooks: ['afterRequestHook'], actions: { deny: false }, holdBack: { mode: 'none', windowChars: 256 },
      checks: [{ id: 'default.wordCount', parameters: { maxWords: 500 }, isEnabled: true }] },
  ]
  snapshot.guardrailDefaults = [{ workspaceId: null, input: ['bench-in'], output: ['bench-out'] }]
}
// Served from a file, as a deployed gateway is: the file round trip is part of what is measured.
const snapshotDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'))
const snapshotPath = join(snapshotDir, 'snapshot.json')
writeFileSync(snapshotPath, JSON.stringify(snapshot), { mode: 0o600 })

const holder = new RuntimeHolder()
const applied = holder.apply(JSON.parse(readFileSync(snapshotPath, 'utf8')) as GatewaySnapshotInput)
if (!applied.ok) {
  process.stderr.write(`bench snapshot rejected: ${JSON.stringify(applied.problems)}\n`)
  process.exit(1)
}

// The tracing scenario starts this process with OTEL_* set (an OTLP sink, a sampler); others without.
const tracing = await startTracing({ serviceName: 'gatehouse-bench' })
const extra: Partial<GatewayServerOptions> = {}
const closers: Array<() => Promise<void>> = []
if (has('limits')) {
  if (!process.env.GATEHOUSE_REDIS_URL) throw new Error('--features limits needs GATEHOUSE_REDIS_URL')
  const limits = limiterFromEnv(process.env)
  const stage = limitsStage({ limiter: limits.limiter, keyPrefix: limits.keyPrefix })
  extra.features = { limits: stage }
  extra.metricsRegistries = [stage.registry]
  closers.push(() => limits.limiter.close())
}
if (has('metering')) {
  const sinkUrl = process.env.GATEHOUSE_USAGE_SINK_URL
  if (!sinkUrl) throw new Error('--features metering needs GATEHOUSE_USAGE_SINK_URL')
  const delivery = httpUsageTransport({ controlPlaneUrl: sinkUrl, token: 'bench-gateway-token' })
  // instructions.ts runs this process 50 times slower: a longer interval keeps its batches full, as under load.
  const flushIntervalMs = values['usage-flush-ms'] === undefined ? {} : { flushIntervalMs: Number(values['usage-flush-ms']) }
  const shipper = startUsageShipping({ transport: delivery.transport, spoolDir: null, ...flushIntervalMs })
  extra.usage = shipper
  closers.push(() => shipper.close(), () => delivery.close())
}
const app = buildGatewayServer({ holder, pepper: TEST_PEPPER, ...extra })
await app.listen({ host: '127.0.0.1', port: 0 })
const { port } = app.server.address() as AddressInfo
process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}`, workspaceKey, provider: BENCH_PROVIDER_SLUG, snapshotPath }) + '\n')

const stop = (): void => {
  void Promise.allSettled([app.close(), holder.close(), tracing?.shutdown(), ...closers.map((close) => close())]).finally(() => {
    rmSync(snapshotDir, { recursive: true, force: true })
    process.exit(0)
  })
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
