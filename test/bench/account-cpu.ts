/**
 * CPU the account stage adds per request: the same JSON exchange through a pipeline with and
 * without the stage (a sink that keeps nothing, and the real shipper queue with serialisation
 * included, amortised), in one process. `node test/bench/account-cpu.ts` prints µs per request.
 */
import { ExchangeContext } from '../../gateway/src/pipeline/context.ts'
import { RuntimeHolder } from '../../gateway/src/runtime/holder.ts'
import { composePipeline, newFacts, type Exchange, type Operation } from '../../gateway/src/pipeline/stage.ts'
import { accountStage } from '../../gateway/src/pipeline/stages/account.ts'
import { UsageShipper } from '../../gateway/src/usage/shipper.ts'
import { SNAPSHOT_SCHEMA_VERSION } from '../../gateway/src/snapshot/schema.ts'

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
const provider = runtime.providers.get('id:p')!
const key = runtime.keysByHash.get('a'.repeat(64))!
const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }
const answer = { kind: 'json' as const, status: 200, body: { id: 'x', model: 'gpt-4o-mini', choices: [] }, usage: { inputTokens: 12, outputTokens: 30 } }

const principal = { kind: 'api_key' as const, id: key.record.id, workspaceId: 'ws', userId: null, scopes: [], defaultConfig: null, key, attributes: {} }
function exchange(): Exchange {
  const context = new ExchangeContext({ traceId: 't', spanId: null, parentSpanId: null, spanName: null }, runtime, new AbortController().signal, Date.now())
  context.authenticated(principal, { team: 'a' })
  return {
    operation: chat, context, headers: {}, url: '/v1/chat/completions', params: {}, rawBody: body, body, upload: null, relayStreams: true,
    route: null, facts: newFacts(), responseHeaders: {},
  }
}
const terminal = async (e: Exchange) => {
  e.facts.provider = provider
  e.facts.upstreamModel = 'gpt-4o-mini'
  return { ...answer }
}

async function measure(label: string, run: (e: Exchange) => Promise<unknown>, after?: () => Promise<void>): Promise<number> {
  const rounds = 200_000
  for (let i = 0; i < 20_000; i++) await run(exchange())
  const start = process.cpuUsage()
  for (let i = 0; i < rounds; i++) {
    await run(exchange())
    // A server yields to I/O between requests; the shipper's batch flush runs there.
    if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve))
  }
  await after?.()
  const used = process.cpuUsage(start)
  const us = (used.user + used.system) / rounds
  console.log(`${label.padEnd(44)} ${us.toFixed(2)} µs CPU/request`)
  return us
}

const bare = await measure('pipeline without account', composePipeline(chat, [], terminal).run)
const discard = await measure('with account, sink discards', composePipeline(chat, [accountStage({ sink: { offer: () => {} } })], terminal).run)
const shipper = new UsageShipper({ transport: async () => {}, batchSize: 1000 })
const shipped = await measure('with account, shipper (serialise + batch)', composePipeline(chat, [accountStage({ sink: shipper })], terminal).run, () => shipper.flush())
console.log(`account stage on the request path: ${(discard - bare).toFixed(2)} µs; with batch serialisation amortised: ${(shipped - bare).toFixed(2)} µs`)
