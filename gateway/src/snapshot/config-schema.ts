/**
 * The routing config object (`x-gateway-config`, saved configs, key and workspace defaults): a
 * tree of targets under strategies. Validation is strict, so a misspelt field is a 400 naming its
 * path (`config.targets[1].retry.attempts`) instead of a setting silently ignored. Credentials are
 * never inline: a target names a stored provider.
 */
import { z } from 'zod'

const statusCode = z.number().int().min(100).max(599)
const statusCodes = z.array(statusCode).min(1).max(64)

/** Bounds chosen so a config cannot make one request wait for minutes or retry without end. */
export const CONFIG_LIMITS = {
  maxRetries: 10,
  maxDelayMs: 60_000,
  maxRequestTimeoutMs: 600_000,
  maxTargets: 64,
  maxDepth: 6,
  maxRegexLength: 256,
  maxForwardHeaders: 32,
  /** Thirty days. */
  maxCacheAgeS: 2_592_000,
  maxGuardrails: 32,
} as const

const retry = z.strictObject({
  /** Retries after the first attempt (0 = none). */
  attempts: z.number().int().min(0).max(CONFIG_LIMITS.maxRetries),
  on_status_codes: statusCodes.optional(),
  /** Wait what the provider's `retry-after-ms` / `retry-after` asks (within `max_retry_after_ms`). */
  use_retry_after_header: z.boolean().optional(),
  backoff_initial_ms: z.number().int().min(1).max(CONFIG_LIMITS.maxDelayMs).optional(),
  backoff_max_ms: z.number().int().min(1).max(CONFIG_LIMITS.maxDelayMs).optional(),
  /** A provider asking for a longer wait is not retried: the request fails over or answers instead. */
  max_retry_after_ms: z.number().int().min(0).max(CONFIG_LIMITS.maxDelayMs).optional(),
})

const circuitBreaker = z.strictObject({
  /** Consecutive failures that open the circuit. */
  failure_threshold: z.number().int().min(1).max(1000).optional(),
  /** Share of failures in the recent window (0..1) that opens the circuit. */
  failure_rate_threshold: z.number().gt(0).max(1).optional(),
  /** Outcomes the window needs before the rate counts. */
  minimum_requests: z.number().int().min(1).max(20).optional(),
  /** How long an open circuit stays open; grows with each reopening. */
  cooldown_ms: z.number().int().min(1000).max(600_000).optional(),
  /** Statuses that count as failures (default 408, 429, 500, 502, 503, 504 and transport errors). */
  failure_status_codes: statusCodes.optional(),
})

/** `$eq`-style comparisons on one field. */
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()])
const fieldOperators = z
  .strictObject({
    $eq: scalar.optional(),
    $ne: scalar.optional(),
    $in: z.array(scalar).max(256).optional(),
    $nin: z.array(scalar).max(256).optional(),
    $gt: z.union([z.number(), z.string()]).optional(),
    $gte: z.union([z.number(), z.string()]).optional(),
    $lt: z.union([z.number(), z.string()]).optional(),
    $lte: z.union([z.number(), z.string()]).optional(),
    $regex: z
      .string()
      .max(CONFIG_LIMITS.maxRegexLength)
      .refine((pattern) => compiles(pattern), 'not a valid regular expression')
      .refine((pattern) => !backtracksBadly(pattern), 'nested quantifiers and backreferences are not allowed (they can take exponential time)')
      .optional(),
  })
  .refine((operators) => Object.keys(operators).length > 0, 'name at least one operator')

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern)
    return true
  } catch {
    return false
  }
}

/** A repeating quantifier (`?` repeats nothing, so `(gpt|o1)?` is fine). */
const REPEAT_AFTER = /^(?:[*+]|\{\d+,\d*\}|\{(?:[2-9]|\d{2,})\})/

/**
 * Rules are evaluated on the event loop against caller-supplied text, and JavaScript regexes have
 * no time limit: refuse the patterns that backtrack exponentially (a quantified group that itself
 * contains a quantifier, as in `(a+)+`, and backreferences). A conservative check: it may refuse a
 * harmless pattern, never admit one with nested quantifiers.
 */
