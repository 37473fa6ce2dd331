/**
 * Agents (A2A) end to end, in embedded Gatehouse: an agent built with the official `@a2a-js/sdk`
 * server (express, JSON-RPC, A2A 1.0 with the 0.3 compatibility layer) on loopback, requiring a
 * header only Gatehouse knows, is registered as an agent integration, synced, and served to a
 * workspace as an agent server. The official SDK clients, pointed at Gatehouse's card URL with a
 * Gatehouse key, send and stream messages through Gatehouse in both bindings (1.0 `SendMessage`,
 * 0.3 `message/send`); the card they read names Gatehouse and only the enabled skills; a key
 * without `agents.invoke` and a denied user are refused; methods Gatehouse does not carry never
 * reach the agent; every call leaves one usage record naming the agent server and the method; a
 * message is traced (the SERVER span, an `invoke_agent` CLIENT span under it whose id the agent
 * receives as its `traceparent` parent); and a rate limit on A2A calls refuses the call past it.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server'
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express'
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client'
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client'
import { Role, TaskState, type AgentCard, type SendMessageRequest, type StreamResponse } from '@a2a-js/sdk'
import express from 'express'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Tracing } from '@gatehouse/gateway'
import { startTracingTo } from '../helpers/tracing.ts'
import { generateApiKey } from '@gatehouse/gateway/snapshot'
import { startEmbedded, type EmbeddedGatehouse } from '../../operator/src/cli/embedded.ts'
import { openMigratedPglite } from '../../operator/src/store/testing.ts'
import { adminClient } from '../helpers/admin-client.ts'
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts'
import { pollUntil } from '../helpers/processes.ts'

const ADMIN_KEY = generateApiKey('admin')
const UPSTREAM_SECRET = 'agent-upstream-secret-0123456789'

/** What the loopback agent received: JSON-RPC methods, and every credential presented to it. */
const upstreamMethods: string[] = []
const presentedCredentials = new Set<string>()
/** The `traceparent` each JSON-RPC method arrived with. */
const upstreamTraceparents: Array<{ method: string; traceparent: unknown }> = []

/** Echoes the user's text as a task: submitted, an artifact with the text, completed. */
class EchoExecutor implements AgentExecutor {
  execute(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = request
    const text = userMessage.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('')
    const status = (state: TaskState): { state: TaskState; timestamp: string; message: undefined } => ({ state, timestamp: new Date().toISOString(), message: undefined })
    if (!request.task) bus.publish(AgentEvent.task({ id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [userMessage], metadata: undefined }))
    bus.publish(AgentEvent.artifactUpdate({
      taskId,
      contextId,
      artifact: { artifactId: randomUUID(), name: 'echo', description: '', parts: [{ content: { $case: 'text', value: `echo: ${text}` }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [] },
      append: false,
      lastChunk: true,
      metadata: undefined,
    }))
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED), metadata: undefined }))
    return Promise.resolve()
  }

  cancelTask(): Promise<void> {
    return Promise.resolve()
  }
}

function agentCard(port: number): AgentCard {
  return {
    name: 'Echo agent',
    description: 'Echoes what it is told, for the agents end-to-end test',
    // The same JSON-RPC endpoint in both versions (the SDK's 0.3 compatibility layer needs the 0.3 entry declared).
    supportedInterfaces: ['1.0', '0.3'].map((protocolVersion) => ({ url: `http://127.0.0.1:${port}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion })),
    provider: { organization: 'Gatehouse tests', url: 'https://example.com/agents' },
    version: '3.1.4',
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [
      { id: 'echo', name: 'Echo', description: 'Says it back', tags: ['test'], examples: ['hello'], inputModes: ['text'], outputModes: ['text'], securityRequirements: [] },
      { id: 'shout', name: 'Shout', description: 'Says it back louder', tags: ['test'], examples: [], inputModes: ['text'], outputModes: ['text'], securityRequirements: [] },
    ],
    documentationUrl: '',
    signatures: [],
  }
}

async function startLoopbackAgent(): Promise<{ url: string; server: Server }> {
  const app = express()
  const http = createServer(app)
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const port = (http.address() as AddressInfo).port
  const handler = new DefaultRequestHandler(agentCard(port), new InMemoryTaskStore(), new EchoExecutor())
  app.use((request, response, next) => {
    presentedCredentials.add(String(request.headers.authorization ?? ''))
    presentedCredentials.add(String(request.headers['x-gateway-api-key'] ?? ''))
    if (request.headers['x-agent-key'] !== UPSTREAM_SECRET) {
      response.status(401).end()
      return
    }
    next()
  })
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler, legacyCompat: { enabled: true } }))
  app.use('/a2a/jsonrpc', express.json(), (request, _response, next) => {
    upstreamMethods.push(String((request.body as { method?: unknown }).method))
    upstreamTraceparents.push({ method: upstreamMethods.at(-1)!, traceparent: request.headers.traceparent })
    next()
  }, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }))
  return { url: `http://127.0.0.1:${port}`, server: http }
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

/** A fetch that presents a Gatehouse key (and a client token that must stay at Gatehouse), and any `extra` headers. */
function keyedFetch(key: string, extra: Record<string, string> = {}): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set('x-gateway-api-key', key)
    headers.set('authorization', 'Bearer client-token-must-not-travel')
    for (const [name, value] of Object.entries(extra)) headers.set(name, value)
    return fetch(input, { ...init, headers })
  }
}

/** The official 1.0 client, built from the card at Gatehouse's URL. */
async function a2aClient(key: string, extra: Record<string, string> = {}): ReturnType<ClientFactory['createFromUrl']> {
  const fetchImpl = keyedFetch(key, extra)
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
  }))
  // A trailing slash: the card path resolves below the agent's URL, as for any agent under a path.
  return factory.createFromUrl(`${gatehouse.url}/v1/agents/echo/`)
}

