/**
 * OpenTelemetry traces end to end: a gateway with tracing on (the real SDK, configured by OTEL_*
 * variables, exporting OTLP http/json) in front of provider simulators, and a real OTLP/HTTP
 * receiver on loopback decoding what arrives. Each test reads back one trace and checks its tree:
 * one SERVER span per request, one CLIENT span per upstream attempt under it (retries and
 * fallbacks as siblings), the GenAI attributes, and the `traceparent` the provider received.
 *
 * Breaks tried: running the attempt outside its span's context (`await attempt()` instead of
 * `context.with(active, attempt)` in pipeline/attempt-span.ts) made the provider's traceparent name
 * the server span: the chat, stream, fallback and caller-traceparent tests failed. Starting the
 * server span without `withRootTraceId` gave requests random trace ids: every test that finds its
 * trace by the x-gateway-trace-id response header failed.
 */
import { createHash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocket, WebSocketServer } from 'ws'
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Tracing } from '@gatehouse/gateway'
import { startOpenAISimulator } from '../simulators/openai.ts'
import { startBedrockSimulator } from '../simulators/bedrock.ts'
import type { Simulator } from '../simulators/index.ts'
import { startTestGateway, type TestGateway, type TestProvider } from '../helpers/gateway.ts'
import { startTracingTo } from '../helpers/tracing.ts'
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts'

let receiver: OtlpReceiver
let tracing: Tracing | null
let primary: Simulator
let secondary: Simulator
let bedrock: Simulator
let gateway: TestGateway
let contentGateway: TestGateway

const providers = (): TestProvider[] => [
  { slug: 'primary', kind: 'openai', baseUrl: primary.baseUrl },
  { slug: 'secondary', kind: 'openai', baseUrl: secondary.baseUrl },
  { slug: 'bedrock', kind: 'bedrock', baseUrl: bedrock.url, credentials: { accessKeyId: 'AKIASTORED', secretAccessKey: 'stored-secret' }, options: { region: 'us-east-1' } },
]

