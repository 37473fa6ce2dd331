/**
 * Config: a routing config, a tree of targets under strategies. `spec.config` is the same object
 * the gateway validates (gateway/src/routing/config-schema.ts) for x-gateway-config headers and
 * saved configs, so its keys keep the wire format's snake_case while everything around it follows
 * Kubernetes camelCase. The CRD accepts a subset of what the gateway accepts: structural schemas
 * cannot recurse, so nesting is unrolled to MAX_TARGET_DEPTH levels, and lists are kept short
 * enough for the API server's CEL cost budget (test/k8s/config-compat.test.ts checks the two
 * schemas agree on the examples and the invalid cases).
 */
import { z } from 'zod'
import { isForwardableHeader, UNFORWARDABLE_HEADERS } from '@gatehouse/gateway/snapshot'
import { displayName, freeForm, rules, slug, workspaceRef, type Rule } from './shared.ts'
import type { KindDefinition } from './kind.ts'

/** Levels of `targets` below the top object (the gateway allows 6 levels in all). */
export const MAX_TARGET_DEPTH = 3
/**
 * Targets per list at nesting levels 1, 2 and 3. The API server estimates CEL cost by multiplying
 * each rule by every enclosing list's maxItems, so deeper lists must be shorter to stay in budget.
 */
const MAX_TARGETS_AT_LEVEL = [16, 8, 4] as const
const MAX_CONDITIONS = 16

const statusCodes = (description: string) =>
  z
    .array(z.int().min(100).max(599).describe('HTTP status code.'))
    .min(1)
    .max(64)
    .describe(description)

const retry = rules(
  z
    .strictObject({
      attempts: z.int().min(0).max(10).describe('Retries after the first attempt (0 to 10).'),
      on_status_codes: statusCodes('Upstream status codes that trigger a retry. Default: 429, 500, 502, 503, 504.').optional(),
      use_retry_after_header: z
        .boolean()
        .optional()
        .describe("Wait as long as the provider's retry-after-ms / retry-after header asks (up to max_retry_after_ms)."),
      backoff_initial_ms: z.int().min(1).max(60_000).optional().describe('First backoff delay in milliseconds.'),
      backoff_max_ms: z.int().min(1).max(60_000).optional().describe('Largest backoff delay in milliseconds.'),
      max_retry_after_ms: z
        .int()
        .min(0)
        .max(60_000)
        .optional()
        .describe('A provider asking for a longer wait is not retried: the request fails over or answers instead.'),
    })
    .describe('Retry policy for failed upstream calls (only before the first byte reached the client).'),
  [
    {
      rule: '!has(self.backoff_initial_ms) || !has(self.backoff_max_ms) || self.backoff_initial_ms <= self.backoff_max_ms',
      message: 'backoff_max_ms must be at least backoff_initial_ms',
      fieldPath: '.backoff_max_ms',
      check: (r) => r.backoff_initial_ms === undefined || r.backoff_max_ms === undefined || r.backoff_initial_ms <= r.backoff_max_ms,
    },
  ],
)

const circuitBreaker = z
  .strictObject({
    failure_threshold: z.int().min(1).max(1000).optional().describe('Consecutive failures that open the circuit.'),
    failure_rate_threshold: z
      .number()
      .gt(0)
      .max(1)
      .optional()
      .describe('Share of failures in the recent window (above 0, at most 1) that opens the circuit.'),
    minimum_requests: z.int().min(1).max(20).optional().describe('Outcomes the window needs before the failure rate counts.'),
    cooldown_ms: z
      .int()
      .min(1000)
      .max(600_000)
      .optional()
      .describe('Milliseconds an open circuit stays open; grows with each reopening.'),
    failure_status_codes: statusCodes('Statuses that count as failures. Default: 408, 429, 500, 502, 503, 504 and transport errors.').optional(),
  })
  .describe('Circuit breaker of this target.')


