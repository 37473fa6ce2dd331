/**
 * What the account stage hands to the usage sink: a record in the cheapest form to build (epoch
 * milliseconds, references to the bodies), turned into the wire `UsageRecord` (ISO times,
 * redacted bodies) only when a batch is serialised, off the request path.
 */
import type { LogLevel, UsageRecord } from '../snapshot/usage-record.ts'
import { loggableBody } from './redact.ts'

export interface UsageDraft {
  id: string
  createdAtMs: number
  organizationId: string
  workspaceId: string | null
  apiKeyId: string | null
  userId: string | null
  traceId: string
  spanId: string | null
  parentSpanId: string | null
  spanName: string | null
  providerId: string | null
  providerSlug: string | null
  providerKind: string | null
  integrationId: string | null
  configId: string | null
  deploymentId: string | null
  promptId: string | null
  promptVersionId: string | null
  mcpServerId: string | null
  mcpToolName: string | null
  agentServerId: string | null
  agentMethod: string | null
  route: string
  endpointType: string
  modelRequested: string | null
  modelServed: string | null
  attempts: number
  retries: number
  targetPath: string | null
  statusCode: number
  errorCode: string | null
  cacheStatus: string | null
  streamed: boolean
  aborted: boolean
  finishReason: string | null
  inputTokens: number
  outputTokens: number
  cachedInputTokens: number
  cacheWriteInputTokens: number
  reasoningTokens: number
  audioInputTokens: number
  cachedAudioInputTokens: number
  audioOutputTokens: number
  estimated: boolean
  costUsd: number | null
  cacheSavedCostUsd: number | null
  pricingVersion: string | null
  latencyMs: number
  ttftMs: number | null
  /** The request's metadata as sent (stringified when serialised); null under log level `off`. */
  metadata: Readonly<Record<string, unknown>> | null
  logLevel: LogLevel
  /** Body references, kept only under log level `full`; a function is called when the record is serialised. */
  requestBody: unknown
  responseBody: unknown
  annotations: Readonly<Record<string, unknown>> | null
}

/** Sink of usage drafts: must return at once and never throw (bounded, drops nothing it can keep). */
export interface UsageSink {
  offer(draft: UsageDraft): void
}

const MAX_METADATA_VALUE_CHARS = 4096

function metadataStrings(metadata: Readonly<Record<string, unknown>> | null): Record<string, string> {
  const out: Record<string, string> = {}
  if (metadata === null) return out
  for (const [key, value] of Object.entries(metadata)) {
    if (value === null || value === undefined || key.length > 255) continue
    const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value)
    out[key] = text.length > MAX_METADATA_VALUE_CHARS ? text.slice(0, MAX_METADATA_VALUE_CHARS) : text
  }
  return out
}

export function toUsageRecord(draft: UsageDraft): UsageRecord {
  const full = draft.logLevel === 'full'
  return {
    id: draft.id,
    createdAt: new Date(draft.createdAtMs).toISOString(),
    organizationId: draft.organizationId,
    workspaceId: draft.workspaceId,
    apiKeyId: draft.apiKeyId,
    userId: draft.userId,
    traceId: draft.traceId,
    spanId: draft.spanId,
    parentSpanId: draft.parentSpanId,
    spanName: draft.spanName,
    providerId: draft.providerId,
    providerSlug: draft.providerSlug,
    providerKind: draft.providerKind,
    integrationId: draft.integrationId,
    configId: draft.configId,
    deploymentId: draft.deploymentId,
    promptId: draft.promptId,
    promptVersionId: draft.promptVersionId,
    mcpServerId: draft.mcpServerId,
    mcpToolName: draft.mcpToolName,
    agentServerId: draft.agentServerId,
    agentMethod: draft.agentMethod,
    route: draft.route,
    endpointType: draft.endpointType,
    modelRequested: draft.modelRequested,
    modelServed: draft.modelServed,
    attempts: draft.attempts,
    retries: draft.retries,
    targetPath: draft.targetPath,
    statusCode: draft.statusCode,
    errorCode: draft.errorCode,
    cacheStatus: draft.cacheStatus,
    streamed: draft.streamed,
    aborted: draft.aborted,
    finishReason: draft.finishReason,
    inputTokens: draft.inputTokens,
    outputTokens: draft.outputTokens,
    cachedInputTokens: draft.cachedInputTokens,
    cacheWriteInputTokens: draft.cacheWriteInputTokens,
    reasoningTokens: draft.reasoningTokens,
    audioInputTokens: draft.audioInputTokens,
    cachedAudioInputTokens: draft.cachedAudioInputTokens,
    audioOutputTokens: draft.audioOutputTokens,
    estimated: draft.estimated,
    costUsd: draft.costUsd,
    cacheSavedCostUsd: draft.cacheSavedCostUsd,
    pricingVersion: draft.pricingVersion,
    latencyMs: draft.latencyMs,
    ttftMs: draft.ttftMs,
    metadata: draft.logLevel === 'off' ? {} : metadataStrings(draft.metadata),
    logLevel: draft.logLevel,
    requestBody: full ? loggableBody(draft.requestBody) : null,
    responseBody: full ? loggableBody(typeof draft.responseBody === 'function' ? (draft.responseBody as () => unknown)() : draft.responseBody) : null,
    bodiesDropped: false,
    annotations: draft.annotations === null ? {} : { ...draft.annotations },
  }
}