function userMessage(text: string): SendMessageRequest {
  return {
    tenant: '',
    metadata: {},
    configuration: undefined,
    message: {
      messageId: randomUUID(), role: Role.ROLE_USER, taskId: '', contextId: '', extensions: [], metadata: {}, referenceTaskIds: [],
      parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    },
  }
}

function artifactText(events: StreamResponse[]): string[] {
  return events.flatMap((event) => (event.payload?.$case === 'artifactUpdate' ? (event.payload.value.artifact?.parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')) : []))
}

function servedAgent(): { status: string; skills: string[]; defaultUserAccess: string } | undefined {
  return gatehouse.holder.current?.snapshot.agentServers.find((server) => server.id === serverId)
}

beforeAll(async () => {
  upstream = await startLoopbackAgent()
  receiver = await startOtlpReceiver()
  // Started before Gatehouse, whose gateway composes its trace stage when tracing is on.
  tracing = await startTracingTo(receiver.url)
  gatehouse = await startEmbedded({
    host: '127.0.0.1',
    port: 0,
    dataDir: null,
    openDatabase: openMigratedPglite,
    resourceFiles: [],
    env: { GATEHOUSE_ADMIN_API_KEY: ADMIN_KEY },
    logger: pino({ level: 'silent' }),
  })
  const workspace = await admin('/v1/admin/workspaces', 'POST', { name: 'Agents team' })
  expect(workspace.status).toBe(200)
  workspaceId = workspace.body.id as string
  const key = await admin('/v1/api-keys/workspace/service', 'POST', { name: 'caller', workspace_id: workspaceId, scopes: ['agents.invoke'] })
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

describe('agents through Gatehouse', () => {
  it('syncs the agent and answers the agent server with its Gatehouse URL', async () => {
    const created = await admin('/v1/agent-integrations', 'POST', {
      name: 'Echo', url: upstream.url, auth_type: 'headers', configurations: { custom_headers: { 'x-agent-key': UPSTREAM_SECRET }, allow_private_network: true },
    })
    expect(created.status).toBe(200)
    integrationId = created.body.id as string
    const synced = await admin(`/v1/agent-integrations/${integrationId}/sync`, 'POST')
    expect(synced.body, String(synced.body.sync_error)).toMatchObject({ server_name: 'Echo agent', server_version: '3.1.4', sync_status: 'success' })
    const server = await admin('/v1/agent-servers', 'POST', { name: 'Echo', slug: 'echo', agent_integration_id: integrationId, workspace_id: workspaceId })
    expect(server.status).toBe(200)
    serverId = server.body.id as string
    expect((await admin(`/v1/agent-servers/${serverId}`, 'GET')).body).toMatchObject({ url: '/v1/agents/echo', sync_status: 'success' })
    await pollUntil(async () => servedAgent()?.status === 'active', 10_000, 20)
    expect(servedAgent()?.skills.sort()).toEqual(['echo', 'shout'])
  })

  it('serves the card with Gatehouse as its only interface; the 1.0 client sends and streams through it', async () => {
    const client = await a2aClient(invokeKey)
    const card = await client.getAgentCard()
    expect(card.supportedInterfaces.map((entry) => `${entry.protocolVersion} ${entry.url}`)).toEqual(['1.0', '0.3'].map((version) => `${version} ${gatehouse.url}/v1/agents/echo`))
    expect(card.capabilities?.pushNotifications).toBe(false)

    const sent = await client.sendMessage(userMessage('through the gate'))
    expect(sent).toMatchObject({ status: { state: TaskState.TASK_STATE_COMPLETED } })
    const task = sent as { id: string; artifacts: Array<{ parts: Array<{ content?: { value?: unknown } }> }> }
    expect(task.artifacts[0]?.parts[0]?.content?.value).toBe('echo: through the gate')
    expect(await client.getTask({ tenant: '', id: task.id })).toMatchObject({ id: task.id, status: { state: TaskState.TASK_STATE_COMPLETED } })

    const events: StreamResponse[] = []
    for await (const event of client.sendMessageStream(userMessage('streamed'))) events.push(event)
    expect(artifactText(events)).toEqual(['echo: streamed'])
    expect(events.at(-1)?.payload).toMatchObject({ $case: 'statusUpdate', value: { status: { state: TaskState.TASK_STATE_COMPLETED } } })

    expect(upstreamMethods).toEqual(['SendMessage', 'GetTask', 'SendStreamingMessage'])
    // Gatehouse presented its own credential; neither the client's token nor its Gatehouse key travelled.
    expect([...presentedCredentials].some((value) => value.includes('client-token-must-not-travel') || value === invokeKey)).toBe(false)
  })

  it('relays the A2A 0.3 binding too: message/send, message/stream and tasks/get from the 0.3 client', async () => {
    const card = (await (await keyedFetch(invokeKey)(`${gatehouse.url}/v1/agents/echo/.well-known/agent-card.json`)).json()) as { url?: string }
    expect(card.url).toBe(`${gatehouse.url}/v1/agents/echo`)
    const legacy = new LegacyJsonRpcTransport({ endpoint: card.url!, fetchImpl: keyedFetch(invokeKey) })
    const before = upstreamMethods.length
    const sent = await legacy.sendMessage(userMessage('old binding'))
    expect(sent).toMatchObject({ status: { state: TaskState.TASK_STATE_COMPLETED } })
    const events: StreamResponse[] = []
    for await (const event of legacy.sendMessageStream(userMessage('old stream'))) events.push(event)
    expect(artifactText(events)).toEqual(['echo: old stream'])
    await legacy.getTask({ tenant: '', id: (sent as { id: string }).id })
    expect(upstreamMethods.slice(before)).toEqual(['message/send', 'message/stream', 'tasks/get'])
  })

  it('shows only the enabled skills in the card', async () => {
    const switched = await admin(`/v1/agent-servers/${serverId}/skills`, 'PUT', { capabilities: [{ name: 'shout', type: 'skill', enabled: false }] })
    expect(switched.status).toBe(200)
    await pollUntil(async () => servedAgent()?.skills.length === 1, 10_000, 20)
    const card = await (await a2aClient(invokeKey)).getAgentCard()
    expect(card.skills.map((skill) => skill.id)).toEqual(['echo'])
  })

  it('refuses methods Gatehouse does not carry without reaching the agent', async () => {
    const before = upstreamMethods.length
    const response = await keyedFetch(invokeKey)(`${gatehouse.url}/v1/agents/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/pushNotificationConfig/set', params: { taskId: 't', pushNotificationConfig: { url: 'http://127.0.0.1:9/hook' } } }),
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32601, message: expect.stringContaining('tasks/pushNotificationConfig/set') } })
    expect(upstreamMethods.length).toBe(before)
  })

  it('refuses a key without agents.invoke and a user the server denies, on the card and on calls', async () => {
    const noScope = await admin('/v1/api-keys/workspace/service', 'POST', { name: 'chat only', workspace_id: workspaceId, scopes: ['completions.write'] })
    const chatKey = noScope.body.key as string
    await expect(a2aClient(chatKey)).rejects.toThrow(/403/)
    const call = await keyedFetch(chatKey)(`${gatehouse.url}/v1/agents/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }) })
    expect(call.status).toBe(403)
    expect(await call.json()).toMatchObject({ error: { code: 'insufficient_scope', message: expect.stringContaining('agents.invoke') } })

    const before = upstreamMethods.length
    await admin(`/v1/agent-servers/${serverId}/user-access`, 'PUT', { default_user_access: 'deny' })
    await pollUntil(async () => servedAgent()?.defaultUserAccess === 'deny', 10_000, 20)
    await expect(a2aClient(invokeKey)).rejects.toThrow(/403/)
    const denied = await keyedFetch(invokeKey)(`${gatehouse.url}/v1/agents/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }) })
    expect(denied.status).toBe(403)
    expect(await denied.json()).toMatchObject({ error: { code: 'forbidden' } })
    expect(upstreamMethods.length).toBe(before)
    await admin(`/v1/agent-servers/${serverId}/user-access`, 'PUT', { default_user_access: 'allow' })
  })

  it('writes one usage record per JSON-RPC call, naming the agent server and the method (card reads are not calls)', async () => {
    const calls = ['SendMessage', 'GetTask', 'SendStreamingMessage', 'message/send', 'message/stream', 'tasks/get', 'tasks/pushNotificationConfig/set']
    let records: Array<Record<string, unknown>> = []
    await pollUntil(async () => {
      records = ((await admin('/v1/logs?page_size=100', 'GET')).body.data as Array<Record<string, unknown>>).filter((record) => record.route === 'agents' && record.status_code === 200)
      return records.length >= calls.length
    }, 15_000, 100)
    expect(records.map((record) => record.agent_method).sort()).toEqual([...calls].sort())
    for (const record of records) expect(record).toMatchObject({ agent_server_id: serverId, endpoint_type: 'a2a', workspace_id: workspaceId })
    expect(records.find((record) => record.agent_method === 'tasks/pushNotificationConfig/set')).toMatchObject({ error_code: 'a2a_method_refused' })
  })

  it('traces a message: the SERVER span, an invoke_agent CLIENT span under it, and that span as the agent\'s traceparent parent', async () => {
    const traceId = randomBytes(16).toString('hex')
    const callerSpanId = randomBytes(8).toString('hex')
    const client = await a2aClient(invokeKey, { traceparent: `00-${traceId}-${callerSpanId}-01` })
    expect(await client.sendMessage(userMessage('traced'))).toMatchObject({ status: { state: TaskState.TASK_STATE_COMPLETED } })
    await tracing!.forceFlush()
    const spans = (await receiver.waitFor((all) => all.some((span) => span.traceId === traceId && span.kind === SPAN_KIND.client))).filter((span) => span.traceId === traceId)
    const call = spans.find((span) => span.kind === SPAN_KIND.client)!
    const request = spans.find((span) => span.spanId === call.parentSpanId)
    expect(request).toMatchObject({ kind: SPAN_KIND.server, parentSpanId: callerSpanId })
    expect(request!.attributes).toMatchObject({
      'gatehouse.route': 'agents',
      'gatehouse.workspace.id': workspaceId,
      'gatehouse.agent.server.id': serverId,
      'gatehouse.agent.method': 'SendMessage',
      'http.response.status_code': 200,
    })
    expect(call.name).toBe('invoke_agent Echo agent')
    expect(call.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'Echo agent',
      'gen_ai.agent.id': serverId,
      'gatehouse.agent.server.id': serverId,
      'gatehouse.agent.server.slug': 'echo',
      'gatehouse.agent.method': 'SendMessage',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(upstream.url).port),
      'http.response.status_code': 200,
    })
    // Break tried: dropping `injectTraceContext` from relay/upstream-call.ts sent no traceparent, and this failed.
    expect(upstreamTraceparents.findLast((sent) => sent.method === 'SendMessage')?.traceparent).toBe(`00-${traceId}-${call.spanId}-01`)
    expect(receiver.bodies.join('\n')).not.toContain(UPSTREAM_SECRET)
  })

  it('refuses the call past a rate limit on A2A calls, and the SDK client surfaces the 429', async () => {
    const key = await admin('/v1/api-keys/workspace/service', 'POST', { name: 'limited caller', workspace_id: workspaceId, scopes: ['agents.invoke'] })
    const policy = await admin('/v1/policies/rate-limits', 'POST', {
      name: 'Two agent calls a minute',
      conditions: [{ key: 'endpoint_type', value: 'a2a' }, { key: 'api_key', value: key.body.id }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 2,
    })
    expect(policy.status).toBe(200)
    await pollUntil(async () => gatehouse.holder.current?.snapshot.limits.some((limit) => limit.id.includes(policy.body.id as string)) === true, 10_000, 20)
    // The card is read, not called: it is not under the limit.
    const client = await a2aClient(key.body.key as string)
    const before = upstreamMethods.length
    for (const text of ['one', 'two']) expect(await client.sendMessage(userMessage(text))).toMatchObject({ status: { state: TaskState.TASK_STATE_COMPLETED } })
    await expect(client.sendMessage(userMessage('three'))).rejects.toThrow(/429/)
    expect(upstreamMethods.length).toBe(before + 2)
    const refused = await keyedFetch(key.body.key as string)(`${gatehouse.url}/v1/agents/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }) })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(await refused.json()).toMatchObject({ error: { code: 'rate_limited' } })
  })
})