beforeAll(async () => {
  receiver = await startOtlpReceiver()
  tracing = await startTracingTo(receiver.url, { OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=tracing-test' })
  ;[primary, secondary, bedrock] = await Promise.all([
    startOpenAISimulator({ chunks: 3 }),
    startOpenAISimulator({ chunks: 3 }),
    // Checks every SigV4 signature with its own implementation (test/simulators/sigv4.ts).
    startBedrockSimulator({ chunks: 3, awsSecrets: { AKIASTORED: 'stored-secret' } }),
  ])
  gateway = await startTestGateway(providers())
  contentGateway = await startTestGateway(providers(), { traceContentWorkspaces: ['test'] })
})

afterAll(async () => {
  await gateway?.close()
  await contentGateway?.close()
  await tracing?.shutdown()
  await Promise.all([primary?.close(), secondary?.close(), bedrock?.close(), receiver?.close()])
})

beforeEach(() => {
  for (const simulator of [primary, secondary, bedrock]) {
    simulator.reset()
    simulator.options.latencyMs = 0
    simulator.options.tokenIntervalMs = 0
  }
})

function client(target: TestGateway = gateway, headers: Record<string, string> = { 'x-gateway-provider': '@primary' }): OpenAI {
  return new OpenAI({ apiKey: target.workspaceKey, baseURL: target.baseUrl, maxRetries: 0, defaultHeaders: headers })
}

const messages = [{ role: 'user' as const, content: 'hello' }]

/** The trace's spans once its server span and `clients` client spans have arrived. */
async function traceOf(traceId: string, clients: number): Promise<{ server: ReceivedSpan; attempts: ReceivedSpan[] }> {
  await tracing!.forceFlush()
  const spans = await receiver.waitFor((all) => {
    const mine = all.filter((span) => span.traceId === traceId)
    return mine.some((span) => span.kind === SPAN_KIND.server) && mine.filter((span) => span.kind === SPAN_KIND.client).length >= clients
  })
  const mine = spans.filter((span) => span.traceId === traceId)
  const servers = mine.filter((span) => span.kind === SPAN_KIND.server)
  expect(servers).toHaveLength(1)
  return { server: servers[0]!, attempts: mine.filter((span) => span.kind === SPAN_KIND.client) }
}

/** `00-<trace>-<parent>-<flags>` as the provider received it. */
function traceparentAt(simulator: Simulator, index: number): { traceId: string; parentSpanId: string; flags: string } {
  const header = simulator.requests[index]?.headers.traceparent
  expect(typeof header).toBe('string')
  const [version, traceId, parentSpanId, flags] = (header as string).split('-')
  expect(version).toBe('00')
  return { traceId: traceId!, parentSpanId: parentSpanId!, flags: flags! }
}

/** A generated gateway trace id is the OpenTelemetry trace id as it is (no mapping: a trace found by it proves that). */
const otelTraceId = (gatewayTraceId: string | null): string => gatewayTraceId ?? ''

describe('a plain chat', () => {
  it('is one SERVER span named after the GenAI conventions, with one CLIENT span for the attempt under it', async () => {
    const { data, response } = await client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages, max_tokens: 50, temperature: 0.5, top_p: 0.9 })
      .withResponse()
    const traceId = otelTraceId(response.headers.get('x-gateway-trace-id'))
    expect(traceId).toMatch(/^[0-9a-f]{32}$/)
    const { server, attempts } = await traceOf(traceId, 1)

    expect(server.name).toBe('chat gpt-4o-mini')
    expect(server.parentSpanId).toBe('')
    expect(server.resource['service.name']).toBe('gatehouse-gateway')
    expect(server.resource['deployment.environment.name']).toBe('tracing-test')
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': data.model,
      'gen_ai.response.id': data.id,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.request.max_tokens': 50,
      'gen_ai.request.temperature': 0.5,
      'gen_ai.request.top_p': 0.9,
      'gen_ai.usage.input_tokens': data.usage!.prompt_tokens,
      'gen_ai.usage.output_tokens': data.usage!.completion_tokens,
      'gatehouse.workspace.id': 'ws-test',
      'gatehouse.api_key.id': 'key-ws',
      'gatehouse.provider.slug': 'primary',
      'gatehouse.route': 'chat',
      'gatehouse.attempts': 1,
      'http.response.status_code': 200,
    })
    expect(server.attributes['error.type']).toBeUndefined()
    // The span's own trace id is the gateway trace id: no attribute repeats it.
    expect(server.attributes['gatehouse.trace_id']).toBeUndefined()

    expect(attempts).toHaveLength(1)
    const [attempt] = attempts
    expect(attempt!.parentSpanId).toBe(server.spanId)
    expect(attempt!.name).toBe('chat gpt-4o-mini')
    expect(attempt!.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(primary.url).port),
      'http.response.status_code': 200,
      'gen_ai.response.id': data.id,
    })

    // The provider was called with the attempt span as its parent.
    const received = traceparentAt(primary, 0)
    expect(received).toEqual({ traceId, parentSpanId: attempt!.spanId, flags: '01' })
  })
})

describe('a signed provider', () => {
  // The trace headers are added before signing: SigV4 signs them with the rest, and the provider's
  // own check of the signature passes. Break tried: injecting after `applyAuth` in
  // upstream/transport.ts -> traceparent missing from SignedHeaders, this test failed (AWS, like the
  // simulator, accepts unsigned extra headers, so the call itself still succeeded).
  it('Bedrock: traceparent is signed with the request and the signature checks out', async () => {
    const { response } = await client(gateway, { 'x-gateway-provider': '@bedrock' })
      .chat.completions.create({ model: 'anthropic.claude-3-5-sonnet-20240620-v1:0', messages })
      .withResponse()
    const traceId = otelTraceId(response.headers.get('x-gateway-trace-id'))
    const { server, attempts } = await traceOf(traceId, 1)
    expect(server.attributes['gen_ai.provider.name']).toBe('aws.bedrock')
    expect(traceparentAt(bedrock, 0)).toEqual({ traceId, parentSpanId: attempts[0]!.spanId, flags: '01' })
    expect(String(bedrock.requests[0]!.headers.authorization)).toMatch(/SignedHeaders=[^,]*traceparent/)
  })
})

