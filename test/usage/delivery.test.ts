/**
 * Usage delivery across a control-plane outage: a gateway's shipper sends to the real control
 * plane's ingest route over HTTP with the gateway token; the control plane is stopped, records
 * keep coming (the gateway spools them to disk), the control plane comes back on the same
 * database and address, and every record is stored exactly once. Runs on PGlite (data directory)
 * and on PostgreSQL.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { startUsageShipping, type UsageShipper } from '@gatehouse/gateway'
import { httpUsageTransport } from '../../gateway/src/usage/http-transport.ts'
import type { UsageDraft } from '../../gateway/src/usage/draft.ts'
import { serveControlPlane, type ControlPlane } from '../../operator/src/cli/control-plane.ts'
import { createTestDatabase } from '../../operator/src/store/testing.ts'

const TOKEN = 'gateway-token-for-usage-delivery-tests'
const silent = pino({ level: 'silent' })
const directories: string[] = []

afterAll(async () => {
  for (const dir of directories) await rm(dir, { recursive: true, force: true })
})

let sequence = 0
function draft(organizationId: string): UsageDraft {
  sequence++
  return {
    id: `delivery-${process.pid}-${sequence}`, createdAtMs: Date.now(), organizationId, workspaceId: null, apiKeyId: 'key-1', userId: null,
    traceId: `trace-${sequence}`, spanId: null, parentSpanId: null, spanName: null, providerId: 'p', providerSlug: 'openai', providerKind: 'openai',
    integrationId: null, configId: null, deploymentId: null, promptId: null, promptVersionId: null, mcpServerId: null, mcpToolName: null, agentServerId: null, agentMethod: null, route: 'chat', endpointType: 'chatComplete', modelRequested: 'gpt-4o',
    modelServed: 'gpt-4o', attempts: 1, retries: 0, targetPath: null, statusCode: 200, errorCode: null, cacheStatus: null, streamed: false,
    aborted: false, finishReason: 'stop', inputTokens: 3, outputTokens: 2, cachedInputTokens: 0, cacheWriteInputTokens: 0, reasoningTokens: 0, audioInputTokens: 0, cachedAudioInputTokens: 0, audioOutputTokens: 0, audioSeconds: null, inputCharacters: 0, images: 0, imageInputTokens: 0, cacheSavedCostUsd: null,
    estimated: false, costUsd: 0.00003, pricingVersion: 'v', latencyMs: 5, ttftMs: 5, metadata: null, logLevel: 'metadata',
    requestBody: null, responseBody: null, annotations: null,
  }
}

async function storedCount(controlPlane: ControlPlane, prefix: string): Promise<{ rows: number; distinct: number }> {
  const [row] = await controlPlane.store.usageLogs.reader.query<{ rows: number; distinct: number }>(
    'SELECT count(*)::int AS rows, count(DISTINCT id)::int AS distinct FROM usage_logs WHERE id LIKE $1', [`${prefix}%`],
  )
  return row!
}

const backends = [
  { name: 'pglite', database: async () => ({ env: {}, drop: async () => {} }) },
  { name: 'postgres', database: async () => { const db = await createTestDatabase(); return { env: { GATEHOUSE_DATABASE_URL: db.url }, drop: db.drop } } },
]

describe.each(backends)('usage delivery through a control-plane outage on $name', (backend) => {
  it('spools while the control plane is down and stores every record once after it returns', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-usage-cp-'))
    const spoolDir = await mkdtemp(join(tmpdir(), 'gatehouse-usage-spool-'))
    directories.push(dataDir, spoolDir)
    const database = await backend.database()
    const env = { GATEHOUSE_GATEWAY_TOKEN: TOKEN, GATEHOUSE_KEY_PEPPER: 'pepper-for-usage-delivery-tests-0123456789', ...database.env }
    let controlPlane = await serveControlPlane({ dataDir, resourceFiles: [], env, logger: silent, host: '127.0.0.1', port: 0 })
    const url = controlPlane.url
    const port = Number(new URL(url).port)
    const orgId = (await controlPlane.store.organizations.first())!.id
    const delivery = httpUsageTransport({ controlPlaneUrl: url, token: TOKEN, timeoutMs: 2000 })
    let shipper: UsageShipper | null = null
    try {
      shipper = startUsageShipping({ transport: delivery.transport, spoolDir, flushIntervalMs: 60_000 })
      const prefix = `delivery-${process.pid}-`
      const before = sequence
      for (let i = 0; i < 50; i++) shipper.offer(draft(orgId))
      await shipper.flush()
      expect(shipper.stats()).toMatchObject({ shipped: 50, spooled: 0 })

      await controlPlane.close()
      for (let i = 0; i < 120; i++) shipper.offer(draft(orgId))
      await shipper.flush()
      expect(shipper.stats().spooled).toBe(120)
      expect((await readdir(spoolDir)).length).toBeGreaterThan(0)

      controlPlane = await serveControlPlane({ dataDir, resourceFiles: [], env, logger: silent, host: '127.0.0.1', port })
      for (let i = 0; i < 30; i++) shipper.offer(draft(orgId))
      await shipper.flush()
      expect(await readdir(spoolDir)).toEqual([])
      const stored = await storedCount(controlPlane, prefix)
      expect(stored).toEqual({ rows: sequence - before, distinct: sequence - before })
      expect(shipper.stats()).toMatchObject({ shipped: 200, recordsDropped: 0, bodiesDropped: 0 })
    } finally {
      await shipper?.close()
      await delivery.close()
      await controlPlane.close()
      await database.drop()
    }
  }, 300_000)
})
