/**
 * The same span tree as tracing.test.ts, exported as OTLP http/protobuf (the SDK's default
 * protocol) and decoded by the loopback receiver from protobuf: a retry then a fallback, each
 * attempt a CLIENT span under the request's SERVER span, and each provider call carrying its
 * attempt span as parent. A file of its own: the SDK is registered once per process.
 */
import OpenAI from 'openai'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startTracing, type Tracing } from '@gatehouse/gateway'
import { DEFAULT_EXPORT_BATCH_SPANS } from '../../gateway/src/telemetry/tracing.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts'
import { decodeProtobufTraces } from '../helpers/otlp-protobuf.ts'

let receiver: OtlpReceiver
let tracing: Tracing | null
let primary: Simulator
let secondary: Simulator
let gateway: TestGateway

beforeAll(async () => {
  receiver = await startOtlpReceiver({ decode: (body) => decodeProtobufTraces(body) })
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/protobuf'
  // Batches leave when full or on forceFlush only, so the batch size below is what the processor chose.
  process.env.OTEL_BSP_SCHEDULE_DELAY = '600000'
  delete process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE
  tracing = await startTracing({ serviceName: 'gatehouse-gateway' })
  ;[primary, secondary] = await Promise.all([startOpenAISimulator({ chunks: 3 }), startOpenAISimulator({ chunks: 3 })])
  gateway = await startTestGateway([
    { slug: 'primary', kind: 'openai', baseUrl: primary.baseUrl },
    { slug: 'secondary', kind: 'openai', baseUrl: secondary.baseUrl },
  ])
})

afterAll(async () => {
  await gateway?.close()
  await tracing?.shutdown()
  await Promise.all([primary?.close(), secondary?.close(), receiver?.close()])
})

it('exports the span tree of a retry then a fallback as protobuf', async () => {
  primary.script({ status: 503 }, { status: 503 })
  const config = { strategy: { mode: 'fallback' }, targets: [{ provider: '@primary', retry: { attempts: 1, backoff_initial_ms: 1, backoff_max_ms: 1 } }, { provider: '@secondary' }] }
  const client = new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-config': JSON.stringify(config) } })
  const { data, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }).withResponse()
  const traceId = response.headers.get('x-gateway-trace-id')!.replaceAll('-', '')
  await tracing!.forceFlush()
  const spans = await receiver.waitFor((all) => all.filter((span) => span.traceId === traceId).length >= 4)
  expect(receiver.contentTypes.every((type) => type.startsWith('application/x-protobuf'))).toBe(true)

  const mine = spans.filter((span) => span.traceId === traceId)
  const server = mine.find((span) => span.kind === SPAN_KIND.server)!
  const attempts = mine.filter((span) => span.kind === SPAN_KIND.client)
  expect(server.name).toBe('chat gpt-4o-mini')
  expect(server.attributes).toMatchObject({ 'gen_ai.response.id': data.id, 'gatehouse.attempts': 3, 'gatehouse.target_path': 'config.targets[1]', 'http.response.status_code': 200 })
  expect(attempts).toHaveLength(3)
  expect(attempts.every((span) => span.parentSpanId === server.spanId)).toBe(true)
  expect(attempts.filter((span) => span.attributes['error.type'] === 'provider_overloaded')).toHaveLength(2)

  const parents = [...primary.requests, ...secondary.requests].map((request) => String(request.headers.traceparent).split('-')[2])
  expect(parents.sort()).toEqual(attempts.map((span) => span.spanId).sort())
})

it('exports at most 128 spans in one export request unless OTEL_BSP_MAX_EXPORT_BATCH_SIZE says otherwise', async () => {
  expect(process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE).toBe(String(DEFAULT_EXPORT_BATCH_SPANS))
  const client = new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@secondary' } })
  const before = receiver.spans.length
  // 200 requests, two spans each: three full batches, then what forceFlush sends.
  await Promise.all(Array.from({ length: 200 }, () => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] })))
  await tracing!.forceFlush()
  await receiver.waitFor((all) => all.length >= before + 400)
  expect(Math.max(...receiver.batchSizes)).toBe(DEFAULT_EXPORT_BATCH_SPANS)
})
