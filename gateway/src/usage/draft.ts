/**
 * What the account stage hands to the usage sink: a record in the cheapest form to build (epoch
 * milliseconds, references to the bodies), turned into its wire line (ISO times, redacted bodies,
 * defaults left out) by the shipper, off the request path.
 */
import type { LogLevel } from '../snapshot/usage-record.ts'
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

const QUOTE = 0x22
const BACKSLASH = 0x5c
const FIRST_PRINTABLE = 0x20
const FIRST_SURROGATE = 0xd800
const LAST_SURROGATE = 0xdfff

/**
 * `JSON.stringify(text)`: quoted as it is when nothing in it needs escaping (ids, names, model
 * ids: every string of a usual record), else by the builtin (quotes, backslashes, control
 * characters, and surrogates, which it escapes when unpaired).
 */
export function jsonString(text: string): string {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code < FIRST_PRINTABLE || code === QUOTE || code === BACKSLASH || (code >= FIRST_SURROGATE && code <= LAST_SURROGATE)) return JSON.stringify(text)
  }
  return `"${text}"`
}

/**
 * `jsonString` of a name that recurs from record to record (ids and slugs from the snapshot, model
 * ids, routes, codes), remembered: a map read is a third of the scan. Bounded; past it the names
 * are forgotten and remembered afresh. Per-request values (record, trace and span ids) are not
 * remembered, they would only churn the map.
 */
const quotedNames = new Map<string, string>()
const MAX_QUOTED_NAMES = 4096

function jsonName(name: string): string {
  let quoted = quotedNames.get(name)
  if (quoted === undefined) {
    quoted = jsonString(name)
    if (quotedNames.size >= MAX_QUOTED_NAMES) quotedNames.clear()
    quotedNames.set(name, quoted)
  }
  return quoted
}

/** `JSON.stringify(value)` of a number: what is not finite is `null`. */
function jsonNumber(value: number): string {
  return Number.isFinite(value) ? `${value}` : 'null'
}

/** The metadata as the contract stores it (values as bounded strings), as a JSON object's text; null when nothing is left. */
function metadataJson(metadata: Readonly<Record<string, unknown>>): string | null {
  let out: string | null = null
  for (const key of Object.keys(metadata)) {
    const value = metadata[key]
    if (value === null || value === undefined || key.length > 255) continue
    const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value)
    // A JSON text of `undefined` (a function, a symbol): JSON.stringify of an object left such values out.
    if (text === undefined) continue
    const bounded = text.length > MAX_METADATA_VALUE_CHARS ? text.slice(0, MAX_METADATA_VALUE_CHARS) : text
    out = `${out === null ? '{' : `${out},`}${jsonString(key)}:${jsonString(bounded)}`
  }
  return out === null ? null : `${out}}`
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

function hasOwnFields(value: Readonly<Record<string, unknown>>): boolean {
  for (const name in value) if (Object.hasOwn(value, name)) return true
  return false
}

/**
 * One record's JSON text as it goes on the wire: only what differs from the contract schema's
 * defaults (null, 0, false, `{}`, log level `metadata`), which the control plane fills back in (a
 * typical record has a dozen of its fifty fields set, so this halves the bytes sent and parsed),
 * then the bodies (log level `full` only), redacted and serialised once and set into the text as
 * they are. Written field by field in a fixed order, as the text JSON.stringify gives of the same
 * fields: building an object of the set fields and serialising it cost 23,500 instructions a
 * record, writing the text 13,800 (callgrind, test/bench/instructions.ts --variant metering, the
 * bodies aside). One named test per field, not a loop over names: keyed loads of fifty names are
 * megamorphic.
 */
