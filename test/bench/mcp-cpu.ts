/**
 * CPU the MCP relay adds per request: the same JSON-RPC requests sent straight to a loopback
 * upstream, then through a Gatehouse server (authentication, usage record, the relay, tool checks),
 * all in one process, so the difference of process CPU per request is Gatehouse's share. Two
 * requests: `tools/call` answered with JSON (the common case) and `tools/list` answered as an event
 * stream (the list is filtered event by event). `node test/bench/mcp-cpu.ts` prints µs per request.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent, request } from 'undici'
import { buildGatewayServer, RuntimeHolder } from '../../gateway/src/index.ts'
import { generateApiKey, hashApiKey, SNAPSHOT_SCHEMA_VERSION } from '../../gateway/src/snapshot/index.ts'

const PEPPER = 'bench-pepper'
const tools = Array.from({ length: 20 }, (_, index) => ({ name: `tool_${index}`, description: 'A tool', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }))
const callAnswer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'hello' }] } })
const listAnswer = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 2, result: { tools } })}\n\n`

const upstream = createServer((req, res) => {
  let body = ''
  req.on('data', (chunk: Buffer) => (body += chunk.toString()))
  req.on('end', () => {
    if (body.includes('tools/list')) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(listAnswer)
    else res.writeHead(200, { 'content-type': 'application/json' }).end(callAnswer)
  })
})
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`

const key = generateApiKey('workspace')
const holder = new RuntimeHolder()
const applied = holder.apply({
  schemaVersion: SNAPSHOT_SCHEMA_VERSION, generation: 1, producedAt: new Date().toISOString(), producedBy: { component: 'bench', version: '0' },
  organizationId: 'org', workspaces: [{ id: 'ws', slug: 'ws', name: 'ws', status: 'active', logLevel: 'metadata' }],
  apiKeys: [{ id: 'key', hash: hashApiKey(key, PEPPER), type: 'workspace', subtype: 'service', workspaceId: 'ws', scopes: ['mcp.invoke'], status: 'active' }],
  providers: [],
  mcpServers: [{ id: 'm', slug: 'tools', name: 'Tools', workspaceId: 'ws', integrationId: 'i', url: upstreamUrl, network: 'private-allowed', auth: { type: 'headers', headers: { 'x-upstream-key': 'k' } }, tools: tools.slice(0, 10).map((tool) => tool.name).concat('echo') }],
})
if (!applied.ok) throw new Error(JSON.stringify(applied.problems))
const gateway = buildGatewayServer({ holder, pepper: PEPPER, usage: undefined, features: { account: (await import('../../gateway/src/pipeline/stages/account.ts')).accountStage({ sink: { offer: () => {} } }) } })
await gateway.listen({ host: '127.0.0.1', port: 0 })
const gatewayUrl = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}/v1/mcp/tools/mcp`

const client = new Agent({ connections: 16 })
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-api-key': key }
const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hello' } } })
const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })

async function measure(label: string, url: string, body: string): Promise<number> {
  const rounds = Number(process.env.ROUNDS ?? 20_000)
  const concurrency = 16
  const one = async (): Promise<void> => {
    const response = await request(url, { method: 'POST', headers, body, dispatcher: client })
    await response.body.text()
    if (response.statusCode !== 200) throw new Error(`${label}: HTTP ${response.statusCode}`)
  }
  const run = async (count: number): Promise<void> => {
    let left = count
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await one()
    }))
  }
  await run(Math.min(2_000, rounds))
  const start = process.cpuUsage()
  await run(rounds)
  const used = process.cpuUsage(start)
  const us = (used.user + used.system) / rounds
  console.log(`${label.padEnd(40)} ${us.toFixed(1)} µs CPU/request`)
  return us
}

const directCall = await measure('tools/call straight to the upstream', upstreamUrl, call)
const gatedCall = await measure('tools/call through Gatehouse', gatewayUrl, call)
const directList = await measure('tools/list (SSE) straight to the upstream', upstreamUrl, list)
const gatedList = await measure('tools/list (SSE) through Gatehouse', gatewayUrl, list)
console.log(`Gatehouse adds ${(gatedCall - directCall).toFixed(1)} µs CPU per tools/call and ${(gatedList - directList).toFixed(1)} µs per filtered tools/list`)
await gateway.close()
await holder.close()
await client.close()
upstream.close()