const headerName = rules(
  z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/)
    .describe('Header name.'),
  [
    {
      rule: `!(self.lowerAscii() in [${UNFORWARDABLE_HEADERS.map((h) => `'${h}'`).join(', ')}]) && !self.lowerAscii().startsWith('x-gateway-') && !self.lowerAscii().startsWith('proxy-')`,
      message: 'this header is never forwarded (credentials, gateway and hop-by-hop headers)',
      // The gateway's own rule and list, so the CRD and the gateway refuse the same headers.
      check: isForwardableHeader,
    },
  ],
)

interface StrategyShape {
  mode: 'single' | 'fallback' | 'loadbalance' | 'conditional'
  on_status_codes?: number[] | undefined
  conditions?: Array<{ then: string }> | undefined
  default?: string | undefined
}

const strategy = rules(
  z
    .strictObject({
      mode: z
        .enum(['single', 'fallback', 'loadbalance', 'conditional'])
        .describe('single: the first target; fallback: the next target on failure; loadbalance: by weight; conditional: by request metadata/params.'),
      on_status_codes: statusCodes('Fallback only: move on to the next target only for these statuses (default: any failure).').optional(),
      conditions: z
        .array(
          z
            .strictObject({
              query: freeForm(
                'Filter over model, metadata.<key> and params.<key> with $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $regex, $and and $or; a bare value means $eq.',
              ),
              then: z.string().min(1).max(255).describe('Name of the target used when the query matches.'),
            })
            .describe('One routing condition.'),
        )
        .max(MAX_CONDITIONS)
        .optional()
        .describe('Conditional only: conditions evaluated in order.'),
      default: z.string().min(1).max(255).optional().describe('Conditional only: the target name used when no condition matches.'),
    })
    .describe('How the targets are used.'),
  [
    {
      rule: "self.mode != 'conditional' || (has(self.conditions) && size(self.conditions) > 0)",
      message: 'a conditional strategy needs conditions',
      fieldPath: '.conditions',
      check: (s: StrategyShape) => s.mode !== 'conditional' || (s.conditions?.length ?? 0) > 0,
    },
    {
      rule: "!has(self.on_status_codes) || self.mode == 'fallback'",
      message: 'only a fallback strategy uses on_status_codes',
      fieldPath: '.on_status_codes',
      check: (s: StrategyShape) => s.on_status_codes === undefined || s.mode === 'fallback',
    },
    {
      rule: "self.mode == 'conditional' || (!has(self.conditions) && !has(self.default))",
      message: 'only a conditional strategy uses conditions and default',
      check: (s: StrategyShape) => s.mode === 'conditional' || (s.conditions === undefined && s.default === undefined),
    },
  ],
)

interface CacheShape {
  mode: 'simple' | 'semantic'
  embedding?: unknown
  similarity_threshold?: number | undefined
}

/** Response caching: on the config for every request under it, on a target for that target's answers. */
const cacheSettings = rules(
  z
    .strictObject({
      mode: z.enum(['simple', 'semantic']).describe('simple: an exact match on the normalised request. semantic: the last user turn by embedding similarity, the rest of the request exactly.'),
      max_age: z.int().min(1).max(2_592_000).optional().describe('Seconds an answer is served from the cache (default one day).'),
      per_user: z.boolean().optional().describe("Key entries by the request body's user field too."),
      similarity_threshold: z.number().min(0).max(1).optional().describe('Semantic mode: the cosine similarity a stored turn must reach (default 0.95).'),
      embedding: z
        .strictObject({
          provider: z.string().min(1).max(256).describe("@<slug> of one of the workspace's providers that serves embeddings."),
          model: z.string().min(1).max(256).describe('The embedding model, e.g. text-embedding-3-small.'),
        })
        .optional()
        .describe('Semantic mode (required there): which provider and model embed the last user turn.'),
    })
    .describe('Response caching; the answer carries x-gateway-cache-status.'),
  [
    {
      rule: "self.mode != 'semantic' || has(self.embedding)",
      message: 'semantic mode needs an embedding provider and model',
      check: (c: CacheShape) => c.mode !== 'semantic' || c.embedding !== undefined,
    },
    {
      rule: "self.mode == 'semantic' || (!has(self.embedding) && !has(self.similarity_threshold))",
      message: 'only semantic mode uses embedding and similarity_threshold',
      check: (c: CacheShape) => c.mode === 'semantic' || (c.embedding === undefined && c.similarity_threshold === undefined),
    },
  ],
)

