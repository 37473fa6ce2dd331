/**
 * Tracing at a sampling ratio of 0 (`parentbased_traceidratio`, the chart's default when traces are
 * exported, at 0): requests that start their trace get no span from the SDK
 * (telemetry/caller-context.ts `unsampledRootContext`), yet the provider is told the decision as
 * before, with a `traceparent` whose trace id is the request's gateway trace id and whose flags are
 * 00; a caller that sends a sampled traceparent is still traced (the parent-based sampler follows
 * it). A real SDK exporting OTLP http/json to a loopback receiver; OpenAI's SDK as the client.
 *
 * Breaks tried: writing the header with flags 01 failed the chat and stream tests; leaving the
 * unsampled root's context out of `context.with` (the trace stage calling `next()` as it is) sent
 * no traceparent: the same two tests and the hashed-id one failed.
 */
import { createHash } from 'node:crypto'
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Tracing } from '@gatehouse/gateway'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'
import { startTracingTo } from '../helpers/tracing.ts'
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts'

let receiver: OtlpReceiver
let tracing: Tracing | null
let provider: Simulator
let gateway: TestGateway

beforeAll(async () => {
  receiver = await startOtlpReceiver()
  tracing = await startTracingTo(receiver.url, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })
  provider = await startOpenAISimulator({ chunks: 3 })
  gateway = await startTestGateway([{ slug: 'primary', kind: 'openai', baseUrl: provider.baseUrl }])
})

afterAll(async () => {
  await gateway?.close()
  await tracing?.shutdown()
  await Promise.all([provider?.close(), receiver?.close()])
})

beforeEach(() => provider.reset())

function client(headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@primary', ...headers } })
}

const messages = [{ role: 'user' as const, content: 'hello' }]
const UNSAMPLED = /^00-([0-9a-f]{32})-(?!0{16})([0-9a-f]{16})-00$/

/** What the provider's `index`th request carried of trace context. */
function traceHeadersAt(index: number): { traceparent: unknown; tracestate: unknown; baggage: unknown } {
  const { traceparent, tracestate, baggage } = provider.requests[index]!.headers
  return { traceparent, tracestate, baggage }
}

/** Whether any span of `traceId` was exported, once a sampled request's spans arriving show the exporter ran after it. */
async function exported(traceId: string): Promise<boolean> {
  const callerTrace = createHash('sha256').update(`${traceId}-later`).digest('hex').slice(0, 32)
  await client({ traceparent: `00-${callerTrace}-00f067aa0ba902b7-01` }).chat.completions.create({ model: 'gpt-4o-mini', messages })
  await tracing!.forceFlush()
  await receiver.waitFor((spans) => spans.some((span) => span.traceId === callerTrace && span.kind === SPAN_KIND.server))
  return receiver.spans.some((span) => span.traceId === traceId)
}

describe('a request that starts its trace, sampled at 0', () => {
  it('a chat: the provider gets an unsampled traceparent in the gateway trace id, nothing is exported', async () => {
    const { response } = await client().chat.completions.create({ model: 'gpt-4o-mini', messages }).withResponse()
    const traceId = response.headers.get('x-gateway-trace-id')!
    const headers = traceHeadersAt(0)
    expect(headers.traceparent).toMatch(UNSAMPLED)
    expect(UNSAMPLED.exec(headers.traceparent as string)![1]).toBe(traceId)
    expect(headers.tracestate).toBeUndefined()
    expect(headers.baggage).toBeUndefined()
    expect(await exported(traceId)).toBe(false)
  })

  it('a stream: the same, and each request names a span of its own', async () => {
    const traceIds: string[] = []
    for (let index = 0; index < 2; index++) {
      const { data: stream, response } = await client().chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true }).withResponse()
      for await (const chunk of stream) void chunk
      traceIds.push(response.headers.get('x-gateway-trace-id')!)
    }
    const [first, second] = [0, 1].map((index) => UNSAMPLED.exec(traceHeadersAt(index).traceparent as string))
    expect([first?.[1], second?.[1]]).toEqual(traceIds)
    expect(first![2]).not.toBe(second![2])
  })

  it('a caller trace id that is not W3C-shaped is hashed into the traceparent, as a sampled root would have been', async () => {
    await client({ 'x-gateway-trace-id': 'order-42' }).chat.completions.create({ model: 'gpt-4o-mini', messages })
    const expected = createHash('sha256').update('order-42').digest('hex').slice(0, 32)
    expect(UNSAMPLED.exec(traceHeadersAt(0).traceparent as string)?.[1]).toBe(expected)
  })
})

describe('a caller that sampled, at 0', () => {
  it('is traced: its trace id kept, the provider told the attempt span as parent, sampled', async () => {
    const traceId = '6bf92f3577b34da6a3ce929d0e0e4736'
    await client({ traceparent: `00-${traceId}-20f067aa0ba902b7-01`, baggage: 'tenant=acme' }).chat.completions.create({ model: 'gpt-4o-mini', messages })
    await tracing!.forceFlush()
    const spans = await receiver.waitFor((all) => all.filter((span) => span.traceId === traceId).length >= 2)
    const mine = spans.filter((span) => span.traceId === traceId)
    const server = mine.find((span) => span.kind === SPAN_KIND.server)!
    const attempt = mine.find((span) => span.kind === SPAN_KIND.client)!
    expect(server.parentSpanId).toBe('20f067aa0ba902b7')
    expect(attempt.parentSpanId).toBe(server.spanId)
    expect(traceHeadersAt(0)).toEqual({ traceparent: `00-${traceId}-${attempt.spanId}-01`, tracestate: undefined, baggage: 'tenant=acme' })
  })
})
