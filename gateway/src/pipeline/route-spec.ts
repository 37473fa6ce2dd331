/**
 * What a data-plane route declares, and all it declares: its operation, how to read the model and
 * check the body, and how to attempt one target. Everything else (authentication, routing,
 * policies, retries and fallbacks, accounting) is the pipeline's, the same for every route.
 */
import type { RequestHeaders } from '../core/headers.ts'
import type { BoundTarget } from '../routing/bind.ts'
import type { Answer, Exchange, Operation } from './stage.ts'

/** One attempt at one target, with the body it gets (the request's, with a config's overrides applied). */
export type TargetAttempt = (exchange: Exchange, target: BoundTarget, body: Record<string, unknown> | null, signal: AbortSignal) => Promise<Answer>

export interface RouteSpec {
  readonly operation: Operation
  /** The model the client asked for, if the route has one (`@slug/model` included). */
  model(exchange: Exchange): string | undefined
  /**
   * Checks the request before it is routed (a 400 naming the parameter). Also runs on a config's
   * overridden body, which must meet the same limits before it goes out.
   */
  validate?(body: Record<string, unknown> | null, exchange: Exchange): void
  /** The Gatehouse key, when the route accepts it somewhere other than the usual headers (a WebSocket subprotocol). */
  presentedKey?(headers: RequestHeaders, exchange: Exchange): string | undefined
  readonly attempt: TargetAttempt
  /**
   * The route never goes to a model provider (MCP servers): no config or provider is resolved, and
   * `answerUnrouted` answers every request.
   */
  readonly providerless?: boolean
  /**
   * Answers a request that names no provider and runs under no config, for routes that mean
   * something then (GET /v1/models lists what the caller can reach). Without it, such a request is
   * a 400 naming the ways to choose a provider.
   */
  answerUnrouted?(exchange: Exchange): Promise<Answer>
}
