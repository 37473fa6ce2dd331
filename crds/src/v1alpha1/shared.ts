/**
 * Building blocks shared by every gatehouse.dev/v1alpha1 kind. Each kind's file composes these
 * into a spec schema; `../openapi.ts` turns the zod schemas into structural Kubernetes OpenAPI v3.
 *
 * Rules the schemas follow (checked by crds.test.ts):
 * - every field carries `.describe()` text: it is what `kubectl explain` prints;
 * - every string has a maxLength and every list a maxItems, which bounds the CEL cost estimate;
 * - a cross-field rule is written once with `rules()`: the CEL text goes to the CRD
 *   (x-kubernetes-validations) and the same predicate is checked by zod, so embedded mode (YAML
 *   files parsed with these schemas) refuses exactly what the API server refuses.
 */
import { z } from 'zod'

export const GROUP = 'gatehouse.dev'
export const VERSION = 'v1alpha1'
export const API_VERSION = `${GROUP}/${VERSION}`

/** One CEL rule and its JavaScript twin. `check` sees the parsed value of the annotated node. */
export interface Rule<T> {
  /** CEL expression evaluated by the API server with `self` bound to the node. */
  rule: string
  message: string
  /** Field the error points at, relative to the node (Kubernetes `fieldPath`, e.g. `.periodicResetDays`). */
  fieldPath?: string
  check: (value: T) => boolean
}

/**
 * Attaches cross-field rules to a schema: CEL for the API server, a zod refinement for embedded
 * mode. All rules of one node go in one call because the metadata key holds the whole list.
 */
export function rules<S extends z.ZodType>(schema: S, list: Array<Rule<z.output<S>>>): S {
  let refined = schema
  for (const r of list) {
    const path = r.fieldPath ? r.fieldPath.replace(/^\./, '').split('.') : []
    refined = refined.refine((v) => r.check(v as z.output<S>), { message: r.message, path }) as S
  }
  const validations = list.map((r) => ({
    rule: r.rule,
    message: r.message,
    ...(r.fieldPath ? { fieldPath: r.fieldPath } : {}),
  }))
  return refined.meta({ 'x-kubernetes-validations': validations }) as S
}

/**
 * Transition rule: the field cannot change once set (checked by the API server only; embedded
 * mode has no previous object to compare with).
 */
export function immutable<S extends z.ZodType>(schema: S, what: string): S {
  return schema.meta({ 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: `${what} is immutable` }] }) as S
}

/** A string map with a bounded number of entries (records have no native size check in zod). */
export function stringMap(description: string, maxEntries: number, maxValueLength = 1024) {
  return z
    .record(z.string().min(1).max(253), z.string().max(maxValueLength))
    .refine((m) => Object.keys(m).length <= maxEntries, { message: `at most ${maxEntries} entries` })
    .meta({ description, maxProperties: maxEntries })
}

/**
 * Genuinely free-form JSON object (guardrail parameters, request body overrides): kept as is by
 * the API server. Used only where the shape belongs to something else (a check type, a provider).
 */
export function freeForm(description: string) {
  return z
    .record(z.string(), z.unknown())
    .meta({ description, 'x-kubernetes-preserve-unknown-fields': true })
}

/** Display name as the admin API shows it (the spec's 255-character limit). */
export const displayName = (what: string) =>
  z.string().min(1).max(255).describe(`Human-readable name of the ${what}, at most 255 characters. Defaults to metadata.name.`)

/** Slug clients and the admin API use; defaults to metadata.name. */
export const slug = (what: string) =>
  z
    .string()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/)
    .describe(
      `Slug of the ${what} in the admin API and in requests, at most 255 characters of letters, digits, '_', '.' and '-'. Defaults to metadata.name.`,
    )

/** Name of another object in the same namespace (Kubernetes object names are DNS subdomains). */
export const objectName = (description: string) =>
  z
    .string()
    .min(1)
    .max(253)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/)
    .describe(description)

