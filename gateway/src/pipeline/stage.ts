/**
 * The request pipeline's contract. Every data-plane route (chat, completions, embeddings, messages,
 * responses, each passthrough group, realtime set-up) runs one composition of stages:
 *
 *   authenticate → resolve route → account → limits → guardrails (before) → cache
 *     → guardrails (after) → dispatch (strategy, retries, fallbacks)
 *
 * A stage is onion-shaped: it runs before `next()` (may refuse by throwing a `GatewayError`, or
 * answer itself, as a cache hit does), awaits the answer, and may look at it, change it or wrap
 * its stream on the way back. A stage a route does not need is not composed into it: a stage
 * factory looks at the route's `Operation` once, at registration, and returns null to stay out.
 *
 * Streams are handed up as batches of chunks (the chunks that arrived together from the provider).
 * A stage that must see them wraps `answer.batches` with `observeStream` (or `stepBatches`): it
 * can hold chunks back, transform them, or end the stream by throwing, which the writer turns into
 * a proper error event. What needs the end of a stream (usage, settling a reservation, a record)
 * goes into `onEnd`, which runs exactly once however the stream ends: finished, failed, or the
 * client went away.
 */
import { randomUUID } from 'node:crypto'
import type { RequestHeaders } from '../core/headers.ts'
import type { FinishReason, Usage } from '../providers/canonical.ts'
import type { PlanNode, ProviderRef } from '../routing/plan.ts'
import type { AttemptedLeaf } from '../routing/run.ts'
import type { SelectedConfig } from '../routing/select.ts'
import type { CompiledProvider, RouteTarget } from '../routing/target.ts'
import type { RequestContext } from './context.ts'
import type { EndpointType, HookResult } from '../core/exchange-types.ts'
import { stepBatches } from './batches.ts'

// Defined below the feature folders (guardrails, limits, usage read them); part of this contract.
export type { EndpointType, HookResult } from '../core/exchange-types.ts'

/** What a route declares about itself; stage factories decide from it whether they take part. */
export interface Operation {
  /** Stable name: `chat`, `completions`, `embeddings`, `messages`, `passthrough:<group>`, `realtime`. */
  readonly name: string
  readonly endpointType: EndpointType
  /** The client-facing wire format: error envelope and stream framing. */
  readonly format: 'openai' | 'anthropic'
  /** Carries model text both ways (chat, completions, messages, responses): guardrails and caches read it. */
  readonly textual: boolean
  /** A JSON body whose answer depends only on the body: the response cache may serve it. */
  readonly cacheable: boolean
  /**
   * Routes whose answers are relayed unparsed and billed (audio, images): the most a request can
   * use, as usage to price, for the limits stage to reserve before the call; null when the body
   * does not say (an upload). Without it, the limits stage bounds a textual request's tokens.
   */
  readonly worstCase?: (body: Record<string, unknown> | null) => Usage | null
}

/** Where an exchange goes: one target named by headers or the model, or a config's plan. */
export type RouteDecision =
  | { readonly kind: 'direct'; readonly target: RouteTarget }
  | { readonly kind: 'config'; readonly plan: PlanNode<ProviderRef>; readonly configId: string | null; readonly config: SelectedConfig }

export type CacheStatus = 'HIT' | 'SEMANTIC HIT' | 'MISS' | 'SEMANTIC MISS' | 'REFRESH' | 'DISABLED'

/**
 * Facts gathered while the exchange runs, read by the account and log stages (and headers). Stages
 * fill what they own; nothing here is read back to decide routing.
 */
export interface ExchangeFacts {
  /** This request's id: the usage record's `id` and the access log's `requestId`. */
  readonly requestId: string
  /** The model the client asked for, as written (`@slug/model` included). */
  requestedModel: string | null
  /** The provider that answered, or was tried last. */
  provider: CompiledProvider | null
  /** The model name sent to that provider. */
  upstreamModel: string | null
  /** The model the provider said it served, when it said. */
  servedModel: string | null
  /** `config.targets[0]...` under a config; null when routed directly. */
  targetPath: string | null
  configId: string | null
  /** The saved prompt and version the request rendered (prompt completions). */
  promptId: string | null
  promptVersionId: string | null
  /** Upstream attempts over the whole exchange (retries and fallbacks included). */
  attempts: number
  /** Retries at the target that answered. */
  retries: number
  /** Every upstream attempt in order (dispatch fills it): metrics count attempts, retries and fallbacks from it. */
  readonly upstreamAttempts: UpstreamAttemptFact[]
  /** The status the client got, once known. */
  status: number | null
  errorCode: string | null
  cacheStatus: CacheStatus | null
  /** A cache hit: USD the stored answer cost when it was first served (what the hit saved); null when unknown. */
  cacheSavedCostUsd: number | null
  usage: Usage | null
  /** Usage counted by Gatehouse (the provider gave none). */
  usageEstimated: boolean
  /** What of the billed usage neither the provider reported nor Gatehouse could count, in words: the cost is then unknown. */
  unmetered: string | null
  finishReason: FinishReason | null
  streamed: boolean
  /** Milliseconds since the epoch: first byte (or first stream chunk) reached the client; end of the answer. */
  firstByteAtMs: number | null
  endedAtMs: number | null
  hookResults: HookResult[]
  /** MCP routes: the server called and, for `tools/call`, the tool. */
  mcp: { serverId: string; method: string | null; toolName: string | null } | null
  /** Agent (A2A) routes: the agent server called and the JSON-RPC method. */
  agent: { serverId: string; method: string | null } | null
  /** Stage-owned extras that belong on the usage record (policy ids that matched, cost...). */
  readonly annotations: Record<string, unknown>
}