describe('a stream', () => {
  it('ends its server span when the stream ends, with the usage and finish reason the stream carried', async () => {
    const { data: stream, response } = await client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } })
      .withResponse()
    let id = ''
    let usage: OpenAI.CompletionUsage | null | undefined
    for await (const chunk of stream) {
      id = chunk.id
      usage = chunk.usage ?? usage
    }
    const traceId = otelTraceId(response.headers.get('x-gateway-trace-id'))
    const { server, attempts } = await traceOf(traceId, 1)
    expect(server.attributes).toMatchObject({
      'gen_ai.request.stream': true,
      'gen_ai.response.id': id,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.output_tokens': usage!.completion_tokens,
      'http.response.status_code': 200,
    })
    expect(attempts).toHaveLength(1)
    expect(attempts[0]!.parentSpanId).toBe(server.spanId)
    expect(attempts[0]!.attributes['gen_ai.usage.output_tokens']).toBe(usage!.completion_tokens)
    expect(traceparentAt(primary, 0).parentSpanId).toBe(attempts[0]!.spanId)
  })
})

describe('a stream that fails', () => {
  it('ends both spans in error when the provider sends an error event mid-stream', async () => {
    // Paced, so the error arrives after chunks went out (an error in the first read is a plain HTTP error).
    primary.options.tokenIntervalMs = 5
    primary.script({ errorAfterChunks: 2, status: 500 })
    let gatewayTraceId: string | null = null
    const failure = await (async () => {
      const { data: stream, response } = await client().chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true }).withResponse()
      gatewayTraceId = response.headers.get('x-gateway-trace-id')
      for await (const _chunk of stream) {
        // read until the error event
      }
    })().catch((error: unknown) => error)
    // The SDK turns the stream's error event into an APIError while iterating.
    expect(failure).toBeInstanceOf(OpenAI.APIError)
    expect(gatewayTraceId).not.toBeNull()
    const { server, attempts } = await traceOf(otelTraceId(gatewayTraceId), 1)
    // The client got 200 and then an error event: the status stays 200, the span is in error.
    expect(server.attributes['http.response.status_code']).toBe(200)
    expect(server.status.code).toBe(2)
    expect(server.attributes['error.type']).toBe('provider_error')
    expect(attempts[0]!.attributes['error.type']).toBe('provider_error')
    expect(attempts[0]!.status.code).toBe(2)
  })
})

describe('a retry then a fallback', () => {
  it('shows each attempt as a sibling CLIENT span: two failed at the primary, the last answered by the secondary', async () => {
    primary.script({ status: 503 }, { status: 503 })
    const config = {
      strategy: { mode: 'fallback' },
      targets: [{ provider: '@primary', retry: { attempts: 1, backoff_initial_ms: 1, backoff_max_ms: 1 } }, { provider: '@secondary' }],
    }
    const { response } = await client(gateway, { 'x-gateway-config': JSON.stringify(config) })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .withResponse()
    expect(response.headers.get('x-gateway-target-path')).toBe('config.targets[1]')
    const traceId = otelTraceId(response.headers.get('x-gateway-trace-id'))
    const { server, attempts } = await traceOf(traceId, 3)

    expect(attempts).toHaveLength(3)
    for (const attempt of attempts) expect(attempt.parentSpanId).toBe(server.spanId)
    const byStart = [...attempts].sort((a, b) => (a.attributes['server.port'] === b.attributes['server.port'] ? 0 : a.attributes['server.port'] === Number(new URL(primary.url).port) ? -1 : 1))
    const [first, second, last] = byStart
    for (const failed of [first!, second!]) {
      expect(failed.attributes).toMatchObject({ 'gatehouse.provider.slug': 'primary', 'http.response.status_code': 503, 'error.type': 'provider_overloaded' })
      expect(failed.status.code).toBe(2)
    }
    expect(last!.attributes).toMatchObject({ 'gatehouse.provider.slug': 'secondary', 'http.response.status_code': 200 })
    expect(last!.attributes['error.type']).toBeUndefined()
    expect(server.attributes).toMatchObject({ 'gatehouse.target_path': 'config.targets[1]', 'gatehouse.attempts': 3, 'gatehouse.provider.slug': 'secondary', 'http.response.status_code': 200 })

    // Each upstream call carried its own attempt span as parent.
    const primaryParents = [traceparentAt(primary, 0).parentSpanId, traceparentAt(primary, 1).parentSpanId].sort()
    expect(primaryParents).toEqual([first!.spanId, second!.spanId].sort())
    expect(traceparentAt(secondary, 0).parentSpanId).toBe(last!.spanId)
  })
})

