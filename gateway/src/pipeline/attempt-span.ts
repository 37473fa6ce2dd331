/**
 * One CLIENT span per upstream call, under the request's server span. For model providers, one per
 * attempt: retries and fallbacks are sibling spans, each naming the provider and model it tried,
 * the address it called, the status it got and, when it failed, why (`error.type`). MCP servers
 * and A2A agents get theirs the same way (`tracedUpstreamCall`, described by
 * telemetry/upstream-span.ts). The call runs with its span active, so the `traceparent` sent
 * upstream (core/tracing.ts) names this span as the upstream call's parent.
 *
 * With tracing off this is one boolean test; under an unsampled request no span is made at all.
 */
import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api'
import { GatewayError } from '../core/errors.ts'
import { traceparentAlone, tracingEnabled, withUpstreamTraceparent } from '../core/tracing.ts'
import type { BoundTarget } from '../routing/bind.ts'
import { genAiFinishReasons, genAiOperationName, genAiProviderName, genAiResponseAttributes, genAiSpanName, genAiUsageAttributes } from '../telemetry/genai.ts'
import { serverAddressAttributes, type UpstreamSpanSpec } from '../telemetry/upstream-span.ts'
import { ProviderHttpError } from '../upstream/provider-errors.ts'
import { observeStream, type Answer, type Exchange } from './stage.ts'

export const ATTEMPT_TRACER_NAME = 'gatehouse-gateway'

/**
 * The attempts' tracer, looked up again only when another provider was registered (a process that
 * stopped and restarted tracing: tests): `getTracer` builds a key and searches the SDK's map on
 * every call.
 */
let attemptTracer: { provider: TracerProvider; tracer: Tracer } | null = null
function tracer(): Tracer {
  const provider = trace.getTracerProvider()
  if (attemptTracer?.provider !== provider) attemptTracer = { provider, tracer: provider.getTracer(ATTEMPT_TRACER_NAME) }
  return attemptTracer.tracer
}

function failed(span: Span, error: unknown, signal: AbortSignal): void {
  const attributes: Attributes = {}
  if (error instanceof ProviderHttpError) attributes['http.response.status_code'] = error.info.status
  attributes['error.type'] = signal.aborted ? 'request_cancelled' : error instanceof GatewayError ? error.code : error instanceof Error ? error.name : 'internal_error'
  span.setAttributes(attributes)
  span.setStatus({ code: SpanStatusCode.ERROR, message: String(attributes['error.type']) })
  span.end()
}

function ended(span: Span, answer: Answer, signal: AbortSignal, modelAnswer: boolean): Answer {
  switch (answer.kind) {
    case 'json':
      span.setAttribute('http.response.status_code', answer.status)
      if (modelAnswer) span.setAttributes(genAiUsageAttributes(answer.usage, genAiResponseAttributes(answer.body)))
      span.end()
      return answer
    case 'stream':
      span.setAttribute('http.response.status_code', answer.status)
      return observeStream(answer, {
        onEnd({ error }) {
          const result = answer.result()
          if (result !== null) span.setAttributes(genAiFinishReasons(result.finishReason, genAiUsageAttributes(result.usage)))
          if (error !== null) failed(span, error, signal)
          else span.end()
        },
      })
    case 'relay': {
      span.setAttribute('http.response.status_code', answer.status)
      const source = answer.body
      const body = async function* (): AsyncGenerator<Uint8Array> {
        let failure: unknown = null
        try {
          for await (const chunk of source) yield chunk
        } catch (error) {
          failure = error
          throw error
        } finally {
          if (failure !== null) failed(span, failure, signal)
          else span.end()
        }
      }
      return { ...answer, body: body() }
    }
    case 'session':
      void answer.ended.then(() => span.end(), (error: unknown) => failed(span, error, signal))
      return answer
  }
}

/** Runs one attempt at `target` inside its own client span (not even a promise more with tracing off). */
export function tracedAttempt(exchange: Exchange, target: BoundTarget, attempt: () => Promise<Answer>): Promise<Answer> {
  return tracedUpstreamCall(exchange, () => providerSpan(exchange, target), attempt)
}

/**
 * Runs one upstream call inside its own client span, described by `describe` (called only when the
 * span records). With tracing off this is one boolean test; under an unsampled request the upstream
 * still gets a traceparent (the request's, flagged unsampled), without a span made and dropped.
 */
export function tracedUpstreamCall(exchange: Exchange, describe: () => UpstreamSpanSpec, call: () => Promise<Answer>): Promise<Answer> {
  if (!tracingEnabled()) return call()
  if (trace.getActiveSpan()?.isRecording() === false) return call()
  return callInSpan(exchange, describe, call)
}

function providerSpan(exchange: Exchange, target: BoundTarget): UpstreamSpanSpec {
  const operationName = genAiOperationName(exchange.operation.name)
  const { provider, upstreamModel } = target.route
  return {
    name: genAiSpanName(operationName, upstreamModel),
    attributes: {
      'gen_ai.operation.name': operationName,
      'gen_ai.provider.name': genAiProviderName(provider.record.kind),
      'gen_ai.request.model': upstreamModel,
      ...serverAddressAttributes(provider.endpoint.baseUrl),
      'gatehouse.provider.slug': provider.record.slug,
      'gatehouse.provider.id': provider.record.id,
    },
    modelAnswer: true,
  }
}

async function callInSpan(exchange: Exchange, describe: () => UpstreamSpanSpec, call: () => Promise<Answer>): Promise<Answer> {
  const spec = describe()
  // Attributes set on the started span, not passed to startSpan: the SDK copies and checks start
  // attributes twice more, for the sampler, and no sampler OTEL_TRACES_SAMPLER can name reads them.
  const span = tracer().startSpan(spec.name, { kind: SpanKind.CLIENT })
  span.setAttributes(spec.attributes)
  const parent = context.active()
  const traced = trace.setSpan(parent, span)
  // The header the upstream gets, written once here where W3C's propagator alone would write it.
  const active = span.isRecording() && traceparentAlone(span.spanContext(), parent) ? withUpstreamTraceparent(traced) : traced
  const signal = exchange.context.signal
  let answer: Answer
  try {
    answer = await context.with(active, call)
  } catch (error) {
    failed(span, error, signal)
    throw error
  }
  return ended(span, answer, signal, spec.modelAnswer)
}
