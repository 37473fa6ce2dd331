/**
 * Resolves a validated config into a target tree: every leaf carries its full settings (a child
 * inherits its parent's and overrides them), every node its path (`config.targets[0].targets[1]`),
 * and conditional rules are compiled. Pure and done once per saved config (at snapshot compile) or
 * once per request for an inline config. Providers are bound later, per request (`bind.ts`),
 * because which providers a name reaches depends on the caller's workspace.
 *
 * Inheritance: `override_params` merge shallowly (the child wins); `retry` and `circuit_breaker`
 * are replaced whole; `request_timeout`, `custom_host` and `forward_headers` are the child's when
 * set, else the parent's. Guardrail lists (`input_guardrails`, `output_guardrails`) add up: a node
 * carries its own and its parents'. A target's `cache` applies to it and the targets under it.
 */
import { compileQuery, type Predicate } from './conditions.ts'
import { configPath, type CacheConfig, type ConfigNode } from '../snapshot/config-schema.ts'
import { defaultBreakerSettings, type BreakerSettings } from './circuit-breaker.ts'
import { DEFAULT_RETRY_STATUS_CODES, noRetries, type RetryPolicy } from './retry.ts'

export type StrategyMode = 'single' | 'fallback' | 'loadbalance' | 'conditional'

export interface ProviderRef {
  /** Slug or id, without the `@`; empty when the request names the provider. */
  readonly name: string
  /** The config field it came from, for error messages; `request` for a root config naming none. */
  readonly field: 'provider' | 'virtual_key' | 'request'
}

export interface LeafSettings {
  readonly overrideParams: Readonly<Record<string, unknown>> | null
  readonly retry: RetryPolicy
  readonly requestTimeoutMs: number | null
  readonly customHost: URL | null
  /** Lower-cased names. */
  readonly forwardHeaders: readonly string[]
  readonly breaker: BreakerSettings
}

/** Guardrail references (ids or slugs) a node carries: its own plus its parents'. */
export interface GuardrailRefs {
  readonly input: readonly string[]
  readonly output: readonly string[]
}

interface NodeBase {
  /** `config`, `config.targets[1]`, ... */
  readonly path: string
  readonly guardrails: GuardrailRefs
  /**
   * Caching for the answers of this node's targets: its own `cache`, else its nearest parent's
   * below the root. The root's cache covers the whole request instead (the cache stage).
   */
  readonly cache: CacheConfig | null
  readonly name: string | null
  readonly weight: number
}

export interface PlanLeaf<Target> extends NodeBase {
  readonly kind: 'leaf'
  readonly target: Target
  readonly settings: LeafSettings
}

export interface ConditionalRule {
  readonly matches: Predicate
  /** Index into `children`. */
  readonly child: number
}

export interface PlanGroup<Target> extends NodeBase {
  readonly kind: 'group'
  readonly mode: StrategyMode
  /** Fallback: move on only for these statuses; null means any failure. */
  readonly fallbackOn: ReadonlySet<number> | null
  readonly rules: readonly ConditionalRule[]
  readonly defaultChild: number | null
  readonly children: ReadonlyArray<PlanNode<Target>>
}

export type PlanNode<Target> = PlanLeaf<Target> | PlanGroup<Target>

const rootSettings: LeafSettings = {
  overrideParams: null,
  retry: noRetries,
  requestTimeoutMs: null,
  customHost: null,
  forwardHeaders: [],
  breaker: defaultBreakerSettings,
}

function retryPolicy(retry: NonNullable<ConfigNode['retry']>): RetryPolicy {
  const initialDelayMs = retry.backoff_initial_ms ?? noRetries.initialDelayMs
  return {
    attempts: retry.attempts,
    onStatusCodes: new Set(retry.on_status_codes ?? DEFAULT_RETRY_STATUS_CODES),
    useRetryAfter: retry.use_retry_after_header ?? true,
    initialDelayMs,
    maxDelayMs: retry.backoff_max_ms ?? Math.max(initialDelayMs, noRetries.maxDelayMs),
    maxRetryAfterMs: retry.max_retry_after_ms ?? noRetries.maxRetryAfterMs,
    maxTotalWaitMs: noRetries.maxTotalWaitMs,
  }
}

