/**
 * MCP end to end, in embedded Gatehouse: an MCP server built with the official SDK on loopback
 * (tools `echo` and `add`, requiring a header only Gatehouse knows) is registered as an MCP
 * integration, synced (server name, title, version, description, icons, protocol version, tools),
 * and served to a workspace as an MCP server. The official SDK client lists and calls its tools
 * through Gatehouse; a tool switched off is absent from the list and refused without reaching the
 * server; a key without `mcp.invoke` is refused; every call leaves one usage record naming the
 * server and the tool; a tool call is traced (the request's SERVER span, an `execute_tool` CLIENT
 * span under it whose id the server receives as its `traceparent` parent); a rate limit on MCP
 * requests refuses the call past it, as the SDK client surfaces it; and when the server goes away
 * the scheduled sync marks it failed.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Tracing } from '@gatehouse/gateway'
import { startTracingTo } from '../helpers/tracing.ts'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { startEmbedded, type EmbeddedGatehouse } from '../../operator/src/cli/embedded.ts'
import { openMigratedPglite } from '../../operator/src/store/testing.ts'
import { adminClient } from '../helpers/admin-client.ts'
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts'
import { pollUntil } from '../helpers/processes.ts'

const ADMIN_KEY = generateApiKey('admin')
const UPSTREAM_SECRET = 'upstream-secret-0123456789'
const SERVER_INFO = {
  name: 'loopback-tools',
  version: '1.2.3',
  title: 'Loopback Tools',
  description: 'Echo and add, for the MCP end-to-end test',
  icons: [{ src: 'https://example.com/tools.png', mimeType: 'image/png', sizes: ['48x48'] }],
}

/** Calls the loopback server received, by tool, and the credential each request carried. */
const toolCalls: Record<string, number> = { echo: 0, add: 0 }
const presentedCredentials = new Set<string>()
/** The `traceparent` each JSON-RPC method arrived with. */
const upstreamTraceparents: Array<{ method: unknown; traceparent: unknown }> = []

function loopbackServer(): McpServer {
  const server = new McpServer(SERVER_INFO)
  server.registerTool('echo', { title: 'Echo', description: 'Returns its text', inputSchema: { text: z.string() } }, ({ text }) => {
    toolCalls.echo!++
    return { content: [{ type: 'text', text }] }
  })
  server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => {
    toolCalls.add!++
    return { content: [{ type: 'text', text: String(a + b) }] }
  })
  return server
}

