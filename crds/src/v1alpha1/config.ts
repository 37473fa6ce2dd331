/**
 * Config: a routing config (strategy, targets, retries, cache, timeouts, guardrails). `spec.config`
 * is the same JSON object the admin API stores and clients may send inline, so its keys keep the
 * wire format's snake_case; everything around it follows Kubernetes camelCase.
 */
import { z } from 'zod'
import { displayName, freeForm, objectName, rules, slug, workspaceRef, type Rule } from './shared.ts'
import type { KindDefinition } from './kind.ts'

/**
 * Targets nest (a fallback whose second target load-balances, ...). Structural schemas cannot
 * recurse, so the schema is unrolled to this many levels of `targets` below the top object.
 */
export const MAX_TARGET_DEPTH = 3
const MAX_TARGETS = 16

const statusCodes = (description: string) =>
  z
    .array(z.int().min(100).max(599).describe('HTTP status code.'))
    .max(32)
    .describe(description)

const guardrailList = (hook: string) =>
  z
    .array(objectName('Name of a Guardrail in this namespace.'))
    .max(32)
    .describe(`Guardrails (by name, in order) run on ${hook}.`)

const retry = z
  .strictObject({
    attempts: z.int().min(0).max(10).describe('Retries after the first attempt (0 to 10).'),
    on_status_codes: statusCodes(
      'Upstream status codes that trigger a retry. Default: 429, 500, 502, 503, 504.',
    ).optional(),
    use_retry_after_header: z
      .boolean()
      .optional()
      .describe("Wait as long as the upstream's retry-after header says before retrying."),
  })
  .describe('Retry policy for failed upstream calls (only before the first byte reached the client).')

const cache = z
  .strictObject({
    mode: z.enum(['simple', 'semantic']).describe('simple: exact match of the request; semantic: similar prompts.'),
    max_age: z.int().min(1).max(31_536_000).optional().describe('Lifetime of a cached response in seconds.'),
  })
  .describe('Response cache.')

const circuitBreaker = z
  .strictObject({
    failure_threshold: z.int().min(1).max(1000).describe('Failures in a row that open the circuit.'),
    cooldown_interval: z
      .int()
      .min(30_000)
      .max(86_400_000)
      .describe('Milliseconds the circuit stays open before a trial request (at least 30000).'),
    failure_status_codes: statusCodes('Status codes counted as failures. Default: 5xx and 429.').optional(),
  })
  .describe('Circuit breaker for the targets of this strategy.')

const strategy = rules(
  z
    .strictObject({
      mode: z
        .enum(['single', 'fallback', 'loadbalance', 'conditional'])
        .describe('single: first target; fallback: next target on failure; loadbalance: by weight; conditional: by request metadata/params.'),
      on_status_codes: statusCodes('Status codes that make fallback move to the next target. Default: any non-2xx.').optional(),
      conditions: z
        .array(
          z
            .strictObject({
              query: freeForm(
                'Filter over request metadata and params (operators $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $regex, $and, $or).',
              ),
              then: z.string().min(1).max(255).describe('Name of the target used when the query matches.'),
            })
            .describe('One routing condition.'),
        )
        .max(16)
        .optional()
        .describe('Conditions evaluated in order (conditional mode).'),
      default: z
        .string()
        .min(1)
        .max(255)
        .optional()
        .describe('Target name used when no condition matches (conditional mode).'),
    })
    .describe('How the targets are used.'),
  [
    {
      rule: "self.mode != 'conditional' || (has(self.conditions) && size(self.conditions) > 0)",
      message: 'conditional mode needs at least one condition',
      fieldPath: '.conditions',
      check: (s) => s.mode !== 'conditional' || (s.conditions?.length ?? 0) > 0,
    },
  ],
)

