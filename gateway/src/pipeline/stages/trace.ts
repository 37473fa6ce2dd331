/**
 * The trace stage: one SERVER span per data-plane request, outermost, so refusals by
 * authentication, limits or guardrails are spans too. Named and filled after the OpenTelemetry GenAI
 * conventions (`{gen_ai.operation.name} {gen_ai.request.model}`, gen_ai.* attributes) with
 * Gatehouse's own under `gatehouse.*`. Upstream attempts are CLIENT spans under it (see
 * `attempt-span.ts`), made while this span is the active one.
 *
 * The span ends when the answer does: at once for JSON, when the stream or relayed body ends (the
 * account stage, inside, has priced it by then), when a realtime session closes. An unsampled span
 * (a 0 % sampler) is not recording: the stage then only makes it the active context, so the
 * provider still gets a `traceparent` carrying the decision, and reads nothing else. A request
 * that starts its trace under a sampler that drops every root does not even get that span from the
 * SDK: its context holds the same unsampled ids and the `traceparent` to send
 * (caller-context.ts `unsampledRootContext`).
 *
 * Composed only when tracing is on (`tracingEnabled()`); a gateway without it has no such stage.
 */
import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api'
import { GatewayError } from '../../core/errors.ts'
import { chunkValue } from '../../core/raw-json.ts'
import { eventChunks } from '../../core/relayed-events.ts'
import { callerParent, unsampledRootContext, withRootTraceId } from '../../telemetry/caller-context.ts'
import { genAiChunkAttributes, genAiFinishReasons, genAiOperationName, genAiProviderName, genAiRequestAttributes, genAiResponseAttributes, genAiSpanName, genAiUsageAttributes } from '../../telemetry/genai.ts'
import { CONTENT_EVENT, contentAllowed, inputContent, outputContent, StreamedText } from '../../telemetry/genai-content.ts'
import { relayedServerAttributes } from '../../telemetry/upstream-span.ts'
import { observeStream, type Answer, type Exchange, type Operation, type Stage, type StageFactory, type StreamAnswer } from '../stage.ts'

export const TRACER_NAME = 'gatehouse-gateway'

export interface TraceStageOptions {
  /** Workspaces (ids or slugs, `*` for all) whose message content goes on spans; empty: none. */
  readonly contentWorkspaces?: readonly string[]
}

function bodyModel(body: Record<string, unknown> | null): string | null {
  return typeof body?.model === 'string' ? body.model : null
}

/** The caller, when authentication got that far (a refusal by authentication has none). */
function principalOf(exchange: Exchange): Exchange['context']['principal'] | null {
  const context = exchange.context as { isAuthenticated?: boolean }
  return context.isAuthenticated === false ? null : exchange.context.principal
}

function errorCode(error: unknown, exchange: Exchange): { status: number; code: string } {
  if (exchange.context.signal.aborted) return { status: 499, code: 'request_cancelled' }
  if (error instanceof GatewayError) return { status: error.status, code: error.code }
  return { status: 500, code: error instanceof Error ? error.name : 'internal_error' }
}

class RequestSpan {
  readonly #span: Span
  readonly #exchange: Exchange
  readonly #operationName: string
  readonly #contentWorkspaces: readonly string[]
  #content: boolean | null = null
  #ended = false

  constructor(span: Span, exchange: Exchange, operationName: string, options: TraceStageOptions) {
    this.#span = span
    this.#exchange = exchange
    this.#operationName = operationName
    this.#contentWorkspaces = options.contentWorkspaces ?? []
  }

  /** Whether this exchange's workspace opted in to content on spans (known once authenticated). */
  get recordsContent(): boolean {
    if (this.#content === null) {
      const principal = this.#contentWorkspaces.length === 0 ? null : principalOf(this.#exchange)
      const workspace = principal === null ? undefined : this.#exchange.context.runtime.workspaces.get(principal.workspaceId)
      this.#content = contentAllowed(this.#contentWorkspaces, workspace)
    }
    return this.#content
  }

