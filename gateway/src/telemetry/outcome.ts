/**
 * One finished exchange, as metrics and the access log read it. The pipeline's measure stage
 * builds it once from the exchange's facts (the same facts the usage record is made of), so every
 * consumer sees the same numbers and none of them reaches into the pipeline's types.
 */

export interface UpstreamAttemptOutcome {
  /** Provider kind (`openai`, `anthropic`, ...) and slug of the target tried. */
  readonly providerKind: string
  readonly providerSlug: string
  /** The status the attempt ended with: the provider's own on an HTTP error; null when cancelled. */
  readonly status: number | null
  readonly durationSeconds: number
  /** This attempt moved to another target than the one before it (a fallback). */
  readonly fallback: boolean
}

export interface ExchangeOutcome {
  /** The usage record's id. */
  readonly requestId: string
  readonly traceId: string
  readonly spanId: string | null
  /** The route's operation (`chat`, `messages`, `passthrough:files`, ...). */
  readonly operation: string
  readonly path: string
  /** Null when the request was refused before authentication. */
  readonly workspaceId: string | null
  readonly workspaceSlug: string | null
  readonly keyId: string | null
  readonly principalKind: string | null
  readonly configId: string | null
  readonly targetPath: string | null
  readonly providerKind: string | null
  readonly providerSlug: string | null
  readonly providerId: string | null
  readonly requestedModel: string | null
  readonly servedModel: string | null
  readonly status: number
  readonly errorCode: string | null
  readonly streamed: boolean
  readonly cacheStatus: string | null
  readonly inputTokens: number | null
  readonly outputTokens: number | null
  readonly usageEstimated: boolean
  readonly costUsd: number | null
  readonly attempts: number
  readonly retries: number
  readonly upstream: readonly UpstreamAttemptOutcome[]
  readonly durationSeconds: number
  /** First byte (JSON: the answer) or first chunk (streams) reached the client, from the start. */
  readonly timeToFirstByteSeconds: number
  readonly finishReason: string | null
  /** Is the model known to the pricing table or the provider's snapshot entry (bounded model label). */
  readonly knownModel: (model: string) => boolean
  /** The family the pricing table prices the model as (`gpt-4o-2024-08-06` -> `gpt-4o`); null when it has none. */
  readonly modelFamily: (model: string) => string | null
  /** Whether what the provider served has a price (the table or an override), as its usage record is priced; looked up when called. */
  readonly priced: () => boolean
}