describe('an upstream error', () => {
  it('marks the attempt and the request with error.type, and the server span in error for the 5xx it answered', async () => {
    primary.script({ status: 500 })
    const failure = await client().chat.completions.create({ model: 'gpt-4o-mini', messages }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(OpenAI.APIError)
    const status = (failure as InstanceType<typeof OpenAI.APIError>).status
    expect(status).toBe(502)
    const traceId = otelTraceId((failure as InstanceType<typeof OpenAI.APIError>).headers?.get('x-gateway-trace-id') ?? null)
    const { server, attempts } = await traceOf(traceId, 1)
    expect(server.attributes).toMatchObject({ 'error.type': 'provider_error', 'http.response.status_code': 502 })
    expect(server.status.code).toBe(2)
    expect(attempts[0]!.attributes).toMatchObject({ 'error.type': 'provider_error', 'http.response.status_code': 500 })
    expect(attempts[0]!.status.code).toBe(2)
  })

  it('a refusal before any attempt (a bad key) is a server span with its error.type and no client span', async () => {
    const traceId = 'f'.repeat(31) + '1'
    const response = await fetch(`${gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer ghk_wrong', 'content-type': 'application/json', traceparent: `00-${traceId}-${'a'.repeat(16)}-01` },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages }),
    })
    expect(response.status).toBe(401)
    const { server, attempts } = await traceOf(traceId, 0)
    expect(server.attributes['error.type']).toMatch(/api_key/)
    expect(server.attributes['http.response.status_code']).toBe(401)
    // 4xx is the caller's doing: not a server-span error (OpenTelemetry HTTP conventions).
    expect(server.status.code ?? 0).toBe(0)
    expect(attempts).toHaveLength(0)
  })
})

describe('the caller\'s trace', () => {
  it('keeps a caller-supplied traceparent: same trace id, the caller span as parent, tracestate and baggage passed on', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const callerSpan = '00f067aa0ba902b7'
    const { response } = await client(gateway, {
      'x-gateway-provider': '@primary',
      traceparent: `00-${traceId}-${callerSpan}-01`,
      tracestate: 'vendor=opaque',
      baggage: 'tenant=acme',
    })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .withResponse()
    // The gateway trace id is the caller's trace id too.
    expect(response.headers.get('x-gateway-trace-id')).toBe(traceId)
    const { server, attempts } = await traceOf(traceId, 1)
    expect(server.parentSpanId).toBe(callerSpan)
    expect(attempts[0]!.parentSpanId).toBe(server.spanId)
    expect(traceparentAt(primary, 0)).toEqual({ traceId, parentSpanId: attempts[0]!.spanId, flags: '01' })
    expect(primary.requests[0]!.headers.tracestate).toBe('vendor=opaque')
    expect(primary.requests[0]!.headers.baggage).toBe('tenant=acme')
  })

  it('honours a caller that did not sample: nothing exported, the provider still told (flags 00)', async () => {
    const traceId = '5bf92f3577b34da6a3ce929d0e0e4736'
    const callerSpan = '10f067aa0ba902b7'
    await client(gateway, { 'x-gateway-provider': '@primary', traceparent: `00-${traceId}-${callerSpan}-00` }).chat.completions.create({ model: 'gpt-4o-mini', messages })
    const received = traceparentAt(primary, 0)
    expect(received.traceId).toBe(traceId)
    expect(received.flags).toBe('00')
    // A later sampled request's spans arriving proves the export ran after this one.
    const later = await client().chat.completions.create({ model: 'gpt-4o-mini', messages }).withResponse()
    await traceOf(otelTraceId(later.response.headers.get('x-gateway-trace-id')), 1)
    expect(receiver.spans.filter((span) => span.traceId === traceId)).toEqual([])
  })

  it('maps x-gateway-trace-id and x-gateway-span-id onto the trace, hashing ids that are not W3C-shaped', async () => {
    const hashed = (value: string, digits: number): string => createHash('sha256').update(value).digest('hex').slice(0, digits)
    await client(gateway, { 'x-gateway-provider': '@primary', 'x-gateway-trace-id': 'order-42', 'x-gateway-span-id': 'plan-step', 'x-gateway-parent-span-id': 'agent-run', 'x-gateway-span-name': 'plan' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
    const traceId = hashed('order-42', 32)
    const { server } = await traceOf(traceId, 1)
    expect(server.parentSpanId).toBe(hashed('plan-step', 16))
    expect(server.attributes).toMatchObject({ 'gatehouse.trace_id': 'order-42', 'gatehouse.caller.span_id': 'plan-step', 'gatehouse.caller.parent_span_id': 'agent-run', 'gatehouse.caller.span_name': 'plan' })

    // W3C-shaped ids are used as they are; a trace id alone starts a root span in that trace.
    const w3cTrace = 'abcdef0123456789abcdef0123456789'
    await client(gateway, { 'x-gateway-provider': '@primary', 'x-gateway-trace-id': w3cTrace }).chat.completions.create({ model: 'gpt-4o-mini', messages })
    const alone = await traceOf(w3cTrace, 1)
    expect(alone.server.parentSpanId).toBe('')
    await client(gateway, { 'x-gateway-provider': '@primary', 'x-gateway-trace-id': 'fedcba9876543210fedcba9876543210', 'x-gateway-parent-span-id': '1234567890abcdef' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
    expect((await traceOf('fedcba9876543210fedcba9876543210', 1)).server.parentSpanId).toBe('1234567890abcdef')
  })
})

describe('a realtime session', () => {
  it('is a server span with one client span for the provider socket, whose handshake carries the attempt as parent', async () => {
    const handshakes: IncomingHttpHeaders[] = []
    const provider = new WebSocketServer({ host: '127.0.0.1', port: 0, verifyClient: ({ req }, done) => (handshakes.push(req.headers), done(true)) })
    await new Promise<void>((resolve) => provider.once('listening', () => resolve()))
    const realtime = await startTestGateway([{ slug: 'rt', kind: 'openai', baseUrl: `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1` }])
    try {
      const socket = new WebSocket(`${realtime.baseUrl.replace('http:', 'ws:')}/realtime?model=gpt-realtime`, { headers: { authorization: `Bearer ${realtime.workspaceKey}`, 'x-gateway-provider': '@rt' } })
      const upgrade = new Promise<IncomingHttpHeaders>((resolve) => socket.once('upgrade', (response) => resolve(response.headers)))
      await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject))
      const traceId = otelTraceId(String((await upgrade)['x-gateway-trace-id']))
      socket.close()
      const { server, attempts } = await traceOf(traceId, 1)
      expect(server.name).toBe('chat gpt-realtime')
      expect(attempts[0]!.parentSpanId).toBe(server.spanId)
      expect(String(handshakes[0]!.traceparent).split('-').slice(1, 3)).toEqual([traceId, attempts[0]!.spanId])
    } finally {
      await realtime.close()
      await new Promise<void>((resolve) => provider.close(() => resolve()))
    }
  })
})

describe('message content', () => {
  it('is on spans only for a workspace that opted in, redacted, and credentials are never exported', async () => {
    const plain = await client().chat.completions.create({ model: 'gpt-4o-mini', messages }).withResponse()
    const plainTrace = await traceOf(otelTraceId(plain.response.headers.get('x-gateway-trace-id')), 1)
    expect(plainTrace.server.events).toEqual([])

    const secretish = 'my key is sk-abcdefghijklmnopqrstuvwx please'
    const opted = await client(contentGateway)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: secretish }] })
      .withResponse()
    const { server } = await traceOf(otelTraceId(opted.response.headers.get('x-gateway-trace-id')), 1)
    const event = server.events.find((item) => item.name === 'gen_ai.client.inference.operation.details')
    expect(event).toBeDefined()
    const input = JSON.parse(event!.attributes['gen_ai.input.messages'] as string) as Array<{ role: string; parts: Array<{ content: string }> }>
    expect(input[0]).toEqual({ role: 'system', parts: [{ type: 'text', content: 'be brief' }] })
    expect(input[1]!.parts[0]!.content).toBe('my key is [REDACTED] please')
    const output = JSON.parse(event!.attributes['gen_ai.output.messages'] as string) as Array<{ role: string; parts: Array<{ content: string }> }>
    // The simulator echoes the prompt: the answer's copy of the key is masked too.
    expect(opted.data.choices[0]!.message.content).toContain('sk-abcdefghijklmnopqrstuvwx')
    expect(output[0]!.parts[0]!.content).toBe(opted.data.choices[0]!.message.content!.replace('sk-abcdefghijklmnopqrstuvwx', '[REDACTED]'))

    const exported = receiver.bodies.join('\n')
    for (const secret of [gateway.workspaceKey, contentGateway.workspaceKey, 'sk-simulator', 'sk-abcdefghijklmnopqrstuvwx']) expect(exported).not.toContain(secret)
    expect(exported.toLowerCase()).not.toContain('authorization')
  })
})
