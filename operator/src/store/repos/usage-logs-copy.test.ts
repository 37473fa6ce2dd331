/**
 * How a usage batch is written: COPY through a staging table on PostgreSQL, one INSERT from a jsonb
 * record set on PGlite, the same rows either way; a retried or overlapping batch stored once; a
 * failing batch leaves nothing behind and the connection fit for the next one.
 *
 * Breaks tried, each failing a test here: writing NULL as a quoted empty string (empty strings and
 * NULLs become one); not JSON-encoding jsonb values that are strings (a body that is a JSON string
 * is refused); moving staged rows without ON CONFLICT DO NOTHING (the retried batch fails).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UsageRecord } from '@gatehouse/gateway/snapshot'
import { generateUsageRecords } from '../../usage/testing.ts'
import { storeOnDatabase, type Store } from '../index.ts'
import { openPostgresDatabase } from '../postgres-driver.ts'
import type { SqlDatabase, SqlExecutor } from '../sql.ts'
import { createTestDatabase, openMigratedPglite, testBackends } from '../testing.ts'
import { DAY_MS, UsageLogRepository } from './usage-logs.ts'

const NOW = Date.parse('2026-11-20T12:00:00Z')
const backends = await testBackends()

/** The database with its transactions' COPY calls counted. */
function counting(db: SqlDatabase): { db: SqlDatabase; copies: () => number } {
  let copies = 0
  const wrapped: SqlDatabase = {
    ...db,
    query: db.query.bind(db),
    script: db.script.bind(db),
    transaction: (fn) => db.transaction((tx) => {
      const copyIn = tx.copyIn?.bind(tx)
      const spied: SqlExecutor = copyIn === undefined ? tx : { ...tx, copyIn: async (text, data) => { copies++; await copyIn(text, data) } }
      return fn(spied)
    }),
  }
  return { db: wrapped, copies: () => copies }
}

/** Values CSV and JSON must carry exactly: quotes, commas, newlines, backslashes, non-ASCII, empty vs NULL. */
function awkward(record: UsageRecord, index: number): UsageRecord {
  const variants: Array<Partial<UsageRecord>> = [
    { spanName: 'say "hi", then\nleave \\ now', errorCode: '', finishReason: null, metadata: { 'quote"key': 'comma, "quote"', empty: '' } },
    { spanName: '', modelServed: 'model\r\nwith CRLF', requestBody: 'a body that is a JSON string', responseBody: { text: 'naïve café ✓ \u{1F600}', nested: { q: '"\\' } } },
    { spanName: null, costUsd: 1.25e-9, requestBody: [1, 'two', null, { three: true }], responseBody: null, annotations: { hookResults: [{ id: 'h', verdict: false }] } },
    { userId: 'NULL', traceId: '\\N', providerSlug: ',', latencyMs: 0.125, ttftMs: 0 },
  ]
  return { ...record, ...variants[index % variants.length], logLevel: 'full' }
}

const READ_BACK = `SELECT id, created_at, span_name, error_code, finish_reason, model_served, user_id, trace_id, provider_slug, cost_usd, latency_ms, ttft_ms,
  metadata, request_body, response_body, annotations, streamed, status_code, input_tokens::float8 AS input_tokens FROM usage_logs ORDER BY id`

function expected(records: readonly UsageRecord[]) {
  return [...records].sort((a, b) => (a.id < b.id ? -1 : 1)).map((r) => ({
    id: r.id, created_at: new Date(r.createdAt), span_name: r.spanName, error_code: r.errorCode, finish_reason: r.finishReason, model_served: r.modelServed,
    user_id: r.userId, trace_id: r.traceId, provider_slug: r.providerSlug, cost_usd: r.costUsd, latency_ms: r.latencyMs, ttft_ms: r.ttftMs,
    metadata: r.metadata, request_body: r.requestBody, response_body: r.responseBody, annotations: r.annotations, streamed: r.streamed, status_code: r.statusCode,
    input_tokens: r.inputTokens,
  }))
}

describe.each(backends)('usage batches on $name', (backend) => {
  let raw: SqlDatabase
  let store: Store
  let drop: () => Promise<void> = async () => {}
  let repository: UsageLogRepository
  let copies: () => number
  let orgId: string

  beforeAll(async () => {
    if (backend.skip) return
    if (backend.name === 'postgres') {
      const created = await createTestDatabase()
      drop = created.drop
      // One connection: a failed batch must leave that very connection fit for the next.
      raw = await openPostgresDatabase({ url: created.url, maxConnections: 1 })
    } else {
      raw = await openMigratedPglite()
    }
    store = await storeOnDatabase(raw)
    orgId = (await store.organizations.create({ name: 'Copy Co' })).id
    const spied = counting(raw)
    repository = new UsageLogRepository(spied.db)
    copies = spied.copies
  })
  afterAll(async () => {
    await store?.close()
    await drop()
  })

  it.skipIf(backend.skip)('stores awkward values exactly, with COPY on PostgreSQL only, and a retried or overlapping batch once', async () => {
    const records = generateUsageRecords({ count: 400, fromMs: NOW - 2 * DAY_MS, toMs: NOW, organizationId: orgId, workspaceIds: ['ws-a'], seed: 11 }).map(awkward)
    expect(await repository.ingest(records)).toEqual({ accepted: 400, duplicates: 0 })
    expect(copies()).toBe(backend.name === 'postgres' ? 1 : 0)
    expect(await raw.query(READ_BACK)).toEqual(expected(records))

    expect(await repository.ingest(records)).toEqual({ accepted: 0, duplicates: 400 })
    const more = generateUsageRecords({ count: 30, fromMs: NOW - DAY_MS, toMs: NOW, organizationId: orgId, workspaceIds: ['ws-a'], seed: 12 })
    expect(await repository.ingest([...records.slice(0, 50), ...more])).toEqual({ accepted: 30, duplicates: 50 })
    const [count] = await raw.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_logs')
    expect(count!.n).toBe(430)
    // Rollups count only what was new.
    expect((await repository.rollupTotals(orgId, 'hour')).requests).toBe(430)
    expect(copies()).toBe(backend.name === 'postgres' ? 3 : 0)
  })

  it.skipIf(backend.skip)('a failing batch stores nothing and the next batch goes through', async () => {
    const records = generateUsageRecords({ count: 20, fromMs: NOW - DAY_MS, toMs: NOW, organizationId: orgId, workspaceIds: ['ws-a'], seed: 13 })
    const broken = records.map((record, index) => (index === 17 ? { ...record, route: null as unknown as string } : record))
    await expect(repository.ingest(broken)).rejects.toThrow()
    const ids = records.map((record) => record.id)
    const [none] = await raw.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_logs WHERE id = ANY($1::text[])', [ids])
    expect(none!.n).toBe(0)
    expect(await repository.ingest(records)).toEqual({ accepted: 20, duplicates: 0 })
  })
})