function breakerSettings(breaker: NonNullable<ConfigNode['circuit_breaker']>): BreakerSettings {
  return {
    failureThreshold: breaker.failure_threshold ?? defaultBreakerSettings.failureThreshold,
    failureRateThreshold: breaker.failure_rate_threshold ?? defaultBreakerSettings.failureRateThreshold,
    minimumRequests: breaker.minimum_requests ?? defaultBreakerSettings.minimumRequests,
    cooldownMs: breaker.cooldown_ms ?? defaultBreakerSettings.cooldownMs,
    failureStatusCodes: breaker.failure_status_codes ? new Set(breaker.failure_status_codes) : defaultBreakerSettings.failureStatusCodes,
  }
}

function inherit(parent: LeafSettings, node: ConfigNode): LeafSettings {
  return {
    overrideParams: node.override_params ? { ...parent.overrideParams, ...node.override_params } : parent.overrideParams,
    retry: node.retry ? retryPolicy(node.retry) : parent.retry,
    requestTimeoutMs: node.request_timeout ?? parent.requestTimeoutMs,
    customHost: node.custom_host !== undefined ? new URL(node.custom_host) : parent.customHost,
    forwardHeaders: node.forward_headers ? node.forward_headers.map((name) => name.toLowerCase()) : parent.forwardHeaders,
    breaker: node.circuit_breaker ? breakerSettings(node.circuit_breaker) : parent.breaker,
  }
}

function providerRef(node: ConfigNode): ProviderRef {
  if (node.provider !== undefined) return { name: node.provider.startsWith('@') ? node.provider.slice(1) : node.provider, field: 'provider' }
  if (node.virtual_key !== undefined) return { name: node.virtual_key, field: 'virtual_key' }
  // Only a root config may name no provider (validateConfig): the request's headers or model do.
  return { name: '', field: 'request' }
}

const NO_GUARDRAILS: GuardrailRefs = { input: [], output: [] }

function withGuardrails(parent: GuardrailRefs, node: ConfigNode): GuardrailRefs {
  if (!node.input_guardrails && !node.output_guardrails) return parent
  const add = (list: readonly string[], more: readonly string[] | undefined) => (more ? [...new Set([...list, ...more])] : list)
  return { input: add(parent.input, node.input_guardrails), output: add(parent.output, node.output_guardrails) }
}

function planNode(node: ConfigNode, path: ReadonlyArray<string | number>, parent: LeafSettings, parentGuardrails: GuardrailRefs = NO_GUARDRAILS, parentCache: CacheConfig | null = null): PlanNode<ProviderRef> {
  const settings = inherit(parent, node)
  const guardrails = withGuardrails(parentGuardrails, node)
  const cache = path.length === 0 ? null : (node.cache ?? parentCache)
  const base = { path: configPath(path), name: node.name ?? null, weight: node.weight ?? 1, guardrails, cache }
  if (!node.strategy || !node.targets) return { ...base, kind: 'leaf', target: providerRef(node), settings }

  const children = node.targets.map((child, index) => planNode(child, [...path, 'targets', index], settings, guardrails, cache))
  const indexOf = (name: string): number => node.targets!.findIndex((child) => child.name === name)
  return {
    ...base,
    kind: 'group',
    mode: node.strategy.mode,
    fallbackOn: node.strategy.on_status_codes ? new Set(node.strategy.on_status_codes) : null,
    rules: (node.strategy.conditions ?? []).map((rule) => ({ matches: compileQuery(rule.query), child: indexOf(rule.then) })),
    defaultChild: node.strategy.default === undefined ? null : indexOf(node.strategy.default),
    children,
  }
}

/** Whether any target below the root caches its answers (then the cache stage looks at each attempt). */
export function hasTargetCache(node: PlanNode<unknown>): boolean {
  if (node.cache !== null) return true
  return node.kind === 'group' && node.children.some(hasTargetCache)
}

/** Plans a config that `validateConfig` accepted. */
export function planConfig(config: ConfigNode): PlanNode<ProviderRef> {
  return planNode(config, [], rootSettings)
}

/** The same tree with each leaf's target replaced (how `bind.ts` attaches providers). */
export function mapTargets<From, To>(node: PlanNode<From>, map: (leaf: PlanLeaf<From>) => To): PlanNode<To> {
  if (node.kind === 'leaf') return { ...node, target: map(node) }
  return { ...node, children: node.children.map((child) => mapTargets(child, map)) }
}

/** Every leaf, depth first. */
export function leavesOf<Target>(node: PlanNode<Target>): Array<PlanLeaf<Target>> {
  return node.kind === 'leaf' ? [node] : node.children.flatMap((child) => leavesOf(child))
}
