/**
 * The OpenTelemetry GenAI semantic conventions' metrics, under their own names (dots become
 * underscores, the unit suffix `_seconds` as Prometheus exporters write it), with the convention's
 * explicit bucket boundaries and its attributes as labels, so dashboards built for other GenAI
 * systems read Gatehouse unchanged. https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-metrics/
 *
 * Gatehouse is a client of the providers (token usage, operation duration) and a server to its
 * callers (time to first token, time per output token). Model labels are bounded (labels.ts).
 */
import type { Registry } from 'prom-client'
import { NONE, errorCodeLabel, statusClass, type BoundedLabels } from './labels.ts'
import type { ExchangeOutcome } from './outcome.ts'
import { SeriesHistogram as Histogram } from './series.ts'

export const TOKEN_USAGE_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
export const OPERATION_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
export const TIME_TO_FIRST_TOKEN_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0]
export const TIME_PER_OUTPUT_TOKEN_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5]

/** `gen_ai.operation.name` per route; routes not listed are not GenAI operations. */
const OPERATION_NAMES: Readonly<Record<string, string>> = {
  chat: 'chat',
  messages: 'chat',
  'passthrough:responses': 'chat',
  completions: 'text_completion',
  embeddings: 'embeddings',
}

/** `gen_ai.provider.name` well-known values; other kinds are named by their kind (a fixed list). */
const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  bedrock: 'aws.bedrock',
  'azure-openai': 'azure.ai.openai',
  'vertex-ai': 'gcp.vertex_ai',
  google: 'gcp.gemini',
  'mistral-ai': 'mistral_ai',
  'x-ai': 'x_ai',
  'perplexity-ai': 'perplexity',
}

export function genAiProviderName(kind: string | null): string {
  if (kind === null) return NONE
  return PROVIDER_NAMES[kind] ?? kind
}

export function genAiOperationName(operation: string): string | null {
  return OPERATION_NAMES[operation] ?? null
}

const BASE_LABELS = ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'gen_ai_response_model'] as const

export interface GenAiMetrics {
  observe(outcome: ExchangeOutcome, labels: BoundedLabels): void
}

export function createGenAiMetrics(registry: Registry): GenAiMetrics {
  const tokenUsage = new Histogram({
    name: 'gen_ai_client_token_usage',
    help: 'Number of input and output tokens used per GenAI operation (gen_ai.client.token.usage; provider-reported, else counted by Gatehouse).',
    labelNames: [...BASE_LABELS, 'gen_ai_token_type'],
    buckets: TOKEN_USAGE_BUCKETS,
    registers: [registry],
  })
  const operationDuration = new Histogram({
    name: 'gen_ai_client_operation_duration_seconds',
    help: 'GenAI operation duration, request start to the end of the answer (gen_ai.client.operation.duration); error_type is set on failures.',
    labelNames: [...BASE_LABELS, 'error_type'],
    buckets: OPERATION_DURATION_BUCKETS,
    registers: [registry],
  })
  const timeToFirstToken = new Histogram({
    name: 'gen_ai_server_time_to_first_token_seconds',
    help: 'Time to the first token of a successful streamed answer (gen_ai.server.time_to_first_token).',
    labelNames: BASE_LABELS,
    buckets: TIME_TO_FIRST_TOKEN_BUCKETS,
    registers: [registry],
  })
  const timePerOutputToken = new Histogram({
    name: 'gen_ai_server_time_per_output_token_seconds',
    help: 'Time per output token after the first of a successful streamed answer (gen_ai.server.time_per_output_token).',
    labelNames: BASE_LABELS,
    buckets: TIME_PER_OUTPUT_TOKEN_BUCKETS,
    registers: [registry],
  })
  return {
    observe(outcome, bounded) {
      const operationName = genAiOperationName(outcome.operation)
      if (operationName === null) return
      // BASE_LABELS' values, in their order.
      const base = [
        operationName,
        genAiProviderName(outcome.providerKind),
        bounded.models.label(outcome.requestedModel, outcome.knownModel),
        bounded.models.label(outcome.servedModel, outcome.knownModel),
      ] as const
      const failed = outcome.status >= 400 || outcome.errorCode !== null
      operationDuration.observe([...base, failed ? (outcome.errorCode !== null ? errorCodeLabel(outcome.errorCode) : statusClass(outcome.status)) : ''], outcome.durationSeconds)
      // The convention records tokens only when they are known.
      if (outcome.inputTokens !== null && outcome.inputTokens > 0) tokenUsage.observe([...base, 'input'], outcome.inputTokens)
      if (outcome.outputTokens !== null && outcome.outputTokens > 0) tokenUsage.observe([...base, 'output'], outcome.outputTokens)
      if (failed || !outcome.streamed) return
      timeToFirstToken.observe(base, outcome.timeToFirstByteSeconds)
      const outputTokens = outcome.outputTokens ?? 0
      if (outputTokens > 1) timePerOutputToken.observe(base, Math.max(0, outcome.durationSeconds - outcome.timeToFirstByteSeconds) / (outputTokens - 1))
    },
  }
}