/** Fields a config level shares with every target. */
const commonFields = {
  provider: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe('Provider to call: @<slug> of a Provider (or its name).'),
  override_params: freeForm('Request body fields forced on every request (for example model).').optional(),
  default_params: freeForm('Request body fields set when the request omits them.').optional(),
  drop_params: z
    .array(z.string().min(1).max(256).describe('Path such as "a.b[0]" or "x[*].y".'))
    .max(64)
    .optional()
    .describe('Request body paths removed before forwarding.'),
  custom_host: z
    .string()
    .max(2048)
    .regex(/^https?:\/\/[^\s/?#]+[^\s]*$/)
    .optional()
    .describe("Base URL that replaces the provider's for this target."),
  forward_headers: z
    .array(z.string().min(1).max(256).describe('Header name.'))
    .max(64)
    .optional()
    .describe('Client request headers forwarded to the provider.'),
  request_timeout: z
    .int()
    .min(1)
    .max(3_600_000)
    .optional()
    .describe('Milliseconds before the upstream call is abandoned with 408.'),
  retry: retry.optional(),
  cache: cache.optional(),
  cb_config: circuitBreaker.optional(),
  strict_open_ai_compliance: z
    .boolean()
    .optional()
    .describe('Drop provider-specific fields from responses so they match the OpenAI schema exactly.'),
  input_guardrails: guardrailList('beforeRequestHook').optional(),
  output_guardrails: guardrailList('afterRequestHook').optional(),
}

/** Fields only a target (not the top object) has. */
const targetFields = {
  name: z.string().min(1).max(255).optional().describe('Target name, used by conditional routing.'),
  weight: z
    .number()
    .min(0)
    .max(1000)
    .optional()
    .describe('Share of traffic in loadbalance mode (relative to the other weights). Default 1.'),
  on_status_codes: statusCodes('Status codes that count as failure for this target.').optional(),
}

const TARGET_DESCRIPTION = 'One target: a provider call or a nested config.'
const leafTarget = z.strictObject({ ...commonFields, ...targetFields }).describe(TARGET_DESCRIPTION)

export type Strategy = z.infer<typeof strategy>
export type ConfigTarget = z.infer<typeof leafTarget> & { strategy?: Strategy; targets?: ConfigTarget[] }

interface NestingShape {
  strategy?: Strategy | undefined
  targets?: Array<{ name?: string | undefined }> | undefined
}

/** Rules of every level that can nest targets, written once and attached at each unrolled level. */
const nestingRules: Array<Rule<NestingShape>> = [
  {
    rule: 'has(self.strategy) == has(self.targets)',
    message: 'strategy and targets go together',
    check: (c) => (c.strategy === undefined) === (c.targets === undefined),
  },
  {
    rule: "!has(self.strategy) || self.strategy.mode != 'conditional' || !has(self.strategy.conditions) || !has(self.targets) || self.strategy.conditions.all(c, self.targets.exists(t, has(t.name) && t.name == c.then))",
    message: 'every condition must name a target of this config',
    check: (c) =>
      c.strategy?.mode !== 'conditional' ||
      c.targets === undefined ||
      (c.strategy.conditions ?? []).every((cond) => (c.targets ?? []).some((t) => t.name === cond.then)),
  },
]

/** strategy + targets of a level that may still nest. */
function nestingFields(depth: number) {
  return {
    strategy: strategy.optional(),
    targets: z
      .array(target(depth + 1))
      .max(MAX_TARGETS)
      .optional()
      .describe(`Targets the strategy picks from (nesting level ${depth + 1} of at most ${MAX_TARGET_DEPTH}).`),
  }
}

function target(depth: number): z.ZodType<ConfigTarget> {
  if (depth >= MAX_TARGET_DEPTH) return leafTarget
  return rules(
    z.strictObject({ ...commonFields, ...targetFields, ...nestingFields(depth) }).describe(TARGET_DESCRIPTION),
    nestingRules,
  )
}

/** A config must do something: the same validity rule the admin API applies. */
const ROUTING_FIELDS = ['provider', 'targets', 'cache', 'retry', 'request_timeout', 'input_guardrails', 'output_guardrails']

const topLevelRules: Array<Rule<NestingShape & Record<string, unknown>>> = [
  ...nestingRules,
  {
    rule: ROUTING_FIELDS.map((f) => `has(self.${f})`).join(' || '),
    message: 'a config needs at least one of provider, strategy+targets, cache, retry, request_timeout or guardrails',
    check: (c) => ROUTING_FIELDS.some((f) => c[f] !== undefined),
  },
]

export const routingConfig = rules(
  z
    .strictObject({ ...commonFields, ...nestingFields(0) })
    .describe('The routing config object, in the admin API wire format (snake_case keys).'),
  topLevelRules,
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
  description: 'Config is a routing config: strategy (single, fallback, loadbalance, conditional), targets, retries, cache, timeouts and guardrails. Requests select it with x-gateway-config or through a Deployment.',
  spec: configSpec,
  printerColumns: [
    { name: 'Workspace', type: 'string', jsonPath: '.spec.workspace', description: 'Owning workspace.' },
    { name: 'Strategy', type: 'string', jsonPath: '.spec.config.strategy.mode', description: 'Top-level strategy mode.' },
  ],
  selectableFields: ['.spec.workspace'],
}

export type ConfigSpec = z.infer<typeof configSpec>
export type RoutingConfig = z.infer<typeof routingConfig>
