/**
 * What a route does with a request that runs under a config, whatever its operation: bind the plan
 * to the request, run it with retries, fallbacks and breakers, apply each target's
 * `override_params` and `request_timeout`, and say in the response headers what happened. The
 * route supplies only how to attempt one target with one body.
 */
import type { JsonOperation, TargetContext, Translated } from '../providers/adapter.ts'
import type { RequestHeaders } from '../core/headers.ts'
import { bindPlan, type BoundTarget } from './bind.ts'
import type { ProviderLookup } from './target.ts'
import type { TargetHealthRegistry } from './target-health.ts'
import { PlanExecutor, type ExecutionTrace } from './execute.ts'
import type { PlanNode, ProviderRef } from './plan.ts'
import type { CacheConfig } from '../snapshot/config-schema.ts'
import { systemClock } from './retry.ts'
import { withRequestTimeout } from './timeout.ts'

export type Params = Readonly<Record<string, unknown>> & { readonly model?: unknown }

/** The config node a target was planned from, as attempts may need it (its path, its cache). */
export interface AttemptedLeaf {
  readonly path: string
  readonly cache: CacheConfig | null
}

/** Attempts one target with the body it gets (the request's, with its overrides applied). */
export type TargetAttempt<Body extends Params, Result> = (target: BoundTarget, body: Body, signal: AbortSignal, leaf: AttemptedLeaf) => Promise<Result>

/** What routing needs to know of the request it runs for. */
export interface RouteRequest {
  readonly providers: ProviderLookup
  readonly workspaceId: string | null
  readonly metadata: Readonly<Record<string, unknown>>
  /** The client's connection: aborting it stops every wait and attempt. */
  readonly signal: AbortSignal
}

export class ConfiguredRoute<Body extends Params, Result> {
  readonly #executor: PlanExecutor<BoundTarget, Result>
  readonly #request: RouteRequest

  constructor(health: TargetHealthRegistry, request: RouteRequest, body: Body, attempt: TargetAttempt<Body, Result>) {
    this.#request = request
    const context = request
    this.#executor = new PlanExecutor<BoundTarget, Result>(
      (leaf, signal) => {
        const { overrideParams, requestTimeoutMs } = leaf.settings
        const payload = overrideParams === null ? body : ({ ...body, ...overrideParams } as Body)
        const send = (attemptSignal: AbortSignal): Promise<Result> => attempt(leaf.target, payload, attemptSignal, leaf)
        return requestTimeoutMs === null ? send(signal) : withRequestTimeout(requestTimeoutMs, signal, send)
      },
      {
        health,
        clock: systemClock,
        random: Math.random,
        signal: context.signal,
        conditions: { metadata: context.metadata, params: body },
      },
    )
  }

  /** Binds the plan (a 4xx naming the field when it cannot be) and runs it. */
  run(plan: PlanNode<ProviderRef>, headers: RequestHeaders, model: string | undefined): Promise<Result> {
    const bound = bindPlan(plan, { providers: this.#request.providers, workspaceId: this.#request.workspaceId, model, headers })
    return this.#executor.run(bound)
  }

  /** The target attempted last (the one that answered, on success), its retries, and the attempts made. */
  get trace(): Readonly<ExecutionTrace<BoundTarget>> {
    return this.#executor.trace
  }

  /** The target that answered (or failed last) and its retries; for success and error answers alike. */
  headers(): Record<string, string> {
    const { leaf, retries } = this.#executor.trace
    if (leaf === null) return {}
    return {
      'x-gateway-provider': leaf.target.route.provider.record.slug,
      'x-gateway-target-path': leaf.path,
      'x-gateway-retry-attempt-count': String(retries),
    }
  }
}

/** The operation with the client headers a config forwards, under the adapter's own (which win). */
export function withForwardedHeaders<Operation extends JsonOperation<never, unknown>>(operation: Operation, forwarded: Readonly<Record<string, string>> | null): Operation {
  if (forwarded === null) return operation
  const toUpstream = (request: never, target: TargetContext): Translated => {
    const translated = operation.toUpstream(request, target)
    return { ...translated, upstream: { ...translated.upstream, headers: { ...forwarded, ...translated.upstream.headers } } }
  }
  // A prototype link keeps every other member (stream transform, framing) exactly as the adapter has it.
  return Object.assign(Object.create(operation) as Operation, { toUpstream })
}
