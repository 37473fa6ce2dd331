import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { usageRecord, type UsageRecord } from '../snapshot/usage-record.ts'
import type { UsageDraft } from './draft.ts'
import type { UsageBatch } from './record-batch.ts'
import { UsageShipper } from './shipper.ts'
import { UsageSpool } from './spool.ts'

let sequence = 0
function draft(overrides: Partial<UsageDraft> = {}): UsageDraft {
  sequence++
  return {
    id: `rec-${sequence}`, createdAtMs: Date.parse('2026-11-23T10:00:00Z'), organizationId: 'org', workspaceId: 'ws', apiKeyId: 'key',
    userId: null, traceId: `trace-${sequence}`, spanId: null, parentSpanId: null, spanName: null, providerId: 'p', providerSlug: 'openai',
    providerKind: 'openai', integrationId: null, configId: null, deploymentId: null, promptId: null, promptVersionId: null, mcpServerId: null, mcpToolName: null, agentServerId: null, agentMethod: null, route: 'chat', endpointType: 'chatComplete',
    modelRequested: 'gpt-4o', modelServed: 'gpt-4o', attempts: 1, retries: 0, targetPath: null, statusCode: 200, errorCode: null,
    cacheStatus: null, streamed: false, aborted: false, finishReason: 'stop', inputTokens: 10, outputTokens: 5, cachedInputTokens: 0,
    cacheWriteInputTokens: 0, reasoningTokens: 0, audioInputTokens: 0, cachedAudioInputTokens: 0, audioOutputTokens: 0, audioSeconds: null, inputCharacters: 0, images: 0, imageInputTokens: 0, estimated: false, costUsd: 0.001, cacheSavedCostUsd: null, pricingVersion: 'v', latencyMs: 12, ttftMs: 12,
    metadata: { team: 'a', n: 3 }, logLevel: 'full',
    requestBody: { model: 'gpt-4o', messages: [{ role: 'user', content: 'my key is sk-abcdefghijklmnopqrstuvwx' }], api_key: 'plain' },
    responseBody: { choices: [{ message: { content: 'x'.repeat(2000) } }] }, annotations: null,
    ...overrides,
  }
}

/** A control plane that can be switched off, storing records by id like the real one. */
function fakeControlPlane() {
  const stored = new Map<string, UsageRecord>()
  let deliveries = 0
  const state = { up: true }
  const transport = async (batch: UsageBatch) => {
    if (!state.up) throw new Error('connection refused')
    deliveries++
    for (const line of batch.lines()) {
      const parsed = usageRecord.parse(JSON.parse(line))
      stored.set(parsed.id, parsed)
    }
  }
  return { stored, state, transport, deliveries: () => deliveries }
}

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})
async function spoolDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-spool-'))
  dirs.push(dir)
  return dir
}

describe('UsageShipper', () => {
  it('ships serialised, redacted records that pass the contract schema', async () => {
    const cp = fakeControlPlane()
    const shipper = new UsageShipper({ transport: cp.transport })
    shipper.offer(draft())
    await shipper.flush()
    const record = [...cp.stored.values()][0]!
    expect(record.metadata).toEqual({ team: 'a', n: '3' })
    expect(JSON.stringify(record.requestBody)).not.toContain('sk-abcdefghijklmnopqrstuvwx')
    expect((record.requestBody as { api_key: string }).api_key).toBe('[REDACTED]')
    expect(shipper.stats()).toMatchObject({ shipped: 1, queued: 0 })
  })

  it('spools while the control plane is away and drains oldest first, once, when it is back', async () => {
    const cp = fakeControlPlane()
    const dir = await spoolDir()
    const shipper = new UsageShipper({ transport: cp.transport, spool: new UsageSpool(dir, 10 * 1024 * 1024), batchSize: 3 })
    cp.state.up = false
    for (let i = 0; i < 10; i++) shipper.offer(draft())
    await shipper.flush()
    expect(cp.stored.size).toBe(0)
    expect((await readdir(dir)).length).toBe(4)
    expect(shipper.stats()).toMatchObject({ spooled: 10, spoolSegments: 4 })
    await shipper.close()

    // A restarted gateway finds the spool and drains it.
    const restarted = new UsageShipper({ transport: cp.transport, spool: new UsageSpool(dir, 10 * 1024 * 1024), batchSize: 3 })
    cp.state.up = true
    restarted.offer(draft())
    await restarted.flush()
    expect(cp.stored.size).toBe(11)
    expect(await readdir(dir)).toEqual([])
  })

  it('sheds the oldest bodies first when the spool is full, never the counts', async () => {
    const cp = fakeControlPlane()
    const dir = await spoolDir()
    const spool = new UsageSpool(dir, 20 * 1024)
    const shipper = new UsageShipper({ transport: cp.transport, spool, batchSize: 2 })
    cp.state.up = false
    for (let i = 0; i < 12; i++) shipper.offer(draft())
    await shipper.flush()
    const stats = shipper.stats()
    expect(stats.bodiesDropped).toBeGreaterThan(0)
    expect(stats.spoolBytes).toBeLessThanOrEqual(20 * 1024)
    cp.state.up = true
    await shipper.flush()
    expect(cp.stored.size).toBe(12)
    const records = [...cp.stored.values()]
    const lean = records.filter((r) => r.bodiesDropped)
    expect(lean.length).toBe(stats.bodiesDropped)
    // The oldest lost their bodies, the newest kept them; every record kept its tokens.
    expect(records[0]!.bodiesDropped).toBe(true)
    expect(records.at(-1)!.bodiesDropped).toBe(false)
    expect(records.every((r) => r.inputTokens === 10 && r.outputTokens === 5)).toBe(true)
  })

  it('holds failed batches in memory without a spool, bounded, bodies first', async () => {
    const cp = fakeControlPlane()
    const shipper = new UsageShipper({ transport: cp.transport, batchSize: 5, maxQueuedRecords: 10 })
    cp.state.up = false
    for (let i = 0; i < 15; i++) shipper.offer(draft())
    await shipper.flush()
    expect(shipper.stats()).toMatchObject({ recordsDropped: 5, bodiesDropped: 15 })
    cp.state.up = true
    await shipper.flush()
    expect(cp.stored.size).toBe(10)
  })

  it('drops no bodies from held records that have none (absent on the wire is null)', async () => {
    const cp = fakeControlPlane()
    const shipper = new UsageShipper({ transport: cp.transport, batchSize: 5, maxQueuedRecords: 10 })
    cp.state.up = false
    for (let i = 0; i < 15; i++) shipper.offer(draft({ logLevel: 'metadata' }))
    await shipper.flush()
    expect(shipper.stats()).toMatchObject({ recordsDropped: 5, bodiesDropped: 0 })
    cp.state.up = true
    await shipper.flush()
    expect([...cp.stored.values()].every((record) => !record.bodiesDropped && record.metadata.team === 'a')).toBe(true)
  })
})
