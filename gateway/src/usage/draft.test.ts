import { describe, expect, it } from 'vitest'
import { usageRecord } from '../snapshot/usage-record.ts'
import { jsonString, wireLine, type UsageDraft } from './draft.ts'

/** A draft as the account stage leaves a plain request: most fields at their defaults. */
function leanDraft(): UsageDraft {
  return {
    id: 'rec-1', createdAtMs: Date.parse('2026-11-23T10:00:00.123Z'), organizationId: 'org', workspaceId: null, apiKeyId: null,
    userId: null, traceId: 'trace-1', spanId: null, parentSpanId: null, spanName: null, providerId: null, providerSlug: null,
    providerKind: null, integrationId: null, configId: null, deploymentId: null, promptId: null, promptVersionId: null, mcpServerId: null,
    mcpToolName: null, agentServerId: null, agentMethod: null, route: 'chat', endpointType: 'chatComplete', modelRequested: null,
    modelServed: null, attempts: 0, retries: 0, targetPath: null, statusCode: 401, errorCode: null, cacheStatus: null, streamed: false,
    aborted: false, finishReason: null, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0,
    reasoningTokens: 0, audioInputTokens: 0, cachedAudioInputTokens: 0, audioOutputTokens: 0, audioSeconds: null, inputCharacters: 0, images: 0, imageInputTokens: 0, estimated: false, costUsd: null,
    cacheSavedCostUsd: null, pricingVersion: null, latencyMs: 3, ttftMs: null, metadata: null, logLevel: 'metadata',
    requestBody: null, responseBody: null, annotations: null,
  }
}

/** Every field away from its default. */
function fullDraft(): UsageDraft {
  return {
    ...leanDraft(), workspaceId: 'ws', apiKeyId: 'key', userId: 'user', spanId: 'span', parentSpanId: 'parent', spanName: 'name',
    providerId: 'p', providerSlug: 'openai', providerKind: 'openai', integrationId: 'int', configId: 'cfg', deploymentId: 'dep',
    promptId: 'prompt', promptVersionId: 'prompt-v1', mcpServerId: 'mcp', mcpToolName: 'tool', agentServerId: 'agent', agentMethod: 'message/send',
    modelRequested: 'gpt-4o', modelServed: 'gpt-4o-2024', attempts: 2, retries: 1, targetPath: 'config.targets[1]', statusCode: 200,
    errorCode: 'upstream_error', cacheStatus: 'MISS', streamed: true, aborted: true, finishReason: 'stop', inputTokens: 10, outputTokens: 5,
    cachedInputTokens: 4, cacheWriteInputTokens: 3, reasoningTokens: 2, audioInputTokens: 1, cachedAudioInputTokens: 1, audioOutputTokens: 1, audioSeconds: 1.5, inputCharacters: 7, images: 2, imageInputTokens: 3,
    estimated: true, costUsd: 0.25, cacheSavedCostUsd: 0.5, pricingVersion: 'v1', ttftMs: 2, metadata: { team: 'a', n: 3, nested: { x: 1 }, gone: null },
    logLevel: 'full', requestBody: { model: 'gpt-4o', api_key: 'plain' }, responseBody: () => ({ id: 'resp' }), annotations: { costUsd: 0.25 },
  }
}

/** What the control plane stores: the wire record through JSON and the contract schema. */
function stored(draft: UsageDraft) {
  return usageRecord.parse(JSON.parse(wireLine(draft)))
}

