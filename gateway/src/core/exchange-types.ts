/**
 * Types of the pipeline contract (pipeline/stage.ts) that the feature folders below the pipeline
 * (guardrails, limits, usage) read too; kept here so they import downwards only.
 */

/** The spec's `endpoint_type` values (policy conditions, usage records, analytics). */
export type EndpointType =
  | 'chatComplete'
  | 'complete'
  | 'embed'
  | 'messages'
  | 'responses'
  | 'imageGenerate'
  | 'audio'
  | 'files'
  | 'batches'
  | 'fineTuning'
  | 'moderate'
  | 'rerank'
  | 'vectorStores'
  | 'assistants'
  | 'models'
  | 'ocr'
  | 'realtime'
  | 'proxy'
  | 'mcp'
  | 'a2a'

/** The verdict of one guardrail run, kept on the usage record and returned to the caller. */
export interface HookResult {
  readonly guardrailId: string
  readonly hook: 'beforeRequestHook' | 'afterRequestHook'
  readonly verdict: boolean
  readonly deny: boolean
  readonly async: boolean
  readonly checks: ReadonlyArray<{ readonly id: string; readonly verdict: boolean; readonly explanation?: string; readonly error?: string }>
  readonly feedback?: { readonly value: number; readonly weight: number; readonly metadata?: Readonly<Record<string, unknown>> } | null
  readonly executionTimeMs: number
}
