/**
 * The account stage: one usage record per exchange, on every route. It runs outside everything
 * that can fail or answer (limits, guardrails, cache, dispatch), so it sees every outcome:
 *
 *  - a JSON answer: recorded at once;
 *  - a stream: recorded in `onEnd`, however it ended (finished, failed, or the client left: the
 *    tokens are what was produced up to then);
 *  - a relayed body or a realtime session: recorded when the bytes or the session end (a session
 *    with the provider's usage summed over it);
 *  - a thrown error: recorded with its status and code, then rethrown.
 *
 * Usage is the provider's own (facts.usage, or the answer's); where there is none the stage counts
 * tokens itself and marks the record `estimated`. Cost comes from pricing/ with the snapshot's
 * overrides. The record goes to a `UsageSink`, which returns at once: serialising, redacting and
 * shipping happen off the request path, so the stage costs a few object writes per request.
 */
import { GatewayError } from '../../core/errors.ts'
import { costOf } from '../../pricing/index.ts'
import type { Usage } from '../../providers/canonical.ts'
import type { UsageDraft, UsageSink } from '../../usage/draft.ts'
import { estimateUsage } from '../../usage/estimate.ts'
import { chunkValue } from '../../core/raw-json.ts'
import { eventChunks } from '../../core/relayed-events.ts'
import { exchangePrice } from './exchange-price.ts'
import { observeStream, type Answer, type Exchange, type Operation, type Stage, type StageFactory } from '../stage.ts'

export interface AccountStageOptions {
  sink: UsageSink
  now?: () => number
}

/** Chunks kept per stream for estimating or logging its output; a longer stream keeps its first ones. */
const MAX_KEPT_BATCHES = 4096

function bodyModel(body: unknown): string | null {
  const model = (body as { model?: unknown } | null)?.model
  return typeof model === 'string' ? model : null
}

function noUsage(usage: Usage | null | undefined): boolean {
  return !usage || (usage.inputTokens === 0 && usage.outputTokens === 0)
}

class Account {
  readonly draft: UsageDraft
  readonly #exchange: Exchange
  readonly #now: () => number
  readonly #sink: UsageSink

  constructor(exchange: Exchange, operation: Operation, now: () => number, sink: UsageSink) {
    this.#exchange = exchange
    this.#now = now
    this.#sink = sink
    const { context } = exchange
    const workspace = context.workspaceId === null ? undefined : context.runtime.workspaces.get(context.workspaceId)
    const logLevel = workspace?.logLevel ?? 'full'
    const principal = context.principal
    const user = principal.userId ?? (typeof context.metadata._user === 'string' ? context.metadata._user : null)
    this.draft = {
      id: exchange.facts.requestId,
      createdAtMs: context.startedAtMs,
      organizationId: context.runtime.organizationId,
      workspaceId: context.workspaceId,
      apiKeyId: principal.key?.record.id ?? null,
      userId: user,
      traceId: context.trace.traceId,
      spanId: context.trace.spanId,
      parentSpanId: context.trace.parentSpanId,
      spanName: context.trace.spanName,
      providerId: null,
      providerSlug: null,
      providerKind: null,
      integrationId: null,
      configId: null,
      deploymentId: context.runtime.deploymentId,
      promptId: null,
      promptVersionId: null,
      mcpServerId: null,
      mcpToolName: null,
      agentServerId: null,
      agentMethod: null,
      route: operation.name,
      endpointType: operation.endpointType,
      modelRequested: null,
      modelServed: null,
      attempts: 0,
      retries: 0,
      targetPath: null,
      statusCode: 0,
      errorCode: null,
      cacheStatus: null,
      streamed: false,
      aborted: false,
      finishReason: null,
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
      reasoningTokens: 0,
      audioInputTokens: 0,
      cachedAudioInputTokens: 0,
      audioOutputTokens: 0,
      audioSeconds: null,
      inputCharacters: 0,
      images: 0,
      imageInputTokens: 0,
      estimated: false,
      costUsd: null,
      cacheSavedCostUsd: null,
      pricingVersion: null,
      latencyMs: 0,
      ttftMs: null,
      metadata: logLevel === 'off' ? null : context.metadata,
      logLevel,
      requestBody: null,
      responseBody: null,
      annotations: null,
    }
  }