export function backtracksBadly(pattern: string): boolean {
  if (/\\[1-9k]/.test(pattern)) return true
  // Per open group: does it contain a quantifier or alternation?
  const groups: boolean[] = []
  let inClass = false
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index]!
    if (char === '\\') {
      index++
      continue
    }
    if (inClass) {
      if (char === ']') inClass = false
      continue
    }
    if (char === '[') inClass = true
    else if (char === '(') groups.push(false)
    else if (char === ')') {
      const inner = groups.pop() ?? false
      const quantified = REPEAT_AFTER.test(pattern.slice(index + 1))
      if (inner && quantified) return true
      if ((inner || quantified) && groups.length > 0) groups[groups.length - 1] = true
    } else if ((char === '*' || char === '+' || char === '?' || char === '{' || char === '|') && groups.length > 0) {
      groups[groups.length - 1] = true
    }
  }
  return false
}

/** Field paths a condition may read: `metadata.<key>`, `params.<key>`, or `model`. */
const FIELD_PATH = /^(model|(metadata|params)(\.[A-Za-z0-9_-]+)+)$/

export interface ConditionQuery {
  $and?: ConditionQuery[]
  $or?: ConditionQuery[]
  [field: string]: unknown
}

export const conditionQuery: z.ZodType<ConditionQuery> = z.lazy(() =>
  z.record(z.string(), z.unknown()).superRefine((query, context) => {
    const keys = Object.keys(query)
    if (keys.length === 0) context.addIssue({ code: 'custom', message: 'a query needs at least one field or $and/$or' })
    for (const key of keys) {
      const value = query[key]
      if (key === '$and' || key === '$or') {
        const list = z.array(conditionQuery).min(1).max(32).safeParse(value)
        if (!list.success) for (const issue of list.error.issues) context.addIssue({ code: 'custom', path: [key, ...issue.path], message: issue.message })
        continue
      }
      if (!FIELD_PATH.test(key)) {
        context.addIssue({ code: 'custom', path: [key], message: `'${key}' is not a field conditions can read (metadata.<key>, params.<key> or model)` })
        continue
      }
      // A bare value means $eq.
      const operand = typeof value === 'object' && value !== null && !Array.isArray(value) ? fieldOperators : scalar
      const checked = operand.safeParse(value)
      if (!checked.success) for (const issue of checked.error.issues) context.addIssue({ code: 'custom', path: [key, ...issue.path], message: issue.message })
    }
  }),
) as z.ZodType<ConditionQuery>

const condition = z.strictObject({ query: conditionQuery, then: z.string().min(1).max(255) })

const strategy = z.strictObject({
  mode: z.enum(['single', 'fallback', 'loadbalance', 'conditional']),
  /** Fallback only: move on to the next target only for these statuses (default: any failure). */
  on_status_codes: statusCodes.optional(),
  conditions: z.array(condition).max(64).optional(),
  /** Conditional: the target name used when no condition matches. */
  default: z.string().min(1).max(255).optional(),
})

/**
 * Headers a config may never copy to a provider: the caller's credentials and Gatehouse's own
 * headers (the provider gets the stored credential, nothing else), and hop-by-hop headers.
 */
export const UNFORWARDABLE_HEADERS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'api-key',
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
  'expect',
]
const UNFORWARDABLE = new Set(UNFORWARDABLE_HEADERS)

/** May a config copy this header to a provider? (The Config CRD enforces the same rule in CEL.) */
export function isForwardableHeader(name: string): boolean {
  const lower = name.toLowerCase()
  return !UNFORWARDABLE.has(lower) && !lower.startsWith('x-gateway-') && !lower.startsWith('proxy-')
}

const headerName = z
  .string()
  .max(128)
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'not a valid header name')
  .refine(isForwardableHeader, 'this header is never forwarded (credentials, gateway and hop-by-hop headers)')