/** Fields of every node of the tree (the top object and each target). */
const nodeFields = {
  cache: cacheSettings.optional(),
  name: z.string().min(1).max(255).optional().describe('Names this target for conditional routing (then, default).'),
  provider: z.string().min(1).max(256).optional().describe('A stored provider: @<slug> (or the bare slug).'),
  virtual_key: z.string().min(1).max(256).optional().describe('A stored provider by slug or id: the older name for provider.'),
  weight: z.number().min(0).max(1_000_000).optional().describe('Loadbalance share (default 1); 0 never picks the target.'),
  override_params: freeForm('Shallow-merged over the request body (the target wins), e.g. to pin model.').optional(),
  retry: retry.optional(),
  request_timeout: z
    .int()
    .min(1)
    .max(600_000)
    .optional()
    .describe("Milliseconds to the provider's first byte; the request answers 408 when it passes."),
  custom_host: z
    .string()
    .max(2048)
    .regex(/^https?:\/\/[^\s/?#@]+[^\s?#]*$/)
    .optional()
    .describe("Absolute http(s) URL replacing the provider's base URL; no credentials, query or fragment."),
  forward_headers: z.array(headerName).max(32).optional().describe('Client request headers copied to the provider.'),
  circuit_breaker: circuitBreaker.optional(),
  input_guardrails: z
    .array(z.string().min(1).max(255).describe('Guardrail slug or id.'))
    .max(32)
    .optional()
    .describe("Guardrails run on the request before it is sent (added to the parent's)."),
  output_guardrails: z
    .array(z.string().min(1).max(255).describe('Guardrail slug or id.'))
    .max(32)
    .optional()
    .describe("Guardrails run on the answer of this node's targets (added to the parent's)."),
}

const NODE_DESCRIPTION = 'One target: a provider to call, or a strategy over nested targets.'
const leafNode = z.strictObject(nodeFields)

export type ConfigNode = z.infer<typeof leafNode> & { strategy?: StrategyShape; targets?: ConfigNode[] }

interface NodeShape {
  name?: string | undefined
  provider?: string | undefined
  virtual_key?: string | undefined
  weight?: number | undefined
  strategy?: StrategyShape | undefined
  targets?: NodeShape[] | undefined
}

/** What names a provider, or is a group; the gateway's rules for every node. */
const leafRules: Array<Rule<NodeShape>> = [
  {
    rule: 'has(self.provider) || has(self.virtual_key)',
    message: 'name a provider (@slug or virtual_key)',
    check: (n) => n.provider !== undefined || n.virtual_key !== undefined,
  },
  {
    rule: '!(has(self.provider) && has(self.virtual_key))',
    message: 'name the provider once: provider or virtual_key',
    fieldPath: '.virtual_key',
    check: (n) => !(n.provider !== undefined && n.virtual_key !== undefined),
  },
]

const groupRules: Array<Rule<NodeShape>> = [
  {
    rule: 'has(self.provider) || has(self.virtual_key) || has(self.strategy) || has(self.targets)',
    message: 'name a provider (@slug or virtual_key) or a strategy with targets',
    check: (n) => n.provider !== undefined || n.virtual_key !== undefined || n.strategy !== undefined || n.targets !== undefined,
  },
  leafRules[1]!,
  {
    rule: '!((has(self.provider) || has(self.virtual_key)) && (has(self.strategy) || has(self.targets)))',
    message: 'a target names either a provider or strategy+targets, not both',
    check: (n) => !((n.provider !== undefined || n.virtual_key !== undefined) && (n.strategy !== undefined || n.targets !== undefined)),
  },
  {
    rule: 'has(self.strategy) == has(self.targets)',
    message: 'a strategy and targets go together',
    check: (n) => (n.strategy === undefined) === (n.targets === undefined),
  },
  {
    rule: "!has(self.strategy) || !has(self.targets) || self.strategy.mode != 'loadbalance' || self.targets.exists(t, !has(t.weight) || t.weight > 0)",
    message: 'a loadbalance strategy needs a target with a weight above 0',
    fieldPath: '.targets',
    check: (n) => n.strategy?.mode !== 'loadbalance' || n.targets === undefined || n.targets.some((t) => (t.weight ?? 1) > 0),
  },
  {
    rule: '!has(self.targets) || self.targets.all(t, !has(t.name) || self.targets.exists_one(u, has(u.name) && u.name == t.name))',
    message: 'target names must be unique',
    fieldPath: '.targets',
    check: (n) => {
      const names = (n.targets ?? []).flatMap((t) => (t.name === undefined ? [] : [t.name]))
      return new Set(names).size === names.length
    },
  },
  {
    rule: "!has(self.strategy) || !has(self.targets) || self.strategy.mode != 'conditional' || ((!has(self.strategy.conditions) || self.strategy.conditions.all(c, self.targets.exists(t, has(t.name) && t.name == c.then))) && (!has(self.strategy.default) || self.targets.exists(t, has(t.name) && t.name == self.strategy.default)))",
    message: 'conditions and default must name targets of this strategy',
    fieldPath: '.strategy',
    check: (n) => {
      if (n.strategy?.mode !== 'conditional' || n.targets === undefined) return true
      const names = new Set(n.targets.flatMap((t) => (t.name === undefined ? [] : [t.name])))
      const defaultOk = n.strategy.default === undefined || names.has(n.strategy.default)
      return defaultOk && (n.strategy.conditions ?? []).every((c) => names.has(c.then))
    },
  },
]

/** strategy + targets of a node that may still nest. */
function groupFields(depth: number) {
  return {
    strategy: strategy.optional(),
    targets: z
      .array(node(depth + 1))
      .min(1)
      .max(MAX_TARGETS_AT_LEVEL[depth] ?? 1)
      .optional()
      .describe(`Targets the strategy picks from (nesting level ${depth + 1} of at most ${MAX_TARGET_DEPTH}).`),
  }
}

function node(depth: number): z.ZodType<ConfigNode> {
  if (depth >= MAX_TARGET_DEPTH) return rules(leafNode.describe(NODE_DESCRIPTION), leafRules)
  return rules(z.strictObject({ ...nodeFields, ...groupFields(depth) }).describe(NODE_DESCRIPTION), groupRules)
}

export const routingConfig = rules(
  z
    .strictObject({ ...nodeFields, ...groupFields(0) })
    .describe('The routing config object: the gateway wire format (snake_case keys), a provider or a strategy over targets; naming neither, requests name their provider (x-gateway-provider, @slug/model) and the config adds retries, timeouts, caching or guardrails.'),
  // The top may name no provider: the request's headers or model do (a target may not).
  groupRules.slice(1),
)

export const configSpec = z
  .strictObject({
    name: displayName('config').optional(),
    slug: slug('config (clients send it as x-gateway-config)').optional(),
    workspace: workspaceRef(),
    isDefault: z.boolean().optional().describe("Use this config for the workspace's requests that name none."),
    config: routingConfig,
  })
  .describe('Desired state of the Config.')

export const configKind: KindDefinition = {
  kind: 'Config',
  plural: 'configs',
  shortNames: ['ghcfg'],
  description:
    'Config is a routing config: a provider, or a strategy (single, fallback, loadbalance, conditional) over nested targets, with retries, timeouts and circuit breakers. Requests select it with x-gateway-config or through a Deployment.',
  spec: configSpec,
  printerColumns: [
    { name: 'Workspace', type: 'string', jsonPath: '.spec.workspace', description: 'Owning workspace.' },
    { name: 'Strategy', type: 'string', jsonPath: '.spec.config.strategy.mode', description: 'Top-level strategy mode.' },
  ],
  selectableFields: ['.spec.workspace'],
}

export type ConfigSpec = z.infer<typeof configSpec>
export type RoutingConfig = z.infer<typeof routingConfig>