export const workspaceRef = () =>
  objectName(
    'Name of the Workspace (in this namespace) this object belongs to. Omitted: the object is organisation-wide.',
  ).optional()

/** Reference to one key of a Secret in the same namespace; the only way credentials enter a CR. */
export const secretKeyRef = z
  .strictObject({
    name: objectName('Name of the Secret, in the same namespace as this object.'),
    key: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[-._a-zA-Z0-9]+$/)
      .describe('Key inside the Secret whose value is used.'),
  })
  .describe('Reference to one key of a Secret in the same namespace.')

export const RATE_LIMIT_UNITS = ['rpm', 'rph', 'rpd', 'rpw'] as const
export const PERIODIC_RESETS = ['weekly', 'monthly'] as const

export const rateLimit = z
  .strictObject({
    type: z.enum(['requests', 'tokens']).describe('What is counted: requests, or tokens (input plus output).'),
    unit: z
      .enum(RATE_LIMIT_UNITS)
      .describe('Window of the limit: rpm (per minute), rph (per hour), rpd (per day) or rpw (per week).'),
    value: z.int().min(0).max(1_000_000_000_000).describe('Maximum count per window. 0 blocks every request.'),
  })
  .describe('A rate limit: at most value requests or tokens per unit of time.')

/** Unique (type, unit) pairs: two limits on the same window would contradict each other. */
export const rateLimitList = (owner: string) =>
  rules(
    z
      .array(rateLimit)
      .max(8)
      .describe(`Rate limits of the ${owner}; at most one per (type, unit) pair.`),
    [
      {
        rule: 'self.all(a, self.exists_one(b, b.type == a.type && b.unit == a.unit))',
        message: 'rate limits must not repeat a (type, unit) pair',
        check: (list) => new Set(list.map((l) => `${l.type}/${l.unit}`)).size === list.length,
      },
    ],
  )

/** Shared by usage limits on workspaces/providers and by UsageLimitPolicy. */
/**
 * How a limit policy is enforced, named after the Kubernetes AI Gateway working group's draft
 * rate-limit policy (`shadowMode`; FailOpen/FailClosed): `shadowMode` evaluates and reports
 * without refusing; `failureMode` says what happens while the counter store is unreachable.
 */
export const limitEnforcementFields = {
  shadowMode: z
    .boolean()
    .optional()
    .describe('Evaluate and report (metric, usage record, x-gateway-limits-shadow header) without refusing any request; for rolling a limit out safely.'),
  failureMode: z
    .enum(['FailOpen', 'FailClosed'])
    .optional()
    .describe('While the counter store (Redis) is unreachable: FailClosed answers 503, FailOpen admits under a per-replica fallback limit. Default: FailClosed for budgets and token rates, FailOpen for request rates.'),
}

export const usageLimitFields = {
  type: z.enum(['cost', 'tokens']).describe('What is budgeted: cost (US dollars) or tokens.'),
  creditLimit: z
    .int()
    .min(0)
    .max(1_000_000_000_000)
    .describe('Budget for the period: whole US dollars for type cost, tokens for type tokens.'),
  alertThreshold: z
    .int()
    .min(0)
    .max(1_000_000_000_000)
    .optional()
    .describe('Usage at which an alert is sent; must be below creditLimit.'),
  periodicReset: z
    .enum(PERIODIC_RESETS)
    .optional()
    .describe('Calendar reset of the usage: weekly or monthly. Mutually exclusive with periodicResetDays; neither means cumulative.'),
  periodicResetDays: z
    .int()
    .min(1)
    .max(365)
    .optional()
    .describe('Reset the usage every N days (1 to 365). Mutually exclusive with periodicReset.'),
  nextUsageResetAt: z.iso
    .datetime({ offset: true })
    .max(64)
    .optional()
    .describe('Instant (RFC 3339) of the next reset; computed from the period when omitted.'),
}

