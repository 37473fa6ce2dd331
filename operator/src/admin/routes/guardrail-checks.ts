/**
 * The guardrail check catalogue: which check ids exist and what parameters each takes, with the
 * spec's defaults (inline image URLs: maxSizeBytes 20 MiB, timeoutMs 30000, failOnError false;
 * partner checks: timeout 10000 ms). Checks are stored validated and defaulted; enforcement is
 * the gateway's. Ids outside the catalogue are refused so a typo is a 400, not a silent no-op.
 */
import { RE2JS } from 're2js'
import { z } from 'zod'
import { PARTNER_CHECK_IDS } from '@gatehouse/gateway/snapshot'

export const INLINE_IMAGE_MAX_SIZE_BYTES_DEFAULT = 20 * 1024 * 1024
export const INLINE_IMAGE_TIMEOUT_MS_DEFAULT = 30_000
export const PARTNER_TIMEOUT_MS_DEFAULT = 10_000
const MAX_TIMEOUT_MS = 120_000

/** The gateway's endpoint vocabulary, for allowed/blocked request types. */
export const REQUEST_TYPES = [
  'complete', 'chatComplete', 'embed', 'rerank', 'moderate', 'proxy', 'imageGenerate', 'createSpeech', 'createTranscription',
  'createTranslation', 'realtime', 'uploadFile', 'listFiles', 'retrieveFile', 'deleteFile', 'retrieveFileContent', 'createBatch',
  'retrieveBatch', 'cancelBatch', 'listBatches', 'getBatchOutput', 'listFinetunes', 'createFinetune', 'retrieveFinetune',
  'cancelFinetune', 'createModelResponse', 'getModelResponse', 'deleteModelResponse', 'listResponseInputItems', 'messages',
] as const

const not = z.boolean().default(false)
const timeout = (defaultMs: number) => z.int().min(1).max(MAX_TIMEOUT_MS).default(defaultMs)
const words = z.array(z.string().min(1).max(1000)).min(1).max(1000)
const count = z.int().min(0).max(10_000_000)

function isRe2(rule: string): boolean {
  try {
    RE2JS.compile(rule)
    return true
  } catch {
    return false
  }
}

const names = z.array(z.string().min(1).max(255)).min(1).max(256).optional()
const scalars = z.array(z.union([z.string().max(1000), z.number(), z.boolean()])).min(1).max(256)

const requestTypes = z.strictObject({
  allowedTypes: z.array(z.enum(REQUEST_TYPES)).min(1).max(REQUEST_TYPES.length).optional(),
  blockedTypes: z.array(z.enum(REQUEST_TYPES)).min(1).max(REQUEST_TYPES.length).optional(),
}).refine((p) => (p.allowedTypes === undefined) !== (p.blockedTypes === undefined), { message: 'give allowedTypes or blockedTypes (one of them)', path: ['allowedTypes'] })

