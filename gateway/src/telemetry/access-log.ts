/**
 * The access log: one JSON line per data-plane exchange, written through the process's pino logger
 * (child `log: "access"`), with the usage record's ids so a line, a usage record and a trace join on
 * `requestId` / `traceId`. Never a header, a body or a key: the key appears as its id only.
 *
 * Settings (environment, read once; the chart sets them from `gateway.accessLog`):
 *   GATEHOUSE_ACCESS_LOG              'false' turns it off (default on)
 *   GATEHOUSE_ACCESS_LOG_LEVEL        the level lines are written at (default info); the logger's
 *                                     own level (GATEHOUSE_LOG_LEVEL) still decides what is printed
 *   GATEHOUSE_ACCESS_LOG_SAMPLE_RATE  share of successful exchanges logged, 0..1 (default 1);
 *                                     errors (status >= 400, or a stream cut) are always logged
 */
import type { ExchangeOutcome } from './outcome.ts'

export const ACCESS_LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const
export type AccessLogLevel = (typeof ACCESS_LOG_LEVELS)[number]

export interface AccessLogSettings {
  readonly level: AccessLogLevel
  /** 0..1: the share of successful exchanges written. */
  readonly sampleRate: number
}

export const DEFAULT_ACCESS_LOG: AccessLogSettings = { level: 'info', sampleRate: 1 }

/** The part of a pino logger the access log needs. */
export interface AccessLogSink {
  child(bindings: Record<string, unknown>): AccessLogSink
  trace(object: object, message: string): void
  debug(object: object, message: string): void
  info(object: object, message: string): void
  warn(object: object, message: string): void
  error(object: object, message: string): void
}

/** null: the access log is off. Throws on a value it cannot read (a typo must not silently log everything, or nothing). */
export function accessLogSettingsFromEnv(env: NodeJS.ProcessEnv): AccessLogSettings | null {
  const enabled = env.GATEHOUSE_ACCESS_LOG
  if (enabled === 'false') return null
  if (enabled !== undefined && enabled !== '' && enabled !== 'true') throw new Error(`GATEHOUSE_ACCESS_LOG must be true or false, got '${enabled}'`)
  const level = env.GATEHOUSE_ACCESS_LOG_LEVEL || DEFAULT_ACCESS_LOG.level
  if (!(ACCESS_LOG_LEVELS as readonly string[]).includes(level)) throw new Error(`GATEHOUSE_ACCESS_LOG_LEVEL must be one of ${ACCESS_LOG_LEVELS.join(', ')}, got '${level}'`)
  const rateText = env.GATEHOUSE_ACCESS_LOG_SAMPLE_RATE
  const sampleRate = rateText === undefined || rateText === '' ? DEFAULT_ACCESS_LOG.sampleRate : Number(rateText)
  if (!Number.isFinite(sampleRate) || sampleRate < 0 || sampleRate > 1) throw new Error(`GATEHOUSE_ACCESS_LOG_SAMPLE_RATE must be a number from 0 to 1, got '${rateText}'`)
  return { level: level as AccessLogLevel, sampleRate }
}

/** Caller-chosen strings are cut to this length in a line. */
const MAX_FIELD_CHARS = 256

function cut(value: string | null): string | null {
  return value === null || value.length <= MAX_FIELD_CHARS ? value : value.slice(0, MAX_FIELD_CHARS)
}

const milliseconds = (seconds: number): number => Math.round(seconds * 1_000_000) / 1000

/** The fields of one line (exported for tests and the docs' field list). */
export function accessLogFields(outcome: ExchangeOutcome): Record<string, unknown> {
  return {
    requestId: outcome.requestId,
    traceId: cut(outcome.traceId),
    spanId: cut(outcome.spanId),
    path: cut(outcome.path),
    operation: outcome.operation,
    workspaceId: outcome.workspaceId,
    apiKeyId: outcome.keyId,
    principal: outcome.principalKind,
    configId: outcome.configId,
    targetPath: outcome.targetPath,
    provider: outcome.providerSlug,
    providerKind: outcome.providerKind,
    modelRequested: cut(outcome.requestedModel),
    modelServed: cut(outcome.servedModel),
    status: outcome.status,
    errorCode: outcome.errorCode,
    streamed: outcome.streamed,
    finishReason: outcome.finishReason,
    cacheStatus: outcome.cacheStatus,
    attempts: outcome.attempts,
    retries: outcome.retries,
    latencyMs: milliseconds(outcome.durationSeconds),
    ttftMs: milliseconds(outcome.timeToFirstByteSeconds),
    inputTokens: outcome.inputTokens,
    outputTokens: outcome.outputTokens,
    estimated: outcome.usageEstimated,
    costUsd: outcome.costUsd,
  }
}

export interface AccessLog {
  write(outcome: ExchangeOutcome): void
}

export function createAccessLog(logger: AccessLogSink, settings: AccessLogSettings, random: () => number = Math.random): AccessLog {
  const sink = logger.child({ log: 'access' })
  const { level, sampleRate } = settings
  return {
    write(outcome) {
      const failed = outcome.status >= 400 || outcome.errorCode !== null
      if (!failed && (sampleRate === 0 || (sampleRate < 1 && random() >= sampleRate))) return
      sink[level](accessLogFields(outcome), 'request')
    },
  }
}