/** One upstream attempt: at which target, how it ended (the provider's status; null: cancelled), how long until it answered or failed. */
export interface UpstreamAttemptFact {
  readonly provider: CompiledProvider
  /** The breaker's key: the provider, or the provider at a custom host; a change between attempts is a fallback. */
  readonly targetKey: string
  readonly status: number | null
  readonly durationMs: number
}

export function newFacts(): ExchangeFacts {
  return {
    requestId: randomUUID(),
    requestedModel: null,
    provider: null,
    upstreamModel: null,
    servedModel: null,
    targetPath: null,
    configId: null,
    promptId: null,
    promptVersionId: null,
    attempts: 0,
    retries: 0,
    upstreamAttempts: [],
    status: null,
    errorCode: null,
    cacheStatus: null,
    cacheSavedCostUsd: null,
    usage: null,
    usageEstimated: false,
    unmetered: null,
    finishReason: null,
    streamed: false,
    firstByteAtMs: null,
    endedAtMs: null,
    hookResults: [],
    mcp: null,
    agent: null,
    annotations: {},
  }
}

/** A JSON answer, already in the client's format. */
export interface JsonAnswer {
  readonly kind: 'json'
  status: number
  body: unknown
  readonly usage: Usage | null
}

/**
 * A streamed answer in the client's format: batches of chunks (OpenAI chunk objects, or Anthropic
 * `{event, data}` objects), written as SSE by the route's writer.
 */
export interface StreamAnswer {
  readonly kind: 'stream'
  status: number
  batches: AsyncIterable<readonly unknown[]>
  /** Usage and finish reason, known once `batches` is exhausted. */
  readonly result: () => { usage: Usage; finishReason: FinishReason } | null
}

/** Bytes relayed as the provider sent them (passthrough groups): files, audio, their own event streams. */
export interface RelayAnswer {
  readonly kind: 'relay'
  status: number
  readonly headers: Record<string, string>
  readonly body: AsyncIterable<Uint8Array>
  /** An event stream: relayed event for event, ended with an error event on failure. */
  readonly eventStream: boolean
}

/** A realtime session: the upstream socket is open, frames flow both ways until either side closes. */
export interface SessionAnswer {
  readonly kind: 'session'
  status: 101
  /** Resolves when the session ended (either side closed). */
  readonly ended: Promise<void>
  /** The provider's usage over the session, read once it ended; null when it reported none. */
  readonly usage?: () => Usage | null
}

export type Answer = JsonAnswer | StreamAnswer | RelayAnswer | SessionAnswer

/** One request's state as it runs through the stages. */
export interface Exchange {
  /**
   * The route's operation. Fixed for the exchange, except on a branching route (prompt
   * completions), where authentication picks the branch and its operation replaces this once,
   * before any stage that reads it runs (pipeline/build.ts `buildBranchingPipeline`).
   */
  operation: Operation
  readonly context: RequestContext
  readonly headers: RequestHeaders
  /** Path and query as the client sent them, and the route's path parameters. */
  readonly url: string
  readonly params: Readonly<Record<string, string | undefined>>
  /** The body as it was parsed, whatever its shape (routes check it). */
  readonly rawBody: unknown
  /** The JSON object body; null for GET routes, non-object bodies and uploads. Stages may replace it. */
  body: Record<string, unknown> | null
  /** A streamed (multipart) upload, relayed untouched; null otherwise. */
  readonly upload: AsyncIterable<Uint8Array> | null
  /** No stage of this route reads stream chunks: streams may be relayed unparsed (see `Stage.readsStreamChunks`). */
  readonly relayStreams: boolean
  /** Set by the resolve-route stage. */
  route: RouteDecision | null
  readonly facts: ExchangeFacts
  /** Headers every answer carries (success and error): stages add theirs (rate limits, cache status). */
  readonly responseHeaders: Record<string, string>
  /**
   * Wrappers around each attempt at one target of a config's plan, added by stages that depend on
   * the target: limits declared on a provider or integration, a target's own cache (which may
   * answer instead). Added in stage order, so the first added is outermost, as the stages are.
   * Direct routes know their target before the stages run and never call them.
   */
  attemptWrappers?: AttemptWrapper[]
}