interface UsageLimitShape {
  creditLimit: number
  alertThreshold?: number | undefined
  periodicReset?: string | undefined
  periodicResetDays?: number | undefined
}

export const usageLimitRules: Array<Rule<UsageLimitShape>> = [
  {
    rule: '!(has(self.periodicReset) && has(self.periodicResetDays))',
    message: 'periodicReset and periodicResetDays are mutually exclusive',
    fieldPath: '.periodicResetDays',
    check: (v) => !(v.periodicReset !== undefined && v.periodicResetDays !== undefined),
  },
  {
    rule: '!has(self.alertThreshold) || self.alertThreshold < self.creditLimit',
    message: 'alertThreshold must be below creditLimit',
    fieldPath: '.alertThreshold',
    check: (v) => v.alertThreshold === undefined || v.alertThreshold < v.creditLimit,
  },
]

export const usageLimit = rules(
  z.strictObject(usageLimitFields).describe('A usage budget: a credit limit per period, in cost or tokens.'),
  usageLimitRules,
)

const conditionKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^(api_key|workspace_id|organisation_id|endpoint_type|metadata\.[A-Za-z0-9_.-]{1,200})$/)

export const policyConditions = z
  .array(
    z
      .strictObject({
        key: conditionKey.describe(
          'Request attribute to match: api_key, workspace_id, organisation_id, endpoint_type or metadata.<key>.',
        ),
        value: z.string().min(1).max(255).describe('Value the attribute must have; "*" matches any value.'),
      })
      .describe('One condition; a request matches when every condition holds.'),
  )
  .min(1)
  .max(16)
  .describe('Which requests the policy applies to (at least one condition).')

export const policyGroupBy = z
  .array(
    z
      .strictObject({
        key: conditionKey.describe(
          'Attribute usage is aggregated by: api_key, workspace_id, organisation_id, endpoint_type or metadata.<key>.',
        ),
      })
      .describe('One aggregation key.'),
  )
  .min(1)
  .max(8)
  .describe('How usage is aggregated: one counter per distinct combination of these keys (at least one).')

/** metav1.Condition, as every Kubernetes API writes it. */
export const condition = z
  .object({
    type: z
      .string()
      .min(1)
      .max(316)
      .describe('Condition type: Accepted (spec valid, references resolved), Programmed (gateways ACKed the snapshot) or Ready.'),
    status: z.enum(['True', 'False', 'Unknown']).describe('Status of the condition: True, False or Unknown.'),
    observedGeneration: z
      .int()
      .min(0)
      .optional()
      .describe('metadata.generation the condition was computed from.'),
    lastTransitionTime: z.iso
      .datetime({ offset: true })
      .max(64)
      .describe('Last time the status changed (RFC 3339).'),
    reason: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
      .describe('CamelCase machine-readable reason of the last transition.'),
    message: z.string().max(32768).describe('Human-readable detail of the last transition.'),
  })
  .describe('One observation of the state of this object.')

export const commonStatus = z
  .object({
    observedGeneration: z
      .int()
      .min(0)
      .optional()
      .describe('The metadata.generation most recently processed by the operator.'),
    conditions: z
      .array(condition)
      .max(8)
      .optional()
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
      .describe('Latest observations: Accepted, Programmed and Ready, one entry per type.'),
    adminId: z
      .string()
      .max(255)
      .optional()
      .describe('Identifier of the record the operator manages in the admin store for this object.'),
  })
  .describe('Observed state, written by the operator through the status subresource.')

export type Condition = z.infer<typeof condition>
export type ResourceStatus = z.infer<typeof commonStatus>

/** Object metadata as parsed from YAML files in embedded mode; the API server owns the real schema. */
export const objectMeta = z.looseObject({
  name: objectName('Object name (a DNS subdomain).'),
  namespace: objectName('Namespace of the object.').optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
})