/** A stateless streamable HTTP MCP server that refuses requests without the upstream credential. */
async function startLoopbackMcp(): Promise<{ url: string; server: Server }> {
  const http = createServer((request: IncomingMessage, response: ServerResponse) => {
    const authorization = request.headers['x-upstream-key']
    presentedCredentials.add(String(request.headers.authorization ?? ''))
    if (authorization !== UPSTREAM_SECRET) {
      response.writeHead(401).end()
      return
    }
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body: unknown = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined
      upstreamTraceparents.push({ method: (body as { method?: unknown } | undefined)?.method, traceparent: request.headers.traceparent })
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
      const server = loopbackServer()
      response.on('close', () => {
        void transport.close()
        void server.close()
      })
      void server.connect(transport).then(() => transport.handleRequest(request, response, body))
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, server: http }
}

let gatehouse: EmbeddedGatehouse
let upstream: { url: string; server: Server }
const admin = adminClient(() => gatehouse.url, ADMIN_KEY)
let integrationId: string
let serverId: string
let invokeKey: string
let workspaceId: string
let receiver: OtlpReceiver
let tracing: Tracing | null

async function mcpClient(key: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'mcp-test-client', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gatehouse.url}/v1/mcp/tools/mcp`), { requestInit: { headers: { 'x-gateway-api-key': key, authorization: 'Bearer client-token-must-not-travel', ...headers } } }))
  return client
}

function servedTools(): string[] | undefined {
  return gatehouse.holder.current?.snapshot.mcpServers.find((server) => server.id === serverId)?.tools
}

beforeAll(async () => {
  upstream = await startLoopbackMcp()
  receiver = await startOtlpReceiver()
  // Started before Gatehouse, whose gateway composes its trace stage when tracing is on.
  tracing = await startTracingTo(receiver.url)
  gatehouse = await startEmbedded({
    host: '127.0.0.1',
    port: 0,
    dataDir: null,
    openDatabase: openMigratedPglite,
    resourceFiles: [],
    // A short schedule, so the "server went away" test sees the worker's own re-sync.
    env: { GATEHOUSE_ADMIN_API_KEY: ADMIN_KEY, GATEHOUSE_MCP_SYNC_INTERVAL_SECONDS: '1' },
    logger: pino({ level: 'silent' }),
  })
  const workspace = await admin('/v1/admin/workspaces', 'POST', { name: 'MCP team' })
  expect(workspace.status).toBe(200)
  workspaceId = workspace.body.id as string
  const key = await admin('/v1/api-keys/workspace/service', 'POST', { name: 'agent', workspace_id: workspaceId, scopes: ['mcp.invoke'] })
  expect(key.status).toBe(200)
  invokeKey = key.body.key as string
}, 120_000)

afterAll(async () => {
  await gatehouse?.close()
  await tracing?.shutdown()
  await receiver?.close()
  upstream?.server.closeAllConnections()
  await new Promise((resolve) => upstream?.server.close(resolve))
})

describe('MCP integrations and servers', () => {
  it('refuses bad integrations with a 400 naming the field, storing nothing', async () => {
    const missingHeaders = await admin('/v1/mcp-integrations', 'POST', { name: 'Bad', url: upstream.url, auth_type: 'headers', transport: 'http' })
    expect(missingHeaders.status).toBe(400)
    expect(missingHeaders.body).toMatchObject({ error: { param: 'configurations.custom_headers' } })
    const badUrl = await admin('/v1/mcp-integrations', 'POST', { name: 'Bad', url: 'ftp://example.com', auth_type: 'none', transport: 'http' })
    expect(badUrl.status).toBe(400)
    expect(badUrl.body).toMatchObject({ error: { param: 'url' } })
    const reserved = await admin('/v1/mcp-integrations', 'POST', { name: 'Bad', url: upstream.url, auth_type: 'headers', transport: 'http', configurations: { custom_headers: { 'Mcp-Session-Id': 'x' } } })
    expect(reserved.status).toBe(400)
    expect((await admin('/v1/mcp-integrations', 'GET')).body).toMatchObject({ total: 0, data: [] })
  })

  it('syncs a loopback SDK server: metadata, protocol version and tools, credentials never answered', async () => {
    const created = await admin('/v1/mcp-integrations', 'POST', {
      name: 'Loopback tools',
      url: upstream.url,
      auth_type: 'headers',
      transport: 'http',
      configurations: { custom_headers: { 'x-upstream-key': UPSTREAM_SECRET }, allow_private_network: true },
    })
    expect(created.status).toBe(200)
    integrationId = created.body.id as string
    const metadata = await admin(`/v1/mcp-integrations/${integrationId}/sync`, 'POST')
    expect(metadata.status).toBe(200)
    expect(metadata.body).toMatchObject({
      server_name: 'loopback-tools',
      server_version: '1.2.3',
      title: 'Loopback Tools',
      description: SERVER_INFO.description,
      icons: SERVER_INFO.icons,
      protocol_version: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      sync_status: 'success',
      sync_error: null,
    })
    const capabilities = await admin(`/v1/mcp-integrations/${integrationId}/capabilities?type=tool`, 'GET')
    expect(capabilities.body).toMatchObject({ total: 2, has_more: false, counts: { tools: { total: 2, enabled: 2 } } })
    expect((capabilities.body.data as Array<{ name: string }>).map((tool) => tool.name).sort()).toEqual(['add', 'echo'])
    const listed = await admin('/v1/mcp-integrations', 'GET')
    expect(listed.body).toMatchObject({ total: 1, has_more: false, data: [{ slug: 'loopback-tools', server_name: 'loopback-tools', server_version: '1.2.3', title: 'Loopback Tools', sync_status: 'success' }] })
    expect(JSON.stringify(listed.body)).not.toContain(UPSTREAM_SECRET)
    expect(JSON.stringify((await admin(`/v1/mcp-integrations/${integrationId}`, 'GET')).body)).not.toContain(UPSTREAM_SECRET)
  })

  it('serves the server to the official SDK client: lists and calls echo and add with Gatehouse\'s credential', async () => {
    const server = await admin('/v1/mcp-servers', 'POST', { name: 'Tools', slug: 'tools', mcp_integration_id: integrationId, workspace_id: workspaceId })
    expect(server.status).toBe(200)
    serverId = server.body.id as string
    expect((await admin(`/v1/mcp-servers/${serverId}`, 'GET')).body).toMatchObject({ url: '/v1/mcp/tools/mcp', server_name: 'loopback-tools', sync_status: 'success' })
    await pollUntil(async () => servedTools()?.length === 2, 10_000, 20)

    const client = await mcpClient(invokeKey)
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'loopback-tools', version: '1.2.3' })
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual(['add', 'echo'])
      expect(await client.callTool({ name: 'echo', arguments: { text: 'through the gate' } })).toMatchObject({ content: [{ type: 'text', text: 'through the gate' }] })
      expect(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })).toMatchObject({ content: [{ type: 'text', text: '5' }] })
    } finally {
      await client.close()
    }
    expect(toolCalls).toEqual({ echo: 1, add: 1 })
    // The client's own bearer token stays at Gatehouse (MCP: a server must not pass tokens through).
    expect([...presentedCredentials].some((value) => value.includes('client-token-must-not-travel'))).toBe(false)
  })

  it('writes one usage record per tool call, naming the server and the tool', async () => {
    let records: Array<Record<string, unknown>> = []
    await pollUntil(async () => {
      records = ((await admin('/v1/logs?page_size=100', 'GET')).body.data as Array<Record<string, unknown>>).filter((record) => record.route === 'mcp' && record.mcp_tool_name !== null)
      return records.length >= 2
    }, 15_000, 100)
    expect(records.map((record) => record.mcp_tool_name).sort()).toEqual(['add', 'echo'])
    for (const record of records) expect(record).toMatchObject({ mcp_server_id: serverId, endpoint_type: 'mcp', status_code: 200, workspace_id: workspaceId })
  })

  it('traces a tool call: the SERVER span, an execute_tool CLIENT span under it, and that span as the server\'s traceparent parent', async () => {
    // The caller's own trace: every request of this client hangs under it, so its spans are found by it.
    const traceId = randomBytes(16).toString('hex')
    const callerSpanId = randomBytes(8).toString('hex')
    const client = await mcpClient(invokeKey, { traceparent: `00-${traceId}-${callerSpanId}-01` })
    try {
      await client.callTool({ name: 'echo', arguments: { text: 'traced' } })
    } finally {
      await client.close()
    }
    await tracing!.forceFlush()
    const spans = (await receiver.waitFor((all) => all.some((span) => span.traceId === traceId && span.name === 'execute_tool echo'))).filter((span) => span.traceId === traceId)
    const call = spans.find((span) => span.name === 'execute_tool echo')!
    const request = spans.find((span) => span.spanId === call.parentSpanId)
    expect(request).toMatchObject({ kind: SPAN_KIND.server, parentSpanId: callerSpanId })
    expect(request!.attributes).toMatchObject({
      'gatehouse.route': 'mcp',
      'gatehouse.workspace.id': workspaceId,
      'gatehouse.mcp.server.id': serverId,
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'http.response.status_code': 200,
    })
    expect(call.kind).toBe(SPAN_KIND.client)
    expect(call.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
      'mcp.method.name': 'tools/call',
      'gatehouse.mcp.server.id': serverId,
      'gatehouse.mcp.server.slug': 'tools',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(upstream.url).port),
      'http.response.status_code': 200,
    })
    // initialize is a CLIENT span too, named by its method and calling no tool.
    const initialize = spans.find((span) => span.kind === SPAN_KIND.client && span.name === 'initialize')
    expect(initialize?.attributes).toMatchObject({ 'mcp.method.name': 'initialize' })
    expect(initialize?.attributes['gen_ai.operation.name']).toBeUndefined()
    // Break tried: calling the relay outside the span's context (`call()` for `context.with(active, call)`
    // in attempt-span.ts) sent the SERVER span's id upstream, and this failed.
    expect(upstreamTraceparents.findLast((sent) => sent.method === 'tools/call')?.traceparent).toBe(`00-${traceId}-${call.spanId}-01`)
    expect(receiver.bodies.join('\n')).not.toContain(UPSTREAM_SECRET)
  })

  it('refuses the tools/call past a rate limit on MCP requests, as the SDK client surfaces a 429', async () => {
    const key = await admin('/v1/api-keys/workspace/service', 'POST', { name: 'limited agent', workspace_id: workspaceId, scopes: ['mcp.invoke'] })
    const client = await mcpClient(key.body.key as string)
    try {
      // Limited after connecting, so the window holds tool calls only.
      const policy = await admin('/v1/policies/rate-limits', 'POST', {
        name: 'Three MCP calls a minute',
        conditions: [{ key: 'endpoint_type', value: 'mcp' }, { key: 'api_key', value: key.body.id }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 3,
      })
      expect(policy.status).toBe(200)
      await pollUntil(async () => gatehouse.holder.current?.snapshot.limits.some((limit) => limit.id.includes(policy.body.id as string)) === true, 10_000, 20)
      const before = toolCalls.echo!
      for (let call = 1; call <= 3; call++) expect(await client.callTool({ name: 'echo', arguments: { text: `call ${call}` } })).toMatchObject({ content: [{ text: `call ${call}` }] })
      // The SDK's transport throws on a non-2xx POST with the status as `code` and Gatehouse's error body in the message.
      await expect(client.callTool({ name: 'echo', arguments: { text: 'one too many' } })).rejects.toMatchObject({ code: 429, message: expect.stringContaining('rate_limited') })
      expect(toolCalls.echo).toBe(before + 3)
    } finally {
      await client.close()
    }
    // Other keys are not under it.
    const other = await mcpClient(invokeKey)
    try {
      expect(await other.callTool({ name: 'echo', arguments: { text: 'unlimited' } })).toMatchObject({ content: [{ text: 'unlimited' }] })
    } finally {
      await other.close()
    }
  })

  it('refuses a tool switched off on the server: absent from the list, never reaching the server', async () => {
    const switched = await admin(`/v1/mcp-servers/${serverId}/capabilities`, 'PUT', { capabilities: [{ name: 'add', type: 'tool', enabled: false }] })
    expect(switched.body).toEqual({ success: true })
    const unknown = await admin(`/v1/mcp-servers/${serverId}/capabilities`, 'PUT', { capabilities: [{ name: 'nope', type: 'tool', enabled: false }] })
    expect(unknown.status).toBe(400)
    expect((await admin(`/v1/mcp-servers/${serverId}/capabilities`, 'GET')).body).toMatchObject({ counts: { tools: { total: 2, enabled: 1 } } })
    await pollUntil(async () => servedTools()?.length === 1, 10_000, 20)

    const before = { ...toolCalls }
    const client = await mcpClient(invokeKey)
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo'])
      await expect(client.callTool({ name: 'add', arguments: { a: 1, b: 1 } })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('add') })
      expect(await client.callTool({ name: 'echo', arguments: { text: 'still here' } })).toMatchObject({ content: [{ text: 'still here' }] })
    } finally {
      await client.close()
    }
    expect(toolCalls).toEqual({ echo: before.echo! + 1, add: before.add })
  })

  it('refuses a user the server denies, and a key without mcp.invoke', async () => {
    const noScope = await admin('/v1/api-keys/workspace/service', 'POST', { name: 'chat only', workspace_id: workspaceId, scopes: ['completions.write'] })
    await expect(mcpClient(noScope.body.key as string)).rejects.toThrow(/403|insufficient_scope|mcp\.invoke/)
    const denied = await fetch(`${gatehouse.url}/v1/mcp/tools/mcp`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': noScope.body.key as string, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(denied.status).toBe(403)
    expect(await denied.json()).toMatchObject({ error: { code: 'insufficient_scope' } })

    await admin(`/v1/mcp-servers/${serverId}/user-access`, 'PUT', { default_user_access: 'deny' })
    await pollUntil(async () => gatehouse.holder.current?.snapshot.mcpServers.find((server) => server.id === serverId)?.defaultUserAccess === 'deny', 10_000, 20)
    await expect(mcpClient(invokeKey)).rejects.toThrow(/403|forbidden|may not use/)
    await admin(`/v1/mcp-servers/${serverId}/user-access`, 'PUT', { default_user_access: 'allow' })
  })

  it('answers 404 for a server of no such name in the caller\'s workspace', async () => {
    const response = await fetch(`${gatehouse.url}/v1/mcp/nope/mcp`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': invokeKey, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(response.status).toBe(404)
  })

  it('marks the sync failed when the server goes away (the scheduled re-sync)', async () => {
    upstream.server.closeAllConnections()
    await new Promise((resolve) => upstream.server.close(resolve))
    let metadata: Record<string, unknown> = {}
    await pollUntil(async () => {
      metadata = (await admin(`/v1/mcp-integrations/${integrationId}/metadata`, 'GET')).body
      return metadata.sync_status === 'failed'
    }, 20_000, 200)
    expect(metadata).toMatchObject({ sync_status: 'failed', sync_error: expect.any(String), server_name: 'loopback-tools' })
    expect(String(metadata.sync_error)).not.toContain(UPSTREAM_SECRET)
    const test = await admin(`/v1/mcp-servers/${serverId}/test`, 'POST')
    expect(test.body).toMatchObject({ success: false, url: upstream.url })
  })
})
