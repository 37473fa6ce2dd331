/**
 * The policy parts of the snapshot: guardrails, limits (rate limits and budgets in one enforceable
 * form), and pricing overrides. The control plane compiles them from its store (policies, and the
 * `rate_limits`/`usage_limits` fields of keys, workspaces, providers and integrations); the gateway
 * enforces them. Each list defaults to empty so older snapshots stay valid.
 */
import { z } from 'zod'

const id = z.string().min(1).max(255)
const isoTime = z.iso.datetime({ offset: true })

export const guardrailHook = z.enum(['beforeRequestHook', 'afterRequestHook'])

/** One guardrail with its checks' parameters and its actions, as the admin API stores it. */
export const snapshotGuardrail = z.object({
  id,
  slug: z.string().min(1).max(255),
  name: z.string().min(1).max(255),
  /** Null: an organisation guardrail. */
  workspaceId: id.nullable().default(null),
  version: z.number().int().min(1).default(1),
  checks: z.array(z.object({ id: z.string().min(1).max(255), parameters: z.record(z.string(), z.unknown()).default({}), isEnabled: z.boolean().default(true) })),
  actions: z.record(z.string(), z.unknown()).default({}),
  hooks: z.array(guardrailHook).default(['beforeRequestHook']),
  /**
   * How much of a streamed answer is held back while output checks judge it: none (chunks go out
   * as they arrive), a window of the last `windowChars` characters, or the whole answer.
   */
  holdBack: z.object({ mode: z.enum(['none', 'window', 'all']), windowChars: z.number().int().min(1).max(1_000_000).default(256) }).default({ mode: 'none', windowChars: 256 }),
})

/**
 * Guardrails attached by default: the organisation's (`workspaceId` null, the spec's Org
 * Guardrails) and each workspace's (`defaults.input_guardrails` / `output_guardrails`). Input
 * guardrails run before the request, output guardrails on the answer; a guardrail attached
 * twice (organisation, workspace, config) runs once.
 */
export const snapshotGuardrailDefaults = z.object({
  workspaceId: id.nullable(),
  /** Guardrail ids. */
  input: z.array(id).default([]),
  output: z.array(id).default([]),
  /** On the organisation's entry: workspaces exempted from its guardrails (`organisation_exclusions`). */
  excludedWorkspaceIds: z.array(id).optional(),
})

/**
 * The external AI-security partner checks a guardrail may name: one contract for all of them (a
 * policy id and an adapter endpoint; the gateway's guardrails/checks/partner.ts). Shared with the
 * admin API's catalogue so both accept the same ids.
 */
export const PARTNER_CHECK_IDS = [
  'sydelabs.sydeguard', 'aporia.validateProject', 'pillar.scanPrompt', 'pillar.scanResponse', 'patronus.phi', 'patronus.pii', 'patronus.isConcise',
  'patronus.isHelpful', 'patronus.isPolite', 'patronus.noApologies', 'patronus.noGenderBias', 'patronus.noRacialBias', 'patronus.retrievalAnswerRelevance',
  'patronus.toxicity', 'patronus.custom', 'mistral.moderateContent', 'bedrock.guard', 'promptfoo.guard', 'promptfoo.pii', 'promptfoo.harm', 'acuvity.scan',
  'lasso.classify', 'azure.contentSafety', 'azure.pii', 'panw-prisma-airs.intercept',
] as const

/** Where a limit came from: a policy object, or the limits field of a key, workspace, provider or integration. */
export const limitSource = z.enum(['policy', 'api_key', 'workspace', 'provider', 'integration'])

/**
 * What a condition or a group_by entry reads from a request. `metadata.<name>` reads the caller's
 * `x-gateway-metadata`; `provider` matches a provider's id or slug; `user` is the key's user.
 */
export const limitField = z.string().min(1).max(255).regex(/^(api_key|workspace_id|organisation_id|organization_id|endpoint_type|model|provider|user|metadata\.[A-Za-z0-9_.-]{1,200})$/)

/** Rate-limit windows in milliseconds, by unit. */
export const RATE_UNIT_MS = { rps: 1_000, rpm: 60_000, rph: 3_600_000, rpd: 86_400_000, rpw: 604_800_000 } as const