const customHost = z
  .string()
  .max(2048)
  .superRefine((value, context) => {
    let url: URL
    try {
      url = new URL(value)
    } catch {
      context.addIssue({ code: 'custom', message: 'must be an absolute http(s) URL' })
      return
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') context.addIssue({ code: 'custom', message: 'must use http or https' })
    if (url.username !== '' || url.password !== '') context.addIssue({ code: 'custom', message: 'must not carry credentials' })
    if (url.search !== '' || url.hash !== '') context.addIssue({ code: 'custom', message: 'must not carry a query or fragment' })
  })

/** The embedding model semantic caching compares requests with: one of the workspace's own providers. */
const cacheEmbedding = z.strictObject({
  /** `@slug` (or the bare slug) of a provider the workspace may use, serving embeddings. */
  provider: z.string().min(1).max(256),
  /** The embedding model at that provider, e.g. `text-embedding-3-small`. */
  model: z.string().min(1).max(256),
})

/** Response caching (`cache/`): on the config, for every request under it; on a target, for the answers of that target (and those under it). */
const cache = z
  .strictObject({
    /** `simple`: exact match on the normalised request. `semantic`: the last user turn by similarity, the rest exact. */
    mode: z.enum(['simple', 'semantic']),
    /** Seconds an entry is served; 1 day when absent. */
    max_age: z.number().int().min(1).max(CONFIG_LIMITS.maxCacheAgeS).optional(),
    /** Key entries by the body's `user` too, so one end user never gets another's answer. */
    per_user: z.boolean().optional(),
    /** Semantic mode: the cosine similarity a stored request must reach to answer (default 0.95). */
    similarity_threshold: z.number().min(0).max(1).optional(),
    /** Semantic mode: which provider and model embed the last user turn (required). */
    embedding: cacheEmbedding.optional(),
  })
  .superRefine((value, context) => {
    if (value.mode === 'semantic' && value.embedding === undefined) {
      context.addIssue({ code: 'custom', path: ['embedding'], message: 'semantic mode needs an embedding provider and model: {"provider": "@slug", "model": "..."}' })
    }
    if (value.mode === 'simple') {
      for (const field of ['embedding', 'similarity_threshold'] as const) {
        if (value[field] !== undefined) context.addIssue({ code: 'custom', path: [field], message: 'only semantic mode uses this field' })
      }
    }
  })

export type CacheConfig = z.infer<typeof cache>
const guardrailRefs = z.array(z.string().min(1).max(255)).max(CONFIG_LIMITS.maxGuardrails)

export interface ConfigNode {
  cache?: CacheConfig
  name?: string
  provider?: string
  virtual_key?: string
  weight?: number
  override_params?: Record<string, unknown>
  retry?: z.infer<typeof retry>
  request_timeout?: number
  custom_host?: string
  forward_headers?: string[]
  circuit_breaker?: z.infer<typeof circuitBreaker>
  strategy?: z.infer<typeof strategy>
  targets?: ConfigNode[]
  input_guardrails?: string[]
  output_guardrails?: string[]
}

const nodeShape = z.strictObject({
  cache: cache.optional(),
  /** Names a target for conditional routing (`then`, `default`). */
  name: z.string().min(1).max(255).optional(),
  /** A stored provider: `@slug` (or the bare slug). */
  provider: z.string().min(1).max(256).optional(),
  /** A stored provider by slug or id: the older name for the same thing. */
  virtual_key: z.string().min(1).max(256).optional(),
  /** Loadbalance share; 0 never picks the target. */
  weight: z.number().min(0).max(1_000_000).optional(),
  /** Shallow-merged over the request body (the target wins), e.g. to pin `model`. */
  override_params: z.record(z.string(), z.unknown()).optional(),
  retry: retry.optional(),
  /** Milliseconds to the provider's first byte; a 408 when it passes. */
  request_timeout: z.number().int().min(1).max(CONFIG_LIMITS.maxRequestTimeoutMs).optional(),
  custom_host: customHost.optional(),
  forward_headers: z.array(headerName).max(CONFIG_LIMITS.maxForwardHeaders).optional(),
  circuit_breaker: circuitBreaker.optional(),
  strategy: strategy.optional(),
  /** Guardrails (ids or slugs) run on the request before it is sent; a target's add to its parent's. */
  input_guardrails: guardrailRefs.optional(),
  /** Guardrails (ids or slugs) run on the answer of this node's targets. */
  output_guardrails: guardrailRefs.optional(),
  get targets() {
    return z.array(configNode).min(1).max(CONFIG_LIMITS.maxTargets).optional()
  },
})

export const configNode: z.ZodType<ConfigNode> = nodeShape.superRefine((node, context) => {
  const isGroup = node.targets !== undefined || node.strategy !== undefined
  const names = node.provider !== undefined || node.virtual_key !== undefined
  if (isGroup && names) context.addIssue({ code: 'custom', path: ['provider'], message: 'a target names either a provider or strategy+targets, not both' })
  if (node.provider !== undefined && node.virtual_key !== undefined) context.addIssue({ code: 'custom', path: ['virtual_key'], message: 'name the provider once: provider or virtual_key' })
  if (node.targets !== undefined && node.strategy === undefined) context.addIssue({ code: 'custom', path: ['strategy'], message: 'targets need a strategy' })
  if (node.strategy !== undefined && node.targets === undefined) context.addIssue({ code: 'custom', path: ['targets'], message: 'a strategy needs targets' })
  if (node.retry?.backoff_initial_ms !== undefined && node.retry.backoff_max_ms !== undefined && node.retry.backoff_initial_ms > node.retry.backoff_max_ms) {
    context.addIssue({ code: 'custom', path: ['retry', 'backoff_max_ms'], message: 'must be at least backoff_initial_ms' })
  }
  const { strategy: chosen, targets } = node
  if (!chosen || !targets) return
  if (chosen.on_status_codes !== undefined && chosen.mode !== 'fallback') {
    context.addIssue({ code: 'custom', path: ['strategy', 'on_status_codes'], message: 'only a fallback strategy uses on_status_codes' })
  }
  if (chosen.mode === 'loadbalance' && !targets.some((target) => (target.weight ?? 1) > 0)) {
    context.addIssue({ code: 'custom', path: ['targets'], message: 'a loadbalance strategy needs a target with a weight above 0' })
  }
  const seen = new Set<string>()
  targets.forEach((target, index) => {
    if (target.name === undefined) return
    if (seen.has(target.name)) context.addIssue({ code: 'custom', path: ['targets', index, 'name'], message: `duplicate target name '${target.name}'` })
    seen.add(target.name)
  })
  if (chosen.mode === 'conditional') {
    if (!chosen.conditions || chosen.conditions.length === 0) context.addIssue({ code: 'custom', path: ['strategy', 'conditions'], message: 'a conditional strategy needs conditions' })
    chosen.conditions?.forEach((rule, index) => {
      if (!seen.has(rule.then)) context.addIssue({ code: 'custom', path: ['strategy', 'conditions', index, 'then'], message: `no target is named '${rule.then}'` })
    })
    if (chosen.default !== undefined && !seen.has(chosen.default)) context.addIssue({ code: 'custom', path: ['strategy', 'default'], message: `no target is named '${chosen.default}'` })
  } else if (chosen.conditions !== undefined || chosen.default !== undefined) {
    context.addIssue({ code: 'custom', path: ['strategy', chosen.conditions !== undefined ? 'conditions' : 'default'], message: 'only a conditional strategy uses conditions and default' })
  }
})

export interface ConfigIssue {
  /** `['targets', 1, 'retry']` */
  path: ReadonlyArray<string | number>
  message: string
}

/** An unknown field is reported at its own path, so the error names what to fix. */
function toConfigIssue(issue: z.core.$ZodIssue): ConfigIssue {
  const path = issue.path as Array<string | number>
  if (issue.code === 'unrecognized_keys' && issue.keys.length > 0) {
    return { path: [...path, issue.keys[0]!], message: `unknown field${issue.keys.length > 1 ? ` (also: ${issue.keys.slice(1).join(', ')})` : ''}` }
  }
  return { path, message: issue.message }
}

function depthOf(node: ConfigNode): number {
  return 1 + Math.max(0, ...(node.targets ?? []).map(depthOf))
}

export type ConfigValidation = { ok: true; config: ConfigNode } | { ok: false; issues: ConfigIssue[] }

/**
 * Targets inside a strategy name their provider. Only the root may leave it out: then the config
 * sets retries, timeouts and the like for whichever provider the request names (headers or an
 * `@slug/model` model), as in `{"retry": {"attempts": 2}}`.
 */
function unnamedTargets(node: ConfigNode, path: Array<string | number>): ConfigIssue[] {
  return (node.targets ?? []).flatMap((child, index) => {
    const at = [...path, 'targets', index]
    const named = child.provider !== undefined || child.virtual_key !== undefined || child.strategy !== undefined
    return named ? unnamedTargets(child, at) : [{ path: at, message: 'name a provider (@slug or virtual_key) or a strategy with targets' }]
  })
}

export function validateConfig(value: unknown): ConfigValidation {
  const parsed = configNode.safeParse(value)
  if (!parsed.success) {
    return { ok: false, issues: parsed.error.issues.map(toConfigIssue) }
  }
  const unnamed = unnamedTargets(parsed.data, [])
  if (unnamed.length > 0) return { ok: false, issues: unnamed }
  if (depthOf(parsed.data) > CONFIG_LIMITS.maxDepth) return { ok: false, issues: [{ path: ['targets'], message: `targets nest at most ${CONFIG_LIMITS.maxDepth} levels deep` }] }
  return { ok: true, config: parsed.data }
}

/** `['targets', 1, 'retry']` -> `config.targets[1].retry`, the same form as `x-gateway-target-path`. */
export function configPath(path: ReadonlyArray<string | number | symbol>): string {
  let out = 'config'
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : `.${String(part)}`
  return out
}