export function wireLine(draft: UsageDraft): string {
  let line = `{"id":${jsonString(draft.id)},"createdAt":"${isoTime(draft.createdAtMs)}","organizationId":${jsonName(draft.organizationId)},"traceId":${jsonString(draft.traceId)},"route":${jsonName(draft.route)},"endpointType":${jsonName(draft.endpointType)},"statusCode":${jsonNumber(draft.statusCode)},"latencyMs":${jsonNumber(draft.latencyMs)}`
  if (draft.workspaceId !== null) line += `,"workspaceId":${jsonName(draft.workspaceId)}`
  if (draft.apiKeyId !== null) line += `,"apiKeyId":${jsonName(draft.apiKeyId)}`
  if (draft.userId !== null) line += `,"userId":${jsonString(draft.userId)}`
  if (draft.spanId !== null) line += `,"spanId":${jsonString(draft.spanId)}`
  if (draft.parentSpanId !== null) line += `,"parentSpanId":${jsonString(draft.parentSpanId)}`
  if (draft.spanName !== null) line += `,"spanName":${jsonString(draft.spanName)}`
  if (draft.providerId !== null) line += `,"providerId":${jsonName(draft.providerId)}`
  if (draft.providerSlug !== null) line += `,"providerSlug":${jsonName(draft.providerSlug)}`
  if (draft.providerKind !== null) line += `,"providerKind":${jsonName(draft.providerKind)}`
  if (draft.integrationId !== null) line += `,"integrationId":${jsonName(draft.integrationId)}`
  if (draft.configId !== null) line += `,"configId":${jsonName(draft.configId)}`
  if (draft.deploymentId !== null) line += `,"deploymentId":${jsonName(draft.deploymentId)}`
  if (draft.promptId !== null) line += `,"promptId":${jsonName(draft.promptId)}`
  if (draft.promptVersionId !== null) line += `,"promptVersionId":${jsonName(draft.promptVersionId)}`
  if (draft.mcpServerId !== null) line += `,"mcpServerId":${jsonName(draft.mcpServerId)}`
  if (draft.mcpToolName !== null) line += `,"mcpToolName":${jsonName(draft.mcpToolName)}`
  if (draft.agentServerId !== null) line += `,"agentServerId":${jsonName(draft.agentServerId)}`
  if (draft.agentMethod !== null) line += `,"agentMethod":${jsonName(draft.agentMethod)}`
  if (draft.modelRequested !== null) line += `,"modelRequested":${jsonName(draft.modelRequested)}`
  if (draft.modelServed !== null) line += `,"modelServed":${jsonName(draft.modelServed)}`
  if (draft.attempts !== 0) line += `,"attempts":${jsonNumber(draft.attempts)}`
  if (draft.retries !== 0) line += `,"retries":${jsonNumber(draft.retries)}`
  if (draft.targetPath !== null) line += `,"targetPath":${jsonName(draft.targetPath)}`
  if (draft.errorCode !== null) line += `,"errorCode":${jsonName(draft.errorCode)}`
  if (draft.cacheStatus !== null) line += `,"cacheStatus":${jsonName(draft.cacheStatus)}`
  if (draft.streamed) line += ',"streamed":true'
  if (draft.aborted) line += ',"aborted":true'
  if (draft.finishReason !== null) line += `,"finishReason":${jsonName(draft.finishReason)}`
  if (draft.inputTokens !== 0) line += `,"inputTokens":${jsonNumber(draft.inputTokens)}`
  if (draft.outputTokens !== 0) line += `,"outputTokens":${jsonNumber(draft.outputTokens)}`
  if (draft.cachedInputTokens !== 0) line += `,"cachedInputTokens":${jsonNumber(draft.cachedInputTokens)}`
  if (draft.cacheWriteInputTokens !== 0) line += `,"cacheWriteInputTokens":${jsonNumber(draft.cacheWriteInputTokens)}`
  if (draft.reasoningTokens !== 0) line += `,"reasoningTokens":${jsonNumber(draft.reasoningTokens)}`
  if (draft.audioInputTokens !== 0) line += `,"audioInputTokens":${jsonNumber(draft.audioInputTokens)}`
  if (draft.cachedAudioInputTokens !== 0) line += `,"cachedAudioInputTokens":${jsonNumber(draft.cachedAudioInputTokens)}`
  if (draft.audioOutputTokens !== 0) line += `,"audioOutputTokens":${jsonNumber(draft.audioOutputTokens)}`
  if (draft.audioSeconds !== null) line += `,"audioSeconds":${jsonNumber(draft.audioSeconds)}`
  if (draft.inputCharacters !== 0) line += `,"inputCharacters":${jsonNumber(draft.inputCharacters)}`
  if (draft.images !== 0) line += `,"images":${jsonNumber(draft.images)}`
  if (draft.imageInputTokens !== 0) line += `,"imageInputTokens":${jsonNumber(draft.imageInputTokens)}`
  if (draft.estimated) line += ',"estimated":true'
  if (draft.costUsd !== null) line += `,"costUsd":${jsonNumber(draft.costUsd)}`
  if (draft.cacheSavedCostUsd !== null) line += `,"cacheSavedCostUsd":${jsonNumber(draft.cacheSavedCostUsd)}`
  if (draft.pricingVersion !== null) line += `,"pricingVersion":${jsonName(draft.pricingVersion)}`
  if (draft.ttftMs !== null) line += `,"ttftMs":${jsonNumber(draft.ttftMs)}`
  if (draft.logLevel !== 'metadata') line += `,"logLevel":${jsonName(draft.logLevel)}`
  const metadata = draft.logLevel === 'off' || draft.metadata === null ? null : metadataJson(draft.metadata)
  if (metadata !== null) line += `,"metadata":${metadata}`
  if (draft.annotations !== null && hasOwnFields(draft.annotations)) line += `,"annotations":${JSON.stringify(draft.annotations)}`
  if (draft.logLevel === 'full') {
    const request = loggableJson(draft.requestBody)
    const response = loggableJson(typeof draft.responseBody === 'function' ? (draft.responseBody as () => unknown)() : draft.responseBody)
    if (request !== null) line += `,"requestBody":${request}`
    if (response !== null) line += `,"responseBody":${response}`
  }
  return `${line}}`
}
