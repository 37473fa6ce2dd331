import { describe, expect, it } from 'vitest'
import { accessLogFields, accessLogSettingsFromEnv, createAccessLog, type AccessLogSink } from './access-log.ts'
import type { ExchangeOutcome } from './outcome.ts'

const outcome = (change: Partial<ExchangeOutcome> = {}): ExchangeOutcome => ({
  requestId: 'req-1', traceId: 'trace-1', spanId: null, operation: 'chat', path: '/v1/chat/completions',
  workspaceId: 'ws-1', workspaceSlug: 'team', keyId: 'key-1', principalKind: 'api_key', configId: null, targetPath: null,
  providerKind: 'openai', providerSlug: 'openai-main', providerId: 'p-1', requestedModel: 'gpt-4o', servedModel: 'gpt-4o-2024-08-06',
  status: 200, errorCode: null, streamed: false, cacheStatus: null, inputTokens: 10, outputTokens: 20, usageEstimated: false, costUsd: 0.0001,
  attempts: 1, retries: 0, upstream: [], durationSeconds: 0.1234567, timeToFirstByteSeconds: 0.05, finishReason: 'stop', knownModel: () => true, modelFamily: () => null, priced: () => true,
  ...change,
})

function recorder(): { sink: AccessLogSink; lines: Array<{ level: string; object: Record<string, unknown>; message: string }> } {
  const lines: Array<{ level: string; object: Record<string, unknown>; message: string }> = []
  const at = (level: string) => (object: object, message: string) => void lines.push({ level, object: object as Record<string, unknown>, message })
  const sink: AccessLogSink = { child: () => sink, trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
  return { sink, lines }
}

describe('access log settings', () => {
  it('defaults to on, info, every request', () => {
    expect(accessLogSettingsFromEnv({})).toEqual({ level: 'info', sampleRate: 1 })
    expect(accessLogSettingsFromEnv({ GATEHOUSE_ACCESS_LOG: 'false' })).toBeNull()
    expect(accessLogSettingsFromEnv({ GATEHOUSE_ACCESS_LOG_LEVEL: 'debug', GATEHOUSE_ACCESS_LOG_SAMPLE_RATE: '0.25' })).toEqual({ level: 'debug', sampleRate: 0.25 })
  })

  it('refuses values it cannot read, naming the variable', () => {
    expect(() => accessLogSettingsFromEnv({ GATEHOUSE_ACCESS_LOG: 'yes' })).toThrow(/GATEHOUSE_ACCESS_LOG /)
    expect(() => accessLogSettingsFromEnv({ GATEHOUSE_ACCESS_LOG_LEVEL: 'loud' })).toThrow(/GATEHOUSE_ACCESS_LOG_LEVEL/)
    expect(() => accessLogSettingsFromEnv({ GATEHOUSE_ACCESS_LOG_SAMPLE_RATE: '2' })).toThrow(/GATEHOUSE_ACCESS_LOG_SAMPLE_RATE/)
    expect(() => accessLogSettingsFromEnv({ GATEHOUSE_ACCESS_LOG_SAMPLE_RATE: 'half' })).toThrow(/GATEHOUSE_ACCESS_LOG_SAMPLE_RATE/)
  })
})

describe('access log lines', () => {
  it('writes the usage record ids and the outcome at the configured level', () => {
    const { sink, lines } = recorder()
    createAccessLog(sink, { level: 'debug', sampleRate: 1 }).write(outcome())
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ level: 'debug', message: 'request', object: { requestId: 'req-1', traceId: 'trace-1', apiKeyId: 'key-1', provider: 'openai-main', status: 200, latencyMs: 123.457, ttftMs: 50, costUsd: 0.0001 } })
  })

  it('samples successes only: errors are always written', () => {
    const { sink, lines } = recorder()
    const random = [0.9, 0.05]
    const log = createAccessLog(sink, { level: 'info', sampleRate: 0.1 }, () => random.shift() ?? 0.5)
    log.write(outcome())
    log.write(outcome())
    log.write(outcome({ status: 429, errorCode: 'rate_limited' }))
    log.write(outcome({ status: 200, errorCode: 'upstream_error' }))
    expect(lines.map((line) => line.object.status)).toEqual([200, 429, 200])
    const none = recorder()
    createAccessLog(none.sink, { level: 'info', sampleRate: 0 }).write(outcome())
    expect(none.lines).toHaveLength(0)
  })

  it('cuts caller strings and carries no header or body field', () => {
    const fields = accessLogFields(outcome({ requestedModel: 'x'.repeat(5000) }))
    expect((fields.modelRequested as string).length).toBe(256)
    expect(Object.keys(fields).filter((name) => /header|body|authorization|secret|credential/i.test(name))).toEqual([])
  })
})