describe('wireLine', () => {
  it('leaves out what the schema defaults, and the control plane reads back the same record', () => {
    const wire = JSON.parse(wireLine(leanDraft())) as Record<string, unknown>
    expect(Object.keys(wire).sort()).toEqual(['createdAt', 'endpointType', 'id', 'latencyMs', 'organizationId', 'route', 'statusCode', 'traceId'])
    expect(stored(leanDraft())).toEqual({
      id: 'rec-1', createdAt: '2026-11-23T10:00:00.123Z', organizationId: 'org', workspaceId: null, apiKeyId: null, userId: null,
      traceId: 'trace-1', spanId: null, parentSpanId: null, spanName: null, providerId: null, providerSlug: null, providerKind: null,
      integrationId: null, configId: null, deploymentId: null, promptId: null, promptVersionId: null, mcpServerId: null, mcpToolName: null,
      agentServerId: null, agentMethod: null, route: 'chat', endpointType: 'chatComplete', modelRequested: null, modelServed: null,
      attempts: 0, retries: 0, targetPath: null, statusCode: 401, errorCode: null, cacheStatus: null, streamed: false, aborted: false,
      finishReason: null, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, reasoningTokens: 0,
      audioInputTokens: 0, cachedAudioInputTokens: 0, audioOutputTokens: 0, audioSeconds: null, inputCharacters: 0, images: 0, imageInputTokens: 0, estimated: false, costUsd: null, pricingVersion: null,
      cacheSavedCostUsd: null, latencyMs: 3, ttftMs: null, metadata: {}, logLevel: 'metadata', requestBody: null, responseBody: null,
      bodiesDropped: false, annotations: {},
    })
  })

  it('carries every field that is set, bodies redacted and metadata as strings', () => {
    const draft = fullDraft()
    const record = stored(draft)
    // The fields the wire carries as they are; the others are checked one by one below.
    const plain: Record<string, unknown> = { ...draft }
    for (const field of ['createdAtMs', 'metadata', 'requestBody', 'responseBody', 'annotations']) delete plain[field]
    expect(record).toMatchObject({ ...plain, createdAt: '2026-11-23T10:00:00.123Z', bodiesDropped: false })
    expect(record.metadata).toEqual({ team: 'a', n: '3', nested: '{"x":1}' })
    expect(record.requestBody).toEqual({ model: 'gpt-4o', api_key: '[REDACTED]' })
    expect(record.responseBody).toEqual({ id: 'resp' })
    expect(record.annotations).toEqual({ costUsd: 0.25 })
  })

  it('writes createdAt as toISOString does, within a second and across seconds', () => {
    const base = Date.parse('2026-11-23T23:59:58Z')
    for (const offsetMs of [0, 1, 9, 10, 99, 100, 999, 1000, 1005, 1999, 2000, 2001, -1, 86_400_123]) {
      const createdAtMs = base + offsetMs
      expect(stored({ ...leanDraft(), createdAtMs }).createdAt).toBe(new Date(createdAtMs).toISOString())
    }
  })

  it('sends no metadata under log level off, and no bodies below full', () => {
    expect(stored({ ...fullDraft(), logLevel: 'off' })).toMatchObject({ logLevel: 'off', metadata: {}, requestBody: null, responseBody: null })
    expect(stored({ ...fullDraft(), logLevel: 'metadata' })).toMatchObject({ logLevel: 'metadata', metadata: { team: 'a' }, requestBody: null, responseBody: null })
  })

  it('writes strings and numbers as JSON.stringify does, escapes and unpaired surrogates included', () => {
    const texts = ['', 'gpt-4o', 'say "hi"', 'back\\slash', 'line\nbreak\ttab\u0000nul\u001f', 'é€🙂', 'lone \ud83d high', 'lone \ude42 low', '\u2028\u2029', '\u007f']
    for (const text of texts) expect(jsonString(text)).toBe(JSON.stringify(text))
    const draft: UsageDraft = { ...fullDraft(), id: 'id "quoted"', modelServed: 'model\n\ud800', errorCode: 'é🙂', costUsd: Number.NaN, latencyMs: 1.5e-7, metadata: { 'key "q"': 'v\\', long: 'x'.repeat(5000) } }
    const wire = JSON.parse(wireLine(draft)) as Record<string, unknown>
    expect(wire).toMatchObject({ id: 'id "quoted"', modelServed: 'model\n\ud800', errorCode: 'é🙂', costUsd: null, latencyMs: 1.5e-7 })
    expect(wire.metadata).toEqual({ 'key "q"': 'v\\', long: 'x'.repeat(4096) })
  })
})

