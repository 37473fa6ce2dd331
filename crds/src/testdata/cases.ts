/**
 * Valid baseline objects and one invalid variant per bound and per CEL rule. Both the zod twin
 * (crds/src/crds.test.ts) and the real API server (test/k8s/crds.test.ts) run every case, which
 * keeps the CRDs and embedded mode refusing the same things.
 */
import { API_VERSION } from '../v1alpha1/shared.ts'

/** Mutations reach into arbitrary JSON paths of a test object; typing each path adds nothing. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type Loose = Record<string, any>

export type Obj = Record<string, unknown> & { kind: string; metadata: { name: string } }

const meta = (name: string) => ({ name })
const long = (n: number) => 'a'.repeat(n)

export const baseline: Record<string, () => Obj> = {
  Workspace: () => ({
    apiVersion: API_VERSION,
    kind: 'Workspace',
    metadata: meta('ws'),
    spec: {
      name: 'Team A',
      usageLimits: [{ type: 'cost', creditLimit: 100, periodicReset: 'monthly' }],
      rateLimits: [{ type: 'requests', unit: 'rpm', value: 60 }],
    },
  }),
  Provider: () => ({
    apiVersion: API_VERSION,
    kind: 'Provider',
    metadata: meta('prov'),
    spec: { kind: 'openai', secretRef: { name: 'openai', key: 'apiKey' } },
  }),
  Config: () => ({
    apiVersion: API_VERSION,
    kind: 'Config',
    metadata: meta('cfg'),
    spec: {
      config: {
        strategy: { mode: 'fallback' },
        targets: [{ provider: '@a' }, { provider: '@b' }],
        retry: { attempts: 2 },
      },
    },
  }),
  RateLimitPolicy: () => ({
    apiVersion: API_VERSION,
    kind: 'RateLimitPolicy',
    metadata: meta('rlp'),
    spec: {
      conditions: [{ key: 'workspace_id', value: 'ws' }],
      groupBy: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 100,
    },
  }),
  UsageLimitPolicy: () => ({
    apiVersion: API_VERSION,
    kind: 'UsageLimitPolicy',
    metadata: meta('ulp'),
    spec: {
      conditions: [{ key: 'workspace_id', value: 'ws' }],
      groupBy: [{ key: 'api_key' }],
      type: 'cost',
      creditLimit: 50,
    },
  }),
  Deployment: () => ({
    apiVersion: API_VERSION,
    kind: 'Deployment',
    metadata: meta('dep'),
    spec: { type: 'production', config: 'cfg' },
  }),
  Guardrail: () => ({
    apiVersion: API_VERSION,
    kind: 'Guardrail',
    metadata: meta('gr'),
    spec: {
      checks: [{ id: 'default.regexMatch', parameters: { rule: '\\d{16}', not: true } }],
      hooks: ['beforeRequestHook'],
      actions: { deny: true },
    },
  }),
}

export interface InvalidCase {
  name: string
  kind: keyof typeof baseline
  /** Makes the baseline invalid in exactly one way. */
  mutate: (spec: Loose) => void
  /** Path of the offending field (zod problem path; also named in the API server's message). */
  path: string
  /** Substring of the API server's error message. */
  apiMessage: string
}