  set(attributes: Attributes): void {
    this.#span.setAttributes(attributes)
  }

  /**
   * Facts every ending shares: who called, where it went, what it cost. `inError`: a server span is
   * in error for 5xx answers only (4xx are the caller's: OpenTelemetry HTTP conventions), or when a
   * stream already answered 200 failed on the gateway's or provider's side.
   */
  end(status: number, failure: string | null, inError = status >= 500): void {
    if (this.#ended) return
    this.#ended = true
    const span = this.#span
    const { facts, context } = this.#exchange
    const model = facts.requestedModel ?? bodyModel(this.#exchange.body)
    span.updateName(genAiSpanName(this.#operationName, model))
    const attributes: Attributes = { 'http.response.status_code': status, 'gatehouse.attempts': facts.attempts, 'gatehouse.retries': facts.retries }
    if (model !== null) attributes['gen_ai.request.model'] = model
    if (facts.servedModel !== null) attributes['gen_ai.response.model'] = facts.servedModel
    if (facts.provider !== null) {
      attributes['gen_ai.provider.name'] = genAiProviderName(facts.provider.record.kind)
      attributes['gatehouse.provider.slug'] = facts.provider.record.slug
      attributes['gatehouse.provider.id'] = facts.provider.record.id
    }
    const principal = principalOf(this.#exchange)
    if (principal !== null) {
      attributes['gatehouse.workspace.id'] = principal.workspaceId
      attributes['gatehouse.principal.kind'] = principal.kind
      if (principal.key !== null) attributes['gatehouse.api_key.id'] = principal.key.record.id
    }
    if (facts.configId !== null) attributes['gatehouse.config.id'] = facts.configId
    if (facts.targetPath !== null) attributes['gatehouse.target_path'] = facts.targetPath
    if (facts.cacheStatus !== null) attributes['gatehouse.cache.status'] = facts.cacheStatus
    if (typeof facts.annotations.costUsd === 'number') attributes['gatehouse.cost_usd'] = facts.annotations.costUsd
    if (facts.usageEstimated) attributes['gatehouse.usage.estimated'] = true
    if (context.runtime.deploymentId !== null) attributes['gatehouse.deployment.id'] = context.runtime.deploymentId
    genAiUsageAttributes(facts.usage, attributes)
    relayedServerAttributes(facts, attributes)
    const code = facts.errorCode ?? failure
    if (code !== null) attributes['error.type'] = code
    span.setAttributes(attributes)
    if (inError) span.setStatus({ code: SpanStatusCode.ERROR, ...(code !== null ? { message: code } : {}) })
    span.end()
  }

  /** The opted-in message content, as one GenAI event; `output` is built (redacted, serialised) only then. */
  content(output: () => Attributes): void {
    if (this.recordsContent) this.#span.addEvent(CONTENT_EVENT, { ...inputContent(this.#exchange.body), ...output() })
  }

  fail(error: unknown): void {
    const { status, code } = errorCode(error, this.#exchange)
    this.end(status, code)
  }

  /** A stream that had answered `answeredStatus` ended with `error`: the status stays what the client got. */
  streamFailed(answeredStatus: number, error: unknown): void {
    const { status, code } = errorCode(error, this.#exchange)
    this.end(answeredStatus, code, status >= 500)
  }
}

function traceJson(request: RequestSpan, exchange: Exchange, answer: Extract<Answer, { kind: 'json' }>): Answer {
  const attributes = genAiResponseAttributes(answer.body)
  // The provider's usage where the account stage (inside, done by now) has none; `end` sets the account stage's.
  if (exchange.facts.usage === null) genAiUsageAttributes(answer.usage, attributes)
  request.set(attributes)
  request.content(() => outputContent(answer.body))
  request.end(answer.status, null)
  return answer
}

function traceStream(request: RequestSpan, exchange: Exchange, answer: StreamAnswer): StreamAnswer {
  let first = true
  const text = request.recordsContent ? new StreamedText() : null
  return observeStream(answer, {
    onBatch(batch) {
      if (!first && text === null) return batch
      const events = eventChunks(batch)
      if (first && events.length > 0) {
        first = false
        request.set(genAiChunkAttributes(chunkValue(events[0])))
      }
      if (text !== null) for (const chunk of events) text.add(chunkValue(chunk))
      return batch
    },
    onEnd({ completed, error }) {
      const result = answer.result()
      const attributes = genAiFinishReasons(result?.finishReason ?? exchange.facts.finishReason)
      if (exchange.facts.usage === null && result !== null) genAiUsageAttributes(result.usage, attributes)
      request.set(attributes)
      if (text !== null) request.content(() => text.attributes(result?.finishReason.raw ?? result?.finishReason.unified ?? null))
      if (error !== null) request.streamFailed(answer.status, error)
      else request.end(answer.status, completed ? null : 'request_cancelled')
    },
  })
}

function traceRelay(request: RequestSpan, answer: Extract<Answer, { kind: 'relay' }>): Answer {
  const source = answer.body
  async function* traced(): AsyncGenerator<Uint8Array> {
    let failure: unknown = null
    try {
      for await (const chunk of source) yield chunk
    } catch (error) {
      failure = error
      throw error
    } finally {
      if (failure !== null) request.streamFailed(answer.status, failure)
      else request.end(answer.status, null)
    }
  }
  return { ...answer, body: traced() }
}

function traced(request: RequestSpan, exchange: Exchange, answer: Answer): Answer {
  switch (answer.kind) {
    case 'json':
      return traceJson(request, exchange, answer)
    case 'stream':
      return traceStream(request, exchange, answer)
    case 'relay':
      return traceRelay(request, answer)
    case 'session':
      void answer.ended.then(
        () => request.end(answer.status, null),
        (error: unknown) => request.fail(error),
      )
      return answer
  }
}

export function traceStage(options: TraceStageOptions = {}): StageFactory {
  const tracer = trace.getTracer(TRACER_NAME)
  return {
    name: 'trace',
    forOperation(operation: Operation): Stage {
      const operationName = genAiOperationName(operation.name)
      return {
        name: 'trace',
        async run(exchange, next) {
          const ids = exchange.context.trace
          const parent = callerParent(exchange.headers, ids)
          // A root the sampler drops: no span to make, only the decision to pass on.
          const unsampled = unsampledRootContext(parent)
          if (unsampled !== null) return context.with(unsampled, next)
          const model = bodyModel(exchange.body)
          const span = withRootTraceId(parent.rootTraceId, () =>
            tracer.startSpan(genAiSpanName(operationName, model), { kind: SpanKind.SERVER }, parent.context),
          )
          const active = trace.setSpan(parent.context, span)
          // Unsampled: only the context travels (the provider learns the decision); nothing is read or set.
          if (!span.isRecording()) return context.with(active, next)
          const attributes = genAiRequestAttributes(exchange.body, { 'gen_ai.operation.name': operationName, 'gatehouse.route': operation.name })
          // The gateway trace id, where it is not the span's own (a caller's id in another form, hashed or stripped).
          if (ids.traceId !== span.spanContext().traceId) attributes['gatehouse.trace_id'] = ids.traceId
          if (ids.spanName !== null) attributes['gatehouse.caller.span_name'] = ids.spanName
          if (ids.spanId !== null) attributes['gatehouse.caller.span_id'] = ids.spanId
          if (ids.parentSpanId !== null) attributes['gatehouse.caller.parent_span_id'] = ids.parentSpanId
          span.setAttributes(attributes)
          let answer: Answer
          const request = new RequestSpan(span, exchange, operationName, options)
          try {
            answer = await context.with(active, next)
          } catch (error) {
            request.fail(error)
            throw error
          }
          return traced(request, exchange, answer)
        },
      }
    },
  }
}
