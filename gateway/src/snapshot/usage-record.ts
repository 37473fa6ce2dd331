/**
 * The usage record: one per data-plane request, the gateway -> control-plane half of the contract
 * (the snapshot is the other half). Gateways build records in the account stage and ship them in
 * batches to the control plane's ingest route; the control plane validates each with this schema
 * and stores it (logs, rollups, analytics). Records carry their own id so a retried batch is
 * stored once.
 *
 *   POST {controlPlane}/v1/gateway-usage/batches   { records: UsageRecord[] }
 *   Authorization: Bearer <GATEHOUSE_GATEWAY_TOKEN>  ->  { accepted, duplicates }
 *
 * Money is USD (fractional); times are milliseconds. `estimated` marks token counts Gatehouse
 * counted itself because the provider gave none. Bodies are present only under the workspace's
 * `full` log level, already redacted of secrets; `bodiesDropped` says a gateway's spool had to
 * shed them under pressure (counts are never dropped).
 */
import { z } from 'zod'

export const USAGE_INGEST_PATH = '/v1/gateway-usage/batches'
/** At most this many records in one ingest call (gateways send fewer). */
export const USAGE_BATCH_MAX_RECORDS = 1000

/** What a workspace keeps of each request: counts only, counts and metadata, or the bodies too. */
export const logLevel = z.enum(['off', 'metadata', 'full'])
export type LogLevel = z.infer<typeof logLevel>

const id = z.string().min(1).max(255)
const optionalId = id.nullable().default(null)
const count = z.number().int().min(0)
const isoTime = z.iso.datetime({ offset: true })

export const usageRecord = z.object({
  /** Unique per request (idempotency key of the ingest route). */
  id: z.string().min(1).max(64),
  /** When the request started. */
  createdAt: isoTime,
  organizationId: id,
  workspaceId: optionalId,
  apiKeyId: optionalId,
  /** The key's user, or `_user` from the request metadata. */
  userId: z.string().max(255).nullable().default(null),
  traceId: z.string().min(1).max(256),
  spanId: z.string().max(256).nullable().default(null),
  parentSpanId: z.string().max(256).nullable().default(null),
  spanName: z.string().max(256).nullable().default(null),
  /** The provider that answered (or was tried last). */
  providerId: optionalId,
  providerSlug: z.string().max(255).nullable().default(null),
  /** `ai_service`: the provider kind (`openai`, `anthropic`, ...). */
  providerKind: z.string().max(64).nullable().default(null),
  integrationId: optionalId,
  configId: optionalId,
  deploymentId: optionalId,
  promptId: optionalId,
  /** The prompt version a prompt completion rendered. */
  promptVersionId: optionalId,
  /** MCP requests: the Gatehouse MCP server called, and the tool (`tools/call` only). */
  mcpServerId: optionalId,
  mcpToolName: z.string().max(512).nullable().default(null),
  /** Agent (A2A) requests: the Gatehouse agent server called, and the JSON-RPC method (`message/send`, `SendMessage`, ...). */
  agentServerId: optionalId,
  agentMethod: z.string().max(128).nullable().default(null),
  /** The route's operation name (`chat`, `passthrough:files`, ...) and the spec's endpoint type. */
  route: z.string().min(1).max(128),
  endpointType: z.string().min(1).max(64),
  modelRequested: z.string().max(512).nullable().default(null),
  modelServed: z.string().max(512).nullable().default(null),
  attempts: count.default(0),
  retries: count.default(0),
  /** `config.targets[1]`: which target answered under a routing config. */
  targetPath: z.string().max(512).nullable().default(null),
  statusCode: z.number().int().min(0).max(999),
  errorCode: z.string().max(128).nullable().default(null),
  cacheStatus: z.string().max(32).nullable().default(null),
  streamed: z.boolean().default(false),
  /** The client left before the answer ended; tokens count what was produced up to then. */
  aborted: z.boolean().default(false),
  finishReason: z.string().max(64).nullable().default(null),
  inputTokens: count.default(0),
  outputTokens: count.default(0),
  cachedInputTokens: count.default(0),
  cacheWriteInputTokens: count.default(0),
  reasoningTokens: count.default(0),
  /** Audio tokens among the input (cached ones included), among the cached input, and among the output. */
  audioInputTokens: count.default(0),
  cachedAudioInputTokens: count.default(0),
  audioOutputTokens: count.default(0),
  /** Seconds of audio heard, where a model bills by them (whisper-1); null on other records and where the answer did not say. */
  audioSeconds: z.number().min(0).nullable().default(null),
  /** Characters of input, where a model bills by them (speech: tts-1). */
  inputCharacters: count.default(0),
  /** Images made (the images routes), whether the model bills by the image (DALL·E) or by token. */
  images: count.default(0),
  /** Image tokens among the input (images a GPT Image model edits). */
  imageInputTokens: count.default(0),
  estimated: z.boolean().default(false),
  /**
   * USD; null when the model has no price (neither the table nor an override), or when part of
   * what it bills is unknown (`annotations.unmetered` says which part).
   */
  costUsd: z.number().min(0).nullable().default(null),
  pricingVersion: z.string().max(64).nullable().default(null),
  /**
   * A cache hit (HIT, SEMANTIC HIT; its own cost is 0): USD the original answer cost, which the
   * hit saved. Null on other records, and on hits of entries stored without a price.
   */
  cacheSavedCostUsd: z.number().min(0).nullable().default(null),
  latencyMs: z.number().min(0),
  /** Time to first byte (JSON) or first chunk (streams). */
  ttftMs: z.number().min(0).nullable().default(null),
  /** `x-gateway-metadata` (values as strings); empty under log level `off`. */
  metadata: z.record(z.string().max(255), z.string().max(4096)).default({}),
  logLevel: logLevel.default('metadata'),
  requestBody: z.unknown().nullable().default(null),
  responseBody: z.unknown().nullable().default(null),
  bodiesDropped: z.boolean().default(false),
  /** Stage-owned extras (guardrail verdicts, matched policy ids). */
  annotations: z.record(z.string(), z.unknown()).default({}),
})

export type UsageRecord = z.infer<typeof usageRecord>
export type UsageRecordInput = z.input<typeof usageRecord>

export const usageBatch = z.object({ records: z.array(z.unknown()).min(1).max(USAGE_BATCH_MAX_RECORDS) })

export interface UsageIngestResult {
  accepted: number
  duplicates: number
  /** Records refused by the schema, by position: they are not retried. */
  rejected: Array<{ index: number; message: string }>
}
