/**
 * Runs a planned target tree for one request: walks the strategies (single, fallback, loadbalance,
 * conditional), retries each leaf by its policy, feeds and honours the circuit breakers, and
 * records which target answered. It knows nothing about providers or HTTP: a leaf is attempted by
 * the `attempt` function the route passes in (`attemptJson`/`attemptStream`), which resolves only
 * once the first upstream event arrived, so every failure seen here happened before the client got
 * a byte and may still be retried or sent elsewhere.
 */
import { GatewayError } from '../core/errors.ts'
import { ProviderHttpError } from '../upstream/provider-errors.ts'
import type { ConditionInput } from './conditions.ts'
import type { PlanGroup, PlanLeaf, PlanNode } from './plan.ts'
import { cancelledError, runWithRetries, type Clock, type FailureInfo } from './retry.ts'
import type { TargetHealthRegistry } from './target-health.ts'

/** What the executor needs of a bound target: whose health (breaker, retry budget) it uses. */
export interface ExecutableTarget {
  readonly healthKey: string
}

/** Filled in while the plan runs; read for the response headers whether it succeeded or not. */
export interface ExecutionTrace<Target> {
  /** The leaf attempted last (the one that answered, on success). */
  leaf: PlanLeaf<Target> | null
  /** Retries made at that leaf. */
  retries: number
  /** Upstream attempts over the whole request. */
  attempts: number
}

export interface ExecuteDeps {
  health: TargetHealthRegistry
  clock: Clock
  random: () => number
  /** The client's connection: aborting it stops every wait and attempt. */
  signal: AbortSignal
  conditions: ConditionInput
}

export type Attempt<Target, Result> = (leaf: PlanLeaf<Target>, signal: AbortSignal) => Promise<Result>

export function newTrace<Target>(): ExecutionTrace<Target> {
  return { leaf: null, retries: 0, attempts: 0 }
}

/**
 * The status a failure stands for: the provider's own status (a provider 401 is not retried even
 * though the client sees a 502), else the gateway's. Null for a cancelled request, which nothing
 * retries, falls back from, or holds against a target.
 */
export function failureOf(error: unknown): FailureInfo | null {
  if (error instanceof ProviderHttpError) return { status: error.info.status, retryAfterMs: error.info.retryAfterMs }
  if (error instanceof GatewayError) return error.code === 'request_cancelled' ? null : { status: error.status, retryAfterMs: null }
  return { status: 500, retryAfterMs: null }
}

/** Weighted random choice; weight 0 is never chosen. Null when no child has weight. */
export function pickWeighted<Node extends { readonly weight: number }>(nodes: readonly Node[], random: () => number): Node | null {
  let total = 0
  for (const node of nodes) total += node.weight
  if (total <= 0) return null
  let point = random() * total
  for (const node of nodes) {
    if (node.weight <= 0) continue
    if (point < node.weight) return node
    point -= node.weight
  }
  // Rounding can leave `point` a hair above the last weight.
  for (let index = nodes.length - 1; index >= 0; index--) if (nodes[index]!.weight > 0) return nodes[index]!
  return null
}

export class PlanExecutor<Target extends ExecutableTarget, Result> {
  readonly #attempt: Attempt<Target, Result>
  readonly #deps: ExecuteDeps
  readonly trace: ExecutionTrace<Target>

  constructor(attempt: Attempt<Target, Result>, deps: ExecuteDeps, trace: ExecutionTrace<Target> = newTrace()) {
    this.#attempt = attempt
    this.#deps = deps
    this.trace = trace
  }

  async run(node: PlanNode<Target>): Promise<Result> {
    if (this.#deps.signal.aborted) throw cancelledError()
    return node.kind === 'leaf' ? this.#runLeaf(node) : this.#runGroup(node)
  }

  /** Whether a strategy should route to this node now (some leaf under it has a usable circuit). */
  available(node: PlanNode<Target>): boolean {
    if (node.kind === 'leaf') return this.#deps.health.get(node.target.healthKey).breaker.available(this.#deps.health.now())
    return node.children.some((child) => this.available(child))
  }

  async #runLeaf(leaf: PlanLeaf<Target>): Promise<Result> {
    const { health, signal } = this.#deps
    const { breaker, retryBudget } = health.get(leaf.target.healthKey)
    const settings = leaf.settings.breaker
    this.trace.leaf = leaf
    this.trace.retries = 0
    const once = async (): Promise<Result> => {
      const probe = breaker.begin(health.now())
      this.trace.attempts++
      try {
        const result = await this.#attempt(leaf, signal)
        breaker.record(false, settings, health.now(), probe)
        return result
      } catch (error) {
        const failure = signal.aborted ? null : failureOf(error)
        if (failure === null) breaker.abandon(probe)
        else breaker.record(settings.failureStatusCodes.has(failure.status), settings, health.now(), probe)
        throw error
      }
    }
    let holdsRetry = false
    // Retrying a target whose circuit is open (this request's failures may have opened it), or
    // beyond its retry budget, only adds load where it hurts: stop, and let a fallback take over.
    const retryable = (error: unknown): FailureInfo | null => {
      const failure = failureOf(error)
      if (failure === null || breaker.state(health.now()) === 'open') return null
      if (!holdsRetry && leaf.settings.retry.onStatusCodes.has(failure.status)) {
        holdsRetry = retryBudget.acquireRetry()
        if (!holdsRetry) return null
      }
      return failure
    }
    retryBudget.enter()
    try {
      return await runWithRetries(once, leaf.settings.retry, this.#deps, retryable, (retryNumber) => {
        this.trace.retries = retryNumber
      })
    } finally {
      retryBudget.leave(holdsRetry)
    }
  }

  #runGroup(group: PlanGroup<Target>): Promise<Result> {
    switch (group.mode) {
      case 'single':
        return this.run(group.children[0]!)
      case 'conditional':
        return this.run(this.#chooseByCondition(group))
      case 'loadbalance':
        return this.run(this.#chooseByWeight(group))
      case 'fallback':
        return this.#runFallback(group)
    }
  }

  #chooseByCondition(group: PlanGroup<Target>): PlanNode<Target> {
    for (const rule of group.rules) if (rule.matches(this.#deps.conditions)) return group.children[rule.child]!
    if (group.defaultChild !== null) return group.children[group.defaultChild]!
    throw new GatewayError('no_route_matched', `No condition of ${group.path} matched the request, and it names no default target`, { param: 'x-gateway-config' })
  }

  #chooseByWeight(group: PlanGroup<Target>): PlanNode<Target> {
    const usable = group.children.filter((child) => child.weight > 0 && this.available(child))
    // Every weighted target's circuit open: route as if none were, rather than refuse every request.
    const chosen = pickWeighted(usable.length > 0 ? usable : group.children, this.#deps.random)
    if (chosen === null) throw new GatewayError('no_route_matched', `${group.path} has no target with a weight above 0`, { param: 'x-gateway-config' })
    return chosen
  }

  async #runFallback(group: PlanGroup<Target>): Promise<Result> {
    const usable = group.children.map((child) => this.available(child))
    const anyUsable = usable.includes(true)
    let lastError: unknown = null
    for (let index = 0; index < group.children.length; index++) {
      if (anyUsable && !usable[index]) continue
      try {
        return await this.run(group.children[index]!)
      } catch (error) {
        if (this.#deps.signal.aborted) throw cancelledError()
        const failure = failureOf(error)
        if (failure === null || (group.fallbackOn !== null && !group.fallbackOn.has(failure.status))) throw error
        lastError = error
      }
    }
    throw lastError
  }
}
