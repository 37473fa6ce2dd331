/**
 * Gatehouse as the benchmark runs it: its own process, serving a snapshot file that holds one
 * workspace, one workspace key (real key format, stored as its peppered HMAC) and one OpenAI
 * provider pointing at the simulator. Authentication is on for every request.
 *
 *   node test/bench/gateway-process.ts --upstream http://127.0.0.1:PORT/v1
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
import { buildGatewayServer, RuntimeHolder, startTracing } from '@gatehouse/gateway'
import { generateApiKey, type GatewaySnapshotInput } from '@gatehouse/gateway/snapshot'
import { buildSnapshot, TEST_PEPPER, WORKSPACE_ID } from '../helpers/gateway.ts'

const BENCH_PROVIDER_SLUG = 'openai-bench'

const { values } = parseArgs({ options: { upstream: { type: 'string' } } })
if (!values.upstream) {
  process.stderr.write('usage: node test/bench/gateway-process.ts --upstream http://127.0.0.1:PORT/v1\n')
  process.exit(2)
}

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
const app = buildGatewayServer({ holder, pepper: TEST_PEPPER })
await app.listen({ host: '127.0.0.1', port: 0 })
const { port } = app.server.address() as AddressInfo
process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}`, workspaceKey, provider: BENCH_PROVIDER_SLUG, snapshotPath }) + '\n')

const stop = (): void => {
  void Promise.allSettled([app.close(), holder.close(), tracing?.shutdown()]).finally(() => {
    rmSync(snapshotDir, { recursive: true, force: true })
    process.exit(0)
  })
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