/** One attempt at one target of a config's plan: where it goes, the config node it came from, the body it sends. */
export interface TargetAttemptInfo {
  readonly target: RouteTarget
  readonly leaf: AttemptedLeaf
  readonly body: Record<string, unknown> | null
}

/** Runs (or refuses, or answers for) one attempt; `attempt` makes it. */
export type AttemptWrapper = (info: TargetAttemptInfo, attempt: () => Promise<Answer>) => Promise<Answer>

/** One attempt through the exchange's attempt wrappers (the first added is outermost). */
export function wrapAttempt(exchange: Exchange, info: TargetAttemptInfo, attempt: () => Promise<Answer>): Promise<Answer> {
  const wrappers = exchange.attemptWrappers
  if (!wrappers || wrappers.length === 0) return attempt()
  return wrappers.reduceRight<() => Promise<Answer>>((inner, wrapper) => () => wrapper(info, inner), attempt)()
}

export type Next = () => Promise<Answer>

export interface Stage {
  readonly name: string
  /**
   * The stage reads the content of stream chunks (guardrails, caches). Without any such stage in a
   * route's pipeline, OpenAI-shaped streams are relayed as the provider's own JSON text (chunks are
   * `RawJson`; `chunkValue()` parses one), parsing only the events accounting needs.
   */
  readonly readsStreamChunks?: boolean
  run(exchange: Exchange, next: Next): Promise<Answer>
}

/** Decides once per route whether a stage takes part; null keeps it out of that route's pipeline. */
export interface StageFactory {
  readonly name: string
  forOperation(operation: Operation): Stage | null
}

export type Terminal = (exchange: Exchange) => Promise<Answer>

export interface Pipeline {
  readonly run: Terminal
  /** Whether streams may be relayed unparsed: no stage reads chunks. */
  readonly relayStreams: boolean
}

/** Builds one route's pipeline: the stages that apply to it, around its terminal (dispatch). */
export function composePipeline(operation: Operation, factories: readonly StageFactory[], terminal: Terminal): Pipeline {
  const stages = factories.map((factory) => factory.forOperation(operation)).filter((stage): stage is Stage => stage !== null)
  return { run: compose(stages, terminal), relayStreams: !stages.some((stage) => stage.readsStreamChunks === true) }
}

function compose(stages: readonly Stage[], terminal: Terminal): Terminal {
  let run: Terminal = settled(terminal)
  for (let index = stages.length - 1; index >= 0; index--) {
    const stage = stages[index]!
    const inner = run
    run = settled((exchange) => stage.run(exchange, () => inner(exchange)))
  }
  return run
}

/** A step that throws synchronously still answers with a rejected promise, so every caller can await or `.then` it alike. */
function settled(step: Terminal): Terminal {
  return (exchange) => {
    try {
      return step(exchange)
    } catch (error) {
      return Promise.reject(error)
    }
  }
}

/** The names of the stages a route's pipeline is built from, in order (for tests and `describe`). */
export function stageNames(operation: Operation, factories: readonly StageFactory[]): string[] {
  return factories.filter((factory) => factory.forOperation(operation) !== null).map((factory) => factory.name)
}

export interface StreamObserver {
  /** Sees each batch before it is written; returns what to write (may hold back or transform). Throwing ends the stream with an error event. */
  onBatch?(batch: readonly unknown[]): readonly unknown[]
  /** Runs once, however the stream ended: `error` is null when it finished, the failure otherwise; `completed` false when the client left early. */
  onEnd?(outcome: { completed: boolean; error: unknown }): void
  /** Chunks to add at the end of a stream that finished (released hold-back). */
  flush?(): readonly unknown[]
}

/** Wraps a stream answer's batches; the answer keeps its status and result. */
export function observeStream(answer: StreamAnswer, observer: StreamObserver): StreamAnswer {
  answer.batches = stepBatches<unknown, unknown>(answer.batches, {
    ...(observer.onBatch && { map: (batch) => observer.onBatch!(batch) }),
    ...(observer.flush && { flush: () => observer.flush!() }),
    ...(observer.onEnd && { end: (outcome) => observer.onEnd!(outcome) }),
  })
  return answer
}
