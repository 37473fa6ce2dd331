import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../index.ts'
import { testBackends } from '../testing.ts'
import { generateUsageRecords } from '../../usage/testing.ts'
import { DAY_MS, DEFAULT_RETENTION, rollupRows } from './usage-logs.ts'

const backends = await testBackends()
const NOW = Date.parse('2026-11-23T12:00:00Z')

describe.each(backends)('usage logs on $name', (backend) => {
  let store: Store
  let dispose: () => Promise<void>
  let orgId: string

  beforeAll(async () => {
    if (backend.skip) return
    ;({ store, dispose } = await backend.open())
    orgId = (await store.organizations.create({ name: 'Acme' })).id
  })
  afterAll(async () => {
    await dispose?.()
  })

  it.skipIf(backend.skip)('stores a batch once, however often it is sent, with rollups counted once', async () => {
    const records = generateUsageRecords({ count: 300, fromMs: NOW - 3 * DAY_MS, toMs: NOW, organizationId: orgId, workspaceIds: ['ws-a', 'ws-b'], seed: 7 })
    expect(await store.usageLogs.ingest(records)).toEqual({ accepted: 300, duplicates: 0 })
    // A retried batch, and one that overlaps it, add nothing twice.
    expect(await store.usageLogs.ingest(records)).toEqual({ accepted: 0, duplicates: 300 })
    const more = generateUsageRecords({ count: 20, fromMs: NOW - DAY_MS, toMs: NOW, organizationId: orgId, workspaceIds: ['ws-a'], seed: 8 })
    expect(await store.usageLogs.ingest([...records.slice(0, 10), ...more])).toEqual({ accepted: 20, duplicates: 10 })

    const all = [...records, ...more]
    const partitions = await store.usageLogs.partitions()
    expect(partitions.length).toBeGreaterThanOrEqual(3)
    const hourRows = rollupRows(all).filter((row) => row.period === 'hour')
    const sum = (key: 'requests' | 'errors' | 'input_tokens' | 'cost_usd') => hourRows.reduce((total, row) => total + row[key], 0)
    const stored = await store.usageLogs.rollupTotals(orgId, 'hour')
    expect(stored.requests).toBe(320)
    expect(stored.requests).toBe(sum('requests'))
    expect(stored.errors).toBe(sum('errors'))
    expect(stored.inputTokens).toBe(sum('input_tokens'))
    expect(stored.costUsd).toBeCloseTo(sum('cost_usd'), 9)
    expect(stored.histogramTotal).toBe(320)
    expect((await store.usageLogs.rollupTotals(orgId, 'minute')).requests).toBe(320)
  })

  it.skipIf(backend.skip)('retention drops the partitions of days past the window, and old rollups', async () => {
    const old = generateUsageRecords({ count: 50, fromMs: NOW - 100 * DAY_MS, toMs: NOW - 95 * DAY_MS, organizationId: orgId, workspaceIds: ['ws-a'], seed: 9 })
    await store.usageLogs.ingest(old)
    const before = await store.usageLogs.partitions()
    const outcome = await store.usageLogs.applyRetention(new Date(NOW), DEFAULT_RETENTION)
    expect(outcome.droppedPartitions.length).toBeGreaterThan(0)
    const after = await store.usageLogs.partitions()
    expect(after.every((p) => p.dayMs >= NOW - 91 * DAY_MS)).toBe(true)
    expect(after.length).toBe(before.length - outcome.droppedPartitions.length)
    // Hour rollups of those days stay (365 days); their minute rollups went (7 days).
    expect((await store.usageLogs.rollupTotals(orgId, 'hour')).requests).toBe(370)
    expect((await store.usageLogs.rollupTotals(orgId, 'minute')).requests).toBeLessThan(370)
    // A record for a dropped day can still arrive late: its partition comes back.
    expect(await store.usageLogs.ingest(old.slice(0, 1))).toEqual({ accepted: 1, duplicates: 0 })
  })
})