/**
 * One limit, whatever declared it. A rate limit admits at most `value` requests (or tokens) in any
 * window of its `unit`; a usage limit (budget) admits spending up to `creditLimit` (USD for `cost`,
 * tokens for `tokens`) until its period resets. `conditions` select the requests it applies to (all
 * must match; a condition matches when the request's field equals one of `values`, `*` meaning any
 * value present); `groupBy` splits its counter (one per distinct combination of those fields).
 */
export const snapshotLimit = z.object({
  id,
  source: limitSource,
  /** The object the limit belongs to (policy, key, workspace, provider or integration id). */
  ownerId: id,
  /** A policy's name (or the owner's), for errors that name the limit. */
  name: z.string().min(1).max(255).nullable().default(null),
  kind: z.enum(['rate', 'usage']),
  workspaceId: id.nullable().default(null),
  conditions: z.array(z.object({ key: limitField, values: z.array(z.string().min(1).max(255)).min(1) })).default([]),
  groupBy: z.array(limitField).default([]),
  type: z.enum(['requests', 'tokens', 'cost']),
  unit: z.enum(['rps', 'rpm', 'rph', 'rpd', 'rpw']).nullable().default(null),
  value: z.number().min(0).nullable().default(null),
  creditLimit: z.number().min(0).nullable().default(null),
  alertThreshold: z.number().min(0).nullable().default(null),
  periodicReset: z.enum(['weekly', 'monthly']).nullable().default(null),
  periodicResetDays: z.number().int().min(1).max(365).nullable().default(null),
  /** Counters are keyed by period: a reset starts a new period without touching the old counter. */
  periodStartedAt: isoTime.nullable().default(null),
  /** When the current period ends (`next_usage_reset_at`): the reset time a refused caller is told. */
  periodEndsAt: isoTime.nullable().default(null),
  /** Evaluate and report, never refuse. */
  shadow: z.boolean().default(false),
  /** When the counter store is unreachable: refuse (closed) or admit (open). Null: closed for budgets and token rates, open for request rates. */
  failureMode: z.enum(['open', 'closed']).nullable().default(null),
}).superRefine((limit, ctx) => {
  if (limit.kind === 'rate' && (limit.unit === null || limit.value === null)) ctx.addIssue({ code: 'custom', path: ['unit'], message: 'a rate limit needs unit and value' })
  if (limit.kind === 'rate' && limit.type === 'cost') ctx.addIssue({ code: 'custom', path: ['type'], message: 'a rate limit counts requests or tokens' })
  if (limit.kind === 'usage' && limit.creditLimit === null) ctx.addIssue({ code: 'custom', path: ['creditLimit'], message: 'a usage limit needs creditLimit' })
  if (limit.kind === 'usage' && limit.type === 'requests') ctx.addIssue({ code: 'custom', path: ['type'], message: 'a usage limit counts cost or tokens' })
})

/** Per-model prices overriding the shipped table (USD per token, text, audio or image; per image; per second of audio; per character). */
export const snapshotPrice = z.object({
  /** Provider kind or a provider id: the most specific entry wins. */
  provider: z.string().min(1).max(255),
  model: z.string().min(1).max(255),
  workspaceId: id.nullable().default(null),
  input: z.number().min(0).nullable().default(null),
  output: z.number().min(0).nullable().default(null),
  cachedInput: z.number().min(0).nullable().default(null),
  cacheWrite: z.number().min(0).nullable().default(null),
  reasoning: z.number().min(0).nullable().default(null),
  /** Per audio token (input, output, cached input). */
  audioInput: z.number().min(0).nullable().default(null),
  audioOutput: z.number().min(0).nullable().default(null),
  cachedAudioInput: z.number().min(0).nullable().default(null),
  /** Per image input token (GPT Image models). */
  imageInput: z.number().min(0).nullable().default(null),
  /** Per image, whatever its quality and size (it replaces the table's prices by quality and size). */
  perImage: z.number().min(0).nullable().default(null),
  perAudioSecond: z.number().min(0).nullable().default(null),
  /** Per character of input (speech models billed by the character). */
  perCharacter: z.number().min(0).nullable().default(null),
  version: z.string().min(1).max(64),
})

export type SnapshotGuardrail = z.infer<typeof snapshotGuardrail>
export type SnapshotGuardrailDefaults = z.infer<typeof snapshotGuardrailDefaults>
export type SnapshotLimit = z.infer<typeof snapshotLimit>
export type SnapshotPrice = z.infer<typeof snapshotPrice>
