/**
 * What the account stage hands to the usage sink: a record in the cheapest form to build (epoch
 * milliseconds, references to the bodies), turned into its wire line (ISO times, redacted bodies,
 * defaults left out) by the shipper, off the request path.
 */
import type { LogLevel, UsageRecordInput } from '../snapshot/usage-record.ts'
import { loggableJson } from './redact.ts'

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
  /** Seconds of audio billed by the second (transcriptions); null where none is billed or known. */
  audioSeconds: number | null
  /** Characters of input billed by the character (speech). */
  inputCharacters: number
  /** Images made (images routes). */
  images: number
  imageInputTokens: number
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

/** The metadata as the contract stores it (values as bounded strings); null when nothing is left. */
function metadataStrings(metadata: Readonly<Record<string, unknown>>): Record<string, string> | null {
  let out: Record<string, string> | null = null
  for (const key of Object.keys(metadata)) {
    const value = metadata[key]
    if (value === null || value === undefined || key.length > 255) continue
    const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value)
    out ??= {}
    out[key] = text.length > MAX_METADATA_VALUE_CHARS ? text.slice(0, MAX_METADATA_VALUE_CHARS) : text
  }
  return out
}

/**
 * `toISOString()` of epoch milliseconds, its date-and-seconds part reused within a second: Date
 * formatting (0.45 µs) was most of a record's build.
 */
let isoSecond = Number.NaN
let isoPrefix = ''
function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000)
  if (second !== isoSecond) {
    isoSecond = second
    isoPrefix = new Date(second * 1000).toISOString().slice(0, 20)
  }
  const millis = ms - second * 1000
  return `${isoPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`
}

/**
 * The record as it goes on the wire, bodies aside: only what differs from the contract schema's
 * defaults (null, 0, false, `{}`, log level `metadata`), which the control plane fills back in. A
 * typical record has a dozen of its fifty fields set, so this halves the bytes serialised, sent
 * and parsed. One named test per field, not a loop over names: keyed stores onto a growing object
 * cost three times as much (1.4 against 0.5 µs a record).
 */
function wireRecord(draft: UsageDraft): UsageRecordInput {
  const record: UsageRecordInput = {
    id: draft.id,
    createdAt: isoTime(draft.createdAtMs),
    organizationId: draft.organizationId,
    traceId: draft.traceId,
    route: draft.route,
    endpointType: draft.endpointType,
    statusCode: draft.statusCode,
    latencyMs: draft.latencyMs,
  }
  if (draft.workspaceId !== null) record.workspaceId = draft.workspaceId
  if (draft.apiKeyId !== null) record.apiKeyId = draft.apiKeyId
  if (draft.userId !== null) record.userId = draft.userId
  if (draft.spanId !== null) record.spanId = draft.spanId
  if (draft.parentSpanId !== null) record.parentSpanId = draft.parentSpanId
  if (draft.spanName !== null) record.spanName = draft.spanName
  if (draft.providerId !== null) record.providerId = draft.providerId
  if (draft.providerSlug !== null) record.providerSlug = draft.providerSlug
  if (draft.providerKind !== null) record.providerKind = draft.providerKind
  if (draft.integrationId !== null) record.integrationId = draft.integrationId
  if (draft.configId !== null) record.configId = draft.configId
  if (draft.deploymentId !== null) record.deploymentId = draft.deploymentId
  if (draft.promptId !== null) record.promptId = draft.promptId
  if (draft.promptVersionId !== null) record.promptVersionId = draft.promptVersionId
  if (draft.mcpServerId !== null) record.mcpServerId = draft.mcpServerId
  if (draft.mcpToolName !== null) record.mcpToolName = draft.mcpToolName
  if (draft.agentServerId !== null) record.agentServerId = draft.agentServerId
  if (draft.agentMethod !== null) record.agentMethod = draft.agentMethod
  if (draft.modelRequested !== null) record.modelRequested = draft.modelRequested
  if (draft.modelServed !== null) record.modelServed = draft.modelServed
  if (draft.attempts !== 0) record.attempts = draft.attempts
  if (draft.retries !== 0) record.retries = draft.retries
  if (draft.targetPath !== null) record.targetPath = draft.targetPath
  if (draft.errorCode !== null) record.errorCode = draft.errorCode
  if (draft.cacheStatus !== null) record.cacheStatus = draft.cacheStatus
  if (draft.streamed) record.streamed = true
  if (draft.aborted) record.aborted = true
  if (draft.finishReason !== null) record.finishReason = draft.finishReason
  if (draft.inputTokens !== 0) record.inputTokens = draft.inputTokens
  if (draft.outputTokens !== 0) record.outputTokens = draft.outputTokens
  if (draft.cachedInputTokens !== 0) record.cachedInputTokens = draft.cachedInputTokens
  if (draft.cacheWriteInputTokens !== 0) record.cacheWriteInputTokens = draft.cacheWriteInputTokens
  if (draft.reasoningTokens !== 0) record.reasoningTokens = draft.reasoningTokens
  if (draft.audioInputTokens !== 0) record.audioInputTokens = draft.audioInputTokens
  if (draft.cachedAudioInputTokens !== 0) record.cachedAudioInputTokens = draft.cachedAudioInputTokens
  if (draft.audioOutputTokens !== 0) record.audioOutputTokens = draft.audioOutputTokens
  if (draft.audioSeconds !== null) record.audioSeconds = draft.audioSeconds
  if (draft.inputCharacters !== 0) record.inputCharacters = draft.inputCharacters
  if (draft.images !== 0) record.images = draft.images
  if (draft.imageInputTokens !== 0) record.imageInputTokens = draft.imageInputTokens
  if (draft.estimated) record.estimated = true
  if (draft.costUsd !== null) record.costUsd = draft.costUsd
  if (draft.cacheSavedCostUsd !== null) record.cacheSavedCostUsd = draft.cacheSavedCostUsd
  if (draft.pricingVersion !== null) record.pricingVersion = draft.pricingVersion
  if (draft.ttftMs !== null) record.ttftMs = draft.ttftMs
  if (draft.logLevel !== 'metadata') record.logLevel = draft.logLevel
  const metadata = draft.logLevel === 'off' || draft.metadata === null ? null : metadataStrings(draft.metadata)
  if (metadata !== null) record.metadata = metadata
  // Serialised at once (wireLine), so the stage's object is not copied.
  if (draft.annotations !== null && Object.keys(draft.annotations).length > 0) record.annotations = draft.annotations as Record<string, unknown>
  return record
}

/**
 * One record as the shipper sends it: its JSON text in pieces, written in order into the batch
 * (usage/record-batch.ts) without being joined first: the record without its bodies, then the
 * bodies (log level `full` only), redacted and serialised once and set into the record's text as
 * they are.
 */
export function wirePieces(draft: UsageDraft): string[] {
  const line = JSON.stringify(wireRecord(draft))
  if (draft.logLevel !== 'full') return [line]
  const request = loggableJson(draft.requestBody)
  const response = loggableJson(typeof draft.responseBody === 'function' ? (draft.responseBody as () => unknown)() : draft.responseBody)
  if (request === null && response === null) return [line]
  // The record's text ends with its closing brace: the bodies go in before it.
  const pieces = [line.slice(0, -1)]
  if (request !== null) pieces.push(',"requestBody":', request)
  if (response !== null) pieces.push(',"responseBody":', response)
  pieces.push('}')
  return pieces
}

/** One record's JSON text (the pieces of `wirePieces` joined). */
export function wireLine(draft: UsageDraft): string {
  return wirePieces(draft).join('')
}
