/**
 * The OTLP span encoder alone (gateway/src/telemetry/otlp-span-encoder.ts), timed on spans shaped
 * as a traced request's two: the attempt's CLIENT span (12 attributes) and the SERVER span (19),
 * made once by the gateway's lean tracer (lean-span.ts; `--spans sdk`: by the SDK's own), then
 * encoded over and over into one reused buffer. What changes from one
 * request to the next changes here too: the response id (the same on a request's two spans, then
 * another), the token counts and the cost; the rest repeats, as a gateway's names, routes and
 * models do. Compare the encoder at two commits by running this at each (quiet machine).
 *
 *   node test/bench/span-encoder.ts [--requests 4000] [--reps 15] [--spans lean|sdk]
 *
 * Prints the median and the least ns a request (both spans) over the repetitions, and the bytes.
 */
import { parseArgs } from 'node:util'
import { context, SpanKind, trace } from '@opentelemetry/api'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { leanTracer } from '../../gateway/src/telemetry/lean-span.ts'
import { encodeSpan, ProtoBuffer } from '../../gateway/src/telemetry/otlp-span-encoder.ts'

const { values } = parseArgs({ options: { requests: { type: 'string', default: '4000' }, reps: { type: 'string', default: '15' }, spans: { type: 'string', default: 'lean' } } })
if (values.spans !== 'lean' && values.spans !== 'sdk') throw new Error('--spans: lean or sdk')
const requests = Number(values.requests)
const reps = Number(values.reps)

const ended: ReadableSpan[] = []
const collect: SpanProcessor = { onStart() {}, onEnd: (span) => void ended.push(span), forceFlush: async () => {}, shutdown: async () => {} }
const sdkTracer = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'bench' }), spanProcessors: [collect] }).getTracer('gatehouse-gateway')
const lean = leanTracer(sdkTracer)
if (values.spans === 'lean' && lean === null) throw new Error('the lean tracer is not available with this SDK')
const tracer = values.spans === 'lean' ? lean! : sdkTracer

for (let request = 0; request < requests; request++) {
  const responseId = `chatcmpl-${request.toString(36)}x7d2f`
  const usage = { 'gen_ai.usage.input_tokens': 20 + (request % 7), 'gen_ai.usage.output_tokens': 12 + (request % 5) }
  const server = tracer.startSpan('chat gpt-4o-mini', { kind: SpanKind.SERVER })
  server.setAttributes({ 'gen_ai.operation.name': 'chat', 'gatehouse.route': 'chat', 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.request.max_tokens': 64 })
  const attempt = tracer.startSpan('chat gpt-4o-mini', { kind: SpanKind.CLIENT }, trace.setSpan(context.active(), server))
  attempt.setAttributes({
    'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4o-mini', 'server.address': '127.0.0.1', 'server.port': 4000,
    'gatehouse.provider.slug': 'openai-bench', 'http.response.status_code': 200, 'gen_ai.response.id': responseId, 'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
    ...usage, 'gen_ai.response.finish_reasons': ['stop'],
  })
  attempt.end()
  server.setAttributes({
    'http.response.status_code': 200, 'gatehouse.attempts': 1, 'gatehouse.retries': 0, 'gen_ai.response.model': 'gpt-4o-mini-2024-07-18', 'gen_ai.provider.name': 'openai',
    'gatehouse.provider.slug': 'openai-bench', 'gatehouse.provider.id': 'prov-1', 'gatehouse.workspace.id': 'ws-1', 'gatehouse.principal.kind': 'api_key',
    'gatehouse.api_key.id': 'key-ws', 'gatehouse.target_path': '0', 'gatehouse.cost_usd': 0.0000123 + (request % 3) * 1e-7, 'gen_ai.response.id': responseId, ...usage,
  })
  server.end()
}

const out = new ProtoBuffer()
function encodeAll(): number {
  const started = process.hrtime.bigint()
  out.reset()
  for (const span of ended) encodeSpan(out, span)
  return Number(process.hrtime.bigint() - started) / requests
}
// Warm-up: the encoder's code optimised and its remembered names and pairs in place.
for (let round = 0; round < 30; round++) encodeAll()
const times = Array.from({ length: reps }, encodeAll).sort((a, b) => a - b)
console.log(`span encoder (${values.spans} spans): median ${times[Math.floor(reps / 2)]!.toFixed(0)} ns a request (2 spans), least ${times[0]!.toFixed(0)} ns; ${(out.pos / requests).toFixed(0)} bytes a request`)