export const invalidCases: InvalidCase[] = [
  // Workspace
  { name: 'name over 255 chars', kind: 'Workspace', mutate: (s) => (s.name = long(256)), path: 'spec.name', apiMessage: 'Too long' },
  { name: 'slug over 255 chars', kind: 'Workspace', mutate: (s) => (s.slug = long(256)), path: 'spec.slug', apiMessage: 'Too long' },
  {
    name: 'periodicReset with periodicResetDays',
    kind: 'Workspace',
    mutate: (s) => (s.usageLimits[0].periodicResetDays = 30),
    path: 'spec.usageLimits[0].periodicResetDays',
    apiMessage: 'periodicReset and periodicResetDays are mutually exclusive',
  },
  {
    name: 'periodicResetDays 0',
    kind: 'Workspace',
    mutate: (s) => (s.usageLimits[0] = { type: 'tokens', creditLimit: 10, periodicResetDays: 0 }),
    path: 'spec.usageLimits[0].periodicResetDays',
    apiMessage: 'should be greater than or equal to 1',
  },
  {
    name: 'periodicResetDays 366',
    kind: 'Workspace',
    mutate: (s) => (s.usageLimits[0] = { type: 'tokens', creditLimit: 10, periodicResetDays: 366 }),
    path: 'spec.usageLimits[0].periodicResetDays',
    apiMessage: 'should be less than or equal to 365',
  },
  {
    name: 'periodicReset outside weekly|monthly',
    kind: 'Workspace',
    mutate: (s) => (s.usageLimits[0].periodicReset = 'daily'),
    path: 'spec.usageLimits[0].periodicReset',
    apiMessage: 'Unsupported value: "daily"',
  },
  {
    name: 'alertThreshold not below creditLimit',
    kind: 'Workspace',
    mutate: (s) => (s.usageLimits[0].alertThreshold = 100),
    path: 'spec.usageLimits[0].alertThreshold',
    apiMessage: 'alertThreshold must be below creditLimit',
  },
  {
    name: 'rate limit unit rps',
    kind: 'Workspace',
    mutate: (s) => (s.rateLimits[0].unit = 'rps'),
    path: 'spec.rateLimits[0].unit',
    apiMessage: 'Unsupported value: "rps"',
  },
  {
    name: 'duplicate rate limit window',
    kind: 'Workspace',
    mutate: (s) => s.rateLimits.push({ type: 'requests', unit: 'rpm', value: 5 }),
    path: 'spec.rateLimits',
    apiMessage: 'rate limits must not repeat a (type, unit) pair',
  },
  // Provider
  { name: 'unknown provider kind', kind: 'Provider', mutate: (s) => (s.kind = 'acme'), path: 'spec.kind', apiMessage: 'Unsupported value: "acme"' },
  {
    name: 'inline API key',
    kind: 'Provider',
    mutate: (s) => (s.apiKey = 'sk-inline'),
    path: 'spec',
    apiMessage: 'unknown field "spec.apiKey"',
  },
  {
    name: 'secretRef without key',
    kind: 'Provider',
    mutate: (s) => (s.secretRef = { name: 'openai' }),
    path: 'spec.secretRef.key',
    apiMessage: 'spec.secretRef.key: Required value',
  },
  {
    name: 'no secretRef for a hosted provider',
    kind: 'Provider',
    mutate: (s) => delete s.secretRef,
    path: 'spec.secretRef',
    apiMessage: 'secretRef is required for this provider kind',
  },
  {
    name: 'vllm without baseUrl',
    kind: 'Provider',
    mutate: (s) => ((s.kind = 'vllm'), delete s.secretRef),
    path: 'spec.baseUrl',
    apiMessage: 'baseUrl is required for vllm',
  },
  {
    name: 'azure-openai without resourceName',
    kind: 'Provider',
    mutate: (s) => ((s.kind = 'azure-openai'), (s.options = { apiVersion: '2024-10-21' })),
    path: 'spec.options',
    apiMessage: 'azure-openai needs options.resourceName',
  },
  { name: 'baseUrl not http(s)', kind: 'Provider', mutate: (s) => (s.baseUrl = 'ftp://x'), path: 'spec.baseUrl', apiMessage: 'should match' },
  { name: 'provider name over 255', kind: 'Provider', mutate: (s) => (s.name = long(256)), path: 'spec.name', apiMessage: 'Too long' },
  // Config (the gateway's routing-config rules, see test/k8s/config-compat.test.ts)
  {
    name: 'retry attempts 11',
    kind: 'Config',
    mutate: (s) => (s.config.retry.attempts = 11),
    path: 'spec.config.retry.attempts',
    apiMessage: 'should be less than or equal to 10',
  },
  {
    name: 'unknown strategy mode',
    kind: 'Config',
    mutate: (s) => (s.config.strategy.mode = 'random'),
    path: 'spec.config.strategy.mode',
    apiMessage: 'Unsupported value: "random"',
  },
  {
    name: 'strategy without targets',
    kind: 'Config',
    mutate: (s) => delete s.config.targets,
    path: 'spec.config',
    apiMessage: 'a strategy and targets go together',
  },
  {
    name: 'provider and strategy on one node',
    kind: 'Config',
    mutate: (s) => (s.config.provider = '@a'),
    path: 'spec.config',
    apiMessage: 'a target names either a provider or strategy+targets, not both',
  },
  {
    name: 'target without provider',
    kind: 'Config',
    mutate: (s) => (s.config.targets[1] = { weight: 2 }),
    path: 'spec.config.targets[1]',
    apiMessage: 'name a provider (@slug or virtual_key) or a strategy with targets',
  },
  {
    name: 'conditional without conditions',
    kind: 'Config',
    mutate: (s) => (s.config.strategy.mode = 'conditional'),
    path: 'spec.config.strategy.conditions',
    apiMessage: 'a conditional strategy needs conditions',
  },
  {
    name: 'condition naming no target',
    kind: 'Config',
    mutate: (s) =>
      (s.config.strategy = { mode: 'conditional', conditions: [{ query: { 'metadata.tier': { $eq: 'pro' } }, then: 'missing' }] }),
    path: 'spec.config.strategy',
    apiMessage: 'conditions and default must name targets of this strategy',
  },
  {
    name: 'on_status_codes on a loadbalance strategy',
    kind: 'Config',
    mutate: (s) => ((s.config.strategy.mode = 'loadbalance'), (s.config.strategy.on_status_codes = [503])),
    path: 'spec.config.strategy.on_status_codes',
    apiMessage: 'only a fallback strategy uses on_status_codes',
  },
  {
    name: 'loadbalance with every weight 0',
    kind: 'Config',
    mutate: (s) => ((s.config.strategy.mode = 'loadbalance'), s.config.targets.forEach((t: Loose) => (t.weight = 0))),
    path: 'spec.config.targets',
    apiMessage: 'a loadbalance strategy needs a target with a weight above 0',
  },
  {
    name: 'duplicate target names',
    kind: 'Config',
    mutate: (s) => s.config.targets.forEach((t: Loose) => (t.name = 'same')),
    path: 'spec.config.targets',
    apiMessage: 'target names must be unique',
  },
  {
    name: 'circuit breaker cooldown below 1s',
    kind: 'Config',
    mutate: (s) => (s.config.targets[0].circuit_breaker = { failure_threshold: 3, cooldown_ms: 10 }),
    path: 'spec.config.targets[0].circuit_breaker.cooldown_ms',
    apiMessage: 'should be greater than or equal to 1000',
  },
  {
    name: 'backoff_max_ms below backoff_initial_ms',
    kind: 'Config',
    mutate: (s) => Object.assign(s.config.retry, { backoff_initial_ms: 500, backoff_max_ms: 100 }),
    path: 'spec.config.retry.backoff_max_ms',
    apiMessage: 'backoff_max_ms must be at least backoff_initial_ms',
  },
  {
    name: 'forwarding the Authorization header',
    kind: 'Config',
    mutate: (s) => (s.config.targets[0].forward_headers = ['Authorization']),
    path: 'spec.config.targets[0].forward_headers[0]',
    apiMessage: 'this header is never forwarded',
  },
  {
    name: 'custom_host with a query',
    kind: 'Config',
    mutate: (s) => (s.config.targets[0].custom_host = 'https://llm.example.com/v1?key=x'),
    path: 'spec.config.targets[0].custom_host',
    apiMessage: 'should match',
  },
  {
    name: 'inline api_key in a target',
    kind: 'Config',
    mutate: (s) => (s.config.targets[0].api_key = 'sk-inline'),
    path: 'spec.config.targets[0]',
    apiMessage: 'unknown field "spec.config.targets[0].api_key"',
  },
  {
    name: 'status code out of range',
    kind: 'Config',
    mutate: (s) => (s.config.retry.on_status_codes = [99]),
    path: 'spec.config.retry.on_status_codes[0]',
    apiMessage: 'should be greater than or equal to 100',
  },
  // RateLimitPolicy
  { name: 'no conditions', kind: 'RateLimitPolicy', mutate: (s) => (s.conditions = []), path: 'spec.conditions', apiMessage: 'should have at least 1 items' },
  { name: 'no groupBy', kind: 'RateLimitPolicy', mutate: (s) => (s.groupBy = []), path: 'spec.groupBy', apiMessage: 'should have at least 1 items' },
  { name: 'unit rps', kind: 'RateLimitPolicy', mutate: (s) => (s.unit = 'rps'), path: 'spec.unit', apiMessage: 'Unsupported value: "rps"' },
  { name: 'type cost', kind: 'RateLimitPolicy', mutate: (s) => (s.type = 'cost'), path: 'spec.type', apiMessage: 'Unsupported value: "cost"' },
  { name: 'policy name over 255', kind: 'RateLimitPolicy', mutate: (s) => (s.name = long(256)), path: 'spec.name', apiMessage: 'Too long' },
  {
    name: 'unknown condition key',
    kind: 'RateLimitPolicy',
    mutate: (s) => (s.conditions[0].key = 'region'),
    path: 'spec.conditions[0].key',
    apiMessage: 'should match',
  },
  // UsageLimitPolicy
  {
    name: 'policy periodicReset with periodicResetDays',
    kind: 'UsageLimitPolicy',
    mutate: (s) => ((s.periodicReset = 'weekly'), (s.periodicResetDays = 7)),
    path: 'spec.periodicResetDays',
    apiMessage: 'periodicReset and periodicResetDays are mutually exclusive',
  },
  {
    name: 'policy periodicResetDays 366',
    kind: 'UsageLimitPolicy',
    mutate: (s) => (s.periodicResetDays = 366),
    path: 'spec.periodicResetDays',
    apiMessage: 'should be less than or equal to 365',
  },
  { name: 'usage policy without groupBy', kind: 'UsageLimitPolicy', mutate: (s) => (s.groupBy = []), path: 'spec.groupBy', apiMessage: 'should have at least 1 items' },
  // Deployment
  { name: 'deployment type staging', kind: 'Deployment', mutate: (s) => (s.type = 'staging'), path: 'spec.type', apiMessage: 'Unsupported value: "staging"' },
  {
    name: 'allowAllWorkspaces with workspaces',
    kind: 'Deployment',
    mutate: (s) => ((s.allowAllWorkspaces = true), (s.workspaces = ['ws'])),
    path: 'spec.workspaces',
    apiMessage: 'allowAllWorkspaces and workspaces are mutually exclusive',
  },
  {
    name: 'sidecar binding admitting nobody',
    kind: 'Deployment',
    mutate: (s) => (s.sidecar = { workspace: 'ws', serviceAccounts: [] }),
    path: 'spec.sidecar',
    apiMessage: 'a sidecar binding admits at least one service account or namespace',
  },
  // Guardrail
  {
    name: 'deny and async',
    kind: 'Guardrail',
    mutate: (s) => (s.actions.async = true),
    path: 'spec.actions',
    apiMessage: 'deny and async are mutually exclusive',
  },
  { name: 'no checks', kind: 'Guardrail', mutate: (s) => (s.checks = []), path: 'spec.checks', apiMessage: 'should have at least 1 items' },
  { name: 'unknown hook', kind: 'Guardrail', mutate: (s) => (s.hooks = ['onRequest']), path: 'spec.hooks[0]', apiMessage: 'Unsupported value: "onRequest"' },
  { name: 'no hooks', kind: 'Guardrail', mutate: (s) => (s.hooks = []), path: 'spec.hooks', apiMessage: 'should have at least 1 items' },
  { name: 'check id without a namespace', kind: 'Guardrail', mutate: (s) => (s.checks[0].id = 'regexMatch'), path: 'spec.checks[0].id', apiMessage: 'should match' },
]

/** The baseline object of the case with the case's mutation applied. */
export function invalidObject(c: InvalidCase): Obj {
  const obj = baseline[c.kind]!()
  c.mutate(obj.spec as Loose)
  obj.metadata.name = `bad-${c.name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')}`.slice(0, 63)
  return obj
}