  /** Fills the record from the facts and the usage, prices it and hands it to the sink. */
  /** `responseBody` may be a function: it is called only if the body is kept (when the batch is serialised). */
  finish(status: number, errorCode: string | null, usage: Usage | null, estimate: (() => Usage) | null, responseBody: unknown): void {
    const { facts, context } = this.#exchange
    const draft = this.draft
    const endedAtMs = facts.endedAtMs ?? this.#now()
    const provider = facts.provider
    if (provider) {
      draft.providerId = provider.record.id
      draft.providerSlug = provider.record.slug
      draft.providerKind = provider.record.kind
      draft.integrationId = provider.record.integrationId
    }
    draft.configId = facts.configId
    draft.promptId = facts.promptId
    draft.promptVersionId = facts.promptVersionId
    if (facts.mcp !== null) {
      draft.mcpServerId = facts.mcp.serverId
      draft.mcpToolName = facts.mcp.toolName
    }
    if (facts.agent !== null) {
      draft.agentServerId = facts.agent.serverId
      draft.agentMethod = facts.agent.method
    }
    draft.modelRequested = facts.requestedModel ?? bodyModel(this.#exchange.body)
    draft.modelServed = facts.servedModel ?? (typeof responseBody === 'function' ? null : bodyModel(responseBody)) ?? facts.upstreamModel
    draft.attempts = facts.attempts
    draft.retries = facts.retries
    draft.targetPath = facts.targetPath
    draft.statusCode = facts.status ?? status
    draft.errorCode = facts.errorCode ?? errorCode
    draft.cacheStatus = facts.cacheStatus
    draft.finishReason = facts.finishReason?.unified ?? draft.finishReason
    draft.latencyMs = Math.max(0, endedAtMs - context.startedAtMs)
    if (facts.firstByteAtMs !== null) draft.ttftMs = Math.max(0, facts.firstByteAtMs - context.startedAtMs)
    else if (draft.ttftMs === null && !draft.streamed) draft.ttftMs = draft.latencyMs

    let counted = facts.usage ?? usage
    let estimated = facts.usageEstimated
    if (noUsage(counted) && estimate !== null) {
      counted = estimate()
      estimated = counted.inputTokens > 0 || counted.outputTokens > 0
      if (estimated) {
        // Later readers of the facts (logs, headers) see the same numbers as the record.
        facts.usage = counted
        facts.usageEstimated = true
      }
    }
    if (counted) {
      draft.inputTokens = counted.inputTokens
      draft.outputTokens = counted.outputTokens
      draft.cachedInputTokens = counted.cachedInputTokens ?? 0
      draft.cacheWriteInputTokens = counted.cacheWriteInputTokens ?? 0
      draft.reasoningTokens = counted.reasoningTokens ?? 0
      draft.audioInputTokens = counted.audioInputTokens ?? 0
      draft.cachedAudioInputTokens = counted.cachedAudioInputTokens ?? 0
      draft.audioOutputTokens = counted.audioOutputTokens ?? 0
      draft.audioSeconds = counted.audioSeconds ?? null
      draft.inputCharacters = counted.inputCharacters ?? 0
      draft.images = counted.images ?? 0
      draft.imageInputTokens = counted.imageInputTokens ?? 0
    }
    draft.estimated = estimated
    if (facts.unmetered !== null) facts.annotations.unmetered = facts.unmetered
    // Nothing counted, nothing spent; a priced model below may still name its pricing version.
    if (noUsage(counted) && !counted?.audioSeconds && !counted?.inputCharacters && !counted?.images) draft.costUsd = 0
    this.#price(counted)
    if (draft.logLevel === 'full') {
      draft.requestBody = this.#exchange.body
      draft.responseBody = responseBody ?? null
    }
    const annotations = facts.annotations
    const identity = context.principal.kind === 'api_key' ? null : { principal: { kind: context.principal.kind, id: context.principal.id, ...context.principal.attributes } }
    draft.annotations = facts.hookResults.length > 0 || identity ? { ...annotations, ...identity, ...(facts.hookResults.length > 0 ? { hookResults: facts.hookResults } : {}) } : annotations
    this.#sink.offer(draft)
  }

  #price(usage: Usage | null): void {
    const facts = this.#exchange.facts
    const draft = this.draft
    // A cache hit was answered without the provider (none is set on the facts then): nothing was
    // spent, and what the stored answer first cost was saved.
    if (draft.cacheStatus === 'HIT' || draft.cacheStatus === 'SEMANTIC HIT') {
      draft.costUsd = 0
      draft.cacheSavedCostUsd = facts.cacheSavedCostUsd
      facts.annotations.costUsd = 0
      return
    }
    const price = exchangePrice(this.#exchange, draft.modelServed)
    if (price === null) return
    draft.pricingVersion = price.version
    if (facts.unmetered !== null) {
      // Part of what the provider bills is unknown: an unknown cost, not an understated one.
      draft.costUsd = null
      return
    }
    draft.costUsd = usage === null ? 0 : costOf(usage, price)
    facts.annotations.costUsd = draft.costUsd
  }
}

/** The status and code a failed exchange answers with (the measure stage reads it the same way). */
export function statusOf(error: unknown, exchange: Exchange): { status: number; code: string } {
  // A client that left is what happened, whatever error the cut upstream call then raised.
  if (exchange.context.signal.aborted) return { status: 499, code: 'request_cancelled' }
  if (error instanceof GatewayError) return { status: error.status, code: error.code }
  return { status: 500, code: 'internal_error' }
}

function accountStream(account: Account, exchange: Exchange, answer: Extract<Answer, { kind: 'stream' }>, now: () => number): Answer {
  account.draft.streamed = true
  const kept: Array<readonly unknown[]> = []
  let first = true
  return observeStream(answer, {
    onBatch(batch) {
      if (first) {
        first = false
        if (exchange.facts.firstByteAtMs === null) account.draft.ttftMs = Math.max(0, now() - exchange.context.startedAtMs)
      }
      if (kept.length < MAX_KEPT_BATCHES) kept.push(batch)
      return batch
    },
    onEnd({ completed, error }) {
      const result = answer.result()
      if (result) account.draft.finishReason = result.finishReason.unified
      // The client left: either the writer stopped pulling, or the upstream call was cut by the same signal.
      account.draft.aborted = !completed && (error === null || exchange.context.signal.aborted)
      const failure = error === null ? null : statusOf(error, exchange)
      const errorCode = account.draft.aborted ? 'request_cancelled' : (failure?.code ?? null)
      // Relayed (unparsed) chunks are parsed only if they are needed: to count, or to be logged (off the request path).
      const chunks = (): unknown[] => eventChunks(kept.flat()).map(chunkValue)
      account.finish(answer.status, errorCode, result?.usage ?? null, () => estimateUsage(exchange.body, chunks(), true), chunks)
    },
  })
}

function accountRelay(account: Account, exchange: Exchange, answer: Extract<Answer, { kind: 'relay' }>): Answer {
  account.draft.streamed = answer.eventStream
  const source = answer.body
  async function* counted(): AsyncGenerator<Uint8Array> {
    let completed = false
    let failure: unknown = null
    try {
      for await (const chunk of source) yield chunk
      completed = true
    } catch (error) {
      failure = error
      throw error
    } finally {
      account.draft.aborted = !completed && (failure === null || exchange.context.signal.aborted)
      // A failure mid-relay says what ended it (a guardrail's deny of a Responses stream, a cut upstream).
      account.finish(answer.status, account.draft.aborted ? 'request_cancelled' : failure === null ? null : failure instanceof GatewayError ? failure.code : 'upstream_error', null, null, null)
    }
  }
  return { ...answer, body: counted() }
}

export function accountStage(options: AccountStageOptions): StageFactory {
  const now = options.now ?? Date.now
  return {
    name: 'account',
    forOperation(operation: Operation): Stage {
      return {
        name: 'account',
        async run(exchange, next) {
          const account = new Account(exchange, operation, now, options.sink)
          let answer: Answer
          try {
            answer = await next()
          } catch (error) {
            const { status, code } = statusOf(error, exchange)
            account.finish(status, code, null, null, null)
            throw error
          }
          switch (answer.kind) {
            case 'json': {
              const body = answer.body
              const estimate = operation.textual ? () => estimateUsage(exchange.body, body) : null
              account.finish(answer.status, null, answer.usage, estimate, body)
              return answer
            }
            case 'stream':
              return accountStream(account, exchange, answer, now)
            case 'relay':
              return accountRelay(account, exchange, answer)
            case 'session':
              // The provider's usage over the whole session (realtime: its response.done events).
              answer.ended.then(
                () => account.finish(101, null, answer.usage?.() ?? null, null, null),
                () => account.finish(101, 'upstream_error', answer.usage?.() ?? null, null, null),
              )
              return answer
          }
        },
      }
    },
  }
}