/** Parameters per deterministic check id. */
const DEFAULT_CHECKS: Record<string, z.ZodType> = {
  'default.requiredMetadataKeyPairs': z.strictObject({
    metadataPairs: z.record(z.string().min(1).max(255), z.string().max(1024)).refine((pairs) => Object.keys(pairs).length >= 1 && Object.keys(pairs).length <= 64, 'between 1 and 64 key-value pairs'),
    operator: z.enum(['all', 'any', 'none']).default('all'),
  }),
  'default.requiredMetadataKeys': z.strictObject({ metadataKeys: z.array(z.string().min(1).max(255)).min(1).max(64), operator: z.enum(['all', 'any', 'none']).default('all') }),
  'default.inlineImageUrls': z.strictObject({
    /** Provider kinds the images are put inline for (default: every provider). */
    providers: z.array(z.string().min(1).max(64)).min(1).max(64).optional(),
    maxSizeBytes: z.int().min(1).max(100 * 1024 * 1024).default(INLINE_IMAGE_MAX_SIZE_BYTES_DEFAULT),
    timeoutMs: timeout(INLINE_IMAGE_TIMEOUT_MS_DEFAULT),
    failOnError: z.boolean().default(false),
  }),
  'default.requestParamsCheck': z.strictObject({
    tools: z.strictObject({ blockedTypes: names, allowedTypes: names, blockedFunctionNames: names, allowedFunctionNames: names }).optional(),
    params: z.strictObject({
      blockedKeys: names,
      allowedKeys: names,
      /** Per parameter: the values it may or may not take. */
      values: z.record(z.string().min(1).max(255), z.strictObject({ blockedValues: scalars.optional(), allowedValues: scalars.optional() })).optional(),
    }).optional(),
  }).refine((p) => p.tools !== undefined || p.params !== undefined, { message: 'give tools or params', path: ['tools'] }),
  'default.addPrefix': z.strictObject({
    prefix: z.string().min(1).max(10_000),
    applyToRole: z.enum(['system', 'user']).default('user'),
    addToExisting: z.boolean().default(true),
  }),
  'default.allowedRequestTypes': requestTypes,
  'default.regexMatch': z.strictObject({ rule: z.string().min(1).max(256).refine(isRe2, 'not a valid RE2 regular expression (gateways run rules in linear time: no backreferences or lookarounds)'), not }),
  'default.modelWhitelist': z.strictObject({ models: z.array(z.string().min(1).max(255)).min(1).max(1000), not }),
  'default.isAllLowerCase': z.strictObject({ not }),
  'default.alluppercase': z.strictObject({ not }),
  'default.sentenceCount': z.strictObject({ minSentences: count.default(0), maxSentences: count.default(99_999), not }),
  'default.wordCount': z.strictObject({ minWords: count.default(0), maxWords: count.default(99_999), not }),
  'default.characterCount': z.strictObject({ minCharacters: count.default(0), maxCharacters: count.default(9_999_999), not }),
  'default.jsonSchema': z.strictObject({ schema: z.record(z.string(), z.unknown()), not }),
  'default.jsonKeys': z.strictObject({ keys: words, operator: z.enum(['any', 'all', 'none']) }),
  'default.contains': z.strictObject({ words, operator: z.enum(['any', 'all', 'none']) }),
  'default.validUrls': z.strictObject({ onlyDNS: z.boolean().default(false), not }),
  'default.endsWith': z.strictObject({ suffix: z.string().min(1).max(1000), not }),
  'default.webhook': z.strictObject({
    webhookURL: z.url({ protocol: /^https?$/ }).max(2048),
    headers: z.record(z.string(), z.string()).optional(),
    timeout: timeout(3000),
    failOnError: z.boolean().default(false),
    /** Signs each call: x-gatehouse-signature t=<unix seconds>,v1=<HMAC-SHA256 of "<t>.<body>">. */
    signingSecret: z.string().min(16).max(256).optional(),
  }),
}


/** Partner checks speak one contract (see the gateway's guardrails/checks/partner.ts) with an adapter at `endpoint`. */
const partnerParameters = z.strictObject({
  // The spec: the partner guardrail's policyId is required (the partner evaluates that policy).
  policyId: z.string({ error: (issue) => (issue.input === undefined ? 'policyId is required for a partner check' : 'policyId must be a string') }).min(1).max(255),
  timeout: timeout(PARTNER_TIMEOUT_MS_DEFAULT),
  endpoint: z.url({ protocol: /^https?$/ }).max(2048),
  apiKey: z.string().min(1).max(4096).optional(),
  failOnError: z.boolean().default(false),
})

export const checkSchema = z.strictObject({
  id: z.string().min(1).max(128),
  name: z.string().min(1).max(255).optional(),
  is_enabled: z.boolean().default(true),
  parameters: z.record(z.string(), z.unknown()).default({}),
}).transform((check, context) => {
  const schema = DEFAULT_CHECKS[check.id] ?? ((PARTNER_CHECK_IDS as readonly string[]).includes(check.id) ? partnerParameters : undefined)
  if (!schema) {
    context.addIssue({ code: 'custom', path: ['id'], message: `unknown check "${check.id}"; use a default.* check or a partner check such as ${PARTNER_CHECK_IDS[0]}` })
    return z.NEVER
  }
  const parsed = schema.safeParse(check.parameters)
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path
      context.addIssue({ code: 'custom', path: ['parameters', ...path], message: issue.code === 'unrecognized_keys' ? 'unknown parameter' : issue.message })
    }
    return z.NEVER
  }
  return { ...check, parameters: parsed.data as Record<string, unknown> }
})

const feedback = (value: number) => z.strictObject({
  feedback: z.strictObject({
    value: z.int().min(-10).max(10).default(value),
    weight: z.number().min(0).max(1).default(1),
    metadata: z.string().max(1024).default(''),
  }).default({ value, weight: 1, metadata: '' }),
})

export const actionsSchema = z.strictObject({
  deny: z.boolean().default(false),
  async: z.boolean().default(false),
  /** How much of a streamed answer waits for the output checks: none, a window of characters, or all of it. */
  hold_back: z.strictObject({ mode: z.enum(['none', 'window', 'all']), window_chars: z.int().min(1).max(1_000_000).default(256) }).optional(),
  on_success: feedback(5).default({ feedback: { value: 5, weight: 1, metadata: '' } }),
  on_fail: feedback(-5).default({ feedback: { value: -5, weight: 1, metadata: '' } }),
}).refine((actions) => !(actions.deny && actions.async), { message: 'deny and async are mutually exclusive: an async check cannot block the request', path: ['async'] })

export const hooksSchema = z.array(z.enum(['beforeRequestHook', 'afterRequestHook'])).min(1).max(2)
