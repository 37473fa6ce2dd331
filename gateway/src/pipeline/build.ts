/**
 * Composes a route's pipeline, in the one order every route shares:
 *
 *   (trace → observe → measure →) authenticate → account → validate → resolve route → limits
 *     → guardrails (before) → cache → guardrails (after) → dispatch
 *
 * The account stage sits right after authentication so that every exchange with a known caller is
 * recorded, refusals by validation, limits or guardrails included; it sees the answer last on the
 * way back, after output guardrails and the cache had their say. Cache sits outside the output
 * guardrails so a denied answer is never stored. Feature stages (account, limits, guardrails,
 * cache) are optional: a gateway without them, or a route they do not apply to, pays nothing.
 */
import { GatewayError } from '../core/errors.ts'
import type { DataPlaneJwt } from './authenticate-jwt.ts'
import type { RuntimeHolder } from '../runtime/holder.ts'
import type { SidecarAuth } from './authenticate-sidecar.ts'
import type { RouteSpec } from './route-spec.ts'
import { composePipeline, type Exchange, type Pipeline, type Stage, type StageFactory, type Terminal } from './stage.ts'
import { authenticateStage } from './stages/authenticate.ts'
import { dispatchTerminal } from './stages/dispatch.ts'
import { resolveRouteStage } from './stages/resolve-route.ts'
import { validateStage } from './stages/validate.ts'

/** The optional stages a gateway runs with, each deciding per route whether it takes part. */
export interface PipelineFeatures {
  /** Outermost of all: the request's server span (pipeline/stages/trace.ts), when tracing is on. */
  readonly trace?: StageFactory
  /** Outermost: spans and access logs around everything, authentication failures included. */
  readonly observe?: StageFactory
  /** Right inside observe: metrics and the access log from the exchange's facts, at its end (stages/measure.ts). */
  readonly measure?: StageFactory
  readonly account?: StageFactory
  readonly limits?: StageFactory
  readonly guardrailsBefore?: StageFactory
  readonly cache?: StageFactory
  readonly guardrailsAfter?: StageFactory
}

export interface PipelineDeps {
  holder: RuntimeHolder
  pepper: string
  now: () => number
  /** Data-plane JWT verification; absent: API keys only. */
  jwt?: DataPlaneJwt | null
  features?: PipelineFeatures
  /** Sidecar mode: calls need no key and run as the pod's identity. */
  sidecar?: SidecarAuth
}

function asFactory(stage: Stage | null, name: string): StageFactory {
  return { name, forOperation: () => stage }
}

function present(factory: StageFactory | undefined): StageFactory[] {
  return factory ? [factory] : []
}

/** The stages up to authentication: they run before anything of the request's content is known. */
function frontStageFactories(spec: RouteSpec, deps: PipelineDeps): StageFactory[] {
  const features = deps.features ?? {}
  return [...present(features.trace), ...present(features.observe), ...present(features.measure), asFactory(authenticateStage(spec, deps), 'authenticate')]
}

/** The stages after authentication, which the operation shapes (accounting, limits, guardrails, cache). */
function operationStageFactories(spec: RouteSpec, deps: PipelineDeps): StageFactory[] {
  const features = deps.features ?? {}
  return [
    ...present(features.account),
    asFactory(validateStage(spec), 'validate'),
    asFactory(resolveRouteStage(spec), 'resolve-route'),
    ...present(features.limits),
    ...present(features.guardrailsBefore),
    ...present(features.cache),
    ...present(features.guardrailsAfter),
  ]
}

/** The stage factories of a route's pipeline, in order (dispatch is the terminal). */
export function routeStageFactories(spec: RouteSpec, deps: PipelineDeps): StageFactory[] {
  return [...frontStageFactories(spec, deps), ...operationStageFactories(spec, deps)]
}

export function buildRoutePipeline(spec: RouteSpec, deps: PipelineDeps): Pipeline {
  return composePipeline(spec.operation, routeStageFactories(spec, deps), dispatchTerminal(spec, deps.holder.targetHealth))
}

/**
 * A route whose operation depends on what the authenticated request names (a saved prompt is a
 * chat or a text completion, and prompts are found in the caller's workspace). The stages up to
 * authentication run as `front`; then `choose` picks one of `branches`, the exchange takes its
 * operation, and the rest of that branch's own pipeline runs (accounting, validation, routing,
 * limits, guardrails, cache, dispatch), so each sees the operation the request really is.
 */
export function buildBranchingPipeline(front: RouteSpec, branches: readonly RouteSpec[], choose: (exchange: Exchange) => RouteSpec, deps: PipelineDeps): Pipeline {
  const rest = new Map(branches.map((spec) => [spec, composePipeline(spec.operation, operationStageFactories(spec, deps), dispatchTerminal(spec, deps.holder.targetHealth))]))
  const terminal: Terminal = (exchange) => {
    const spec = choose(exchange)
    const pipeline = rest.get(spec)
    if (!pipeline) throw new GatewayError('internal_error', `No branch for operation '${spec.operation.name}'`)
    exchange.operation = spec.operation
    return pipeline.run(exchange)
  }
  const outer = composePipeline(front.operation, frontStageFactories(front, deps), terminal)
  // Streams are relayed unparsed only if no branch reads their chunks (which branch runs is known too late).
  return { run: outer.run, relayStreams: outer.relayStreams && [...rest.values()].every((pipeline) => pipeline.relayStreams) }
}

/**
 * A route the gateway answers itself (prompt render): observed and authenticated like every
 * route, then `terminal` answers; no routing, policies or accounting, since no provider is called.
 */
export function buildLocalPipeline(spec: RouteSpec, deps: PipelineDeps, terminal: Terminal): Pipeline {
  const features = deps.features ?? {}
  return composePipeline(spec.operation, [...(features.observe ? [features.observe] : []), asFactory(authenticateStage(spec, deps), 'authenticate')], terminal)
}
