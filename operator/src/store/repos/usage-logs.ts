/**
 * Usage logs: batched ingest, the per-minute and per-hour rollups written in the same transaction
 * from the rows that were new, daily partitions created on demand, and retention by dropping whole
 * partitions. A batch is written with COPY where the backend has it (PostgreSQL): into a temporary
 * table dropped at commit, then one INSERT … SELECT … ON CONFLICT DO NOTHING, so a retried batch
 * is still stored once. Elsewhere (PGlite) it is one INSERT from a jsonb record set, with the same
 * conflict rule.
 */
import type { UsageRecord } from '@gatehouse/gateway/snapshot'
import { csvChunks } from '../copy-csv.ts'
import { binOf } from '../histogram.ts'
import type { SqlDatabase, SqlExecutor } from '../sql.ts'

export const DAY_MS = 86_400_000

/** One distinct request subject of usage records (see `limitSubjects`). */
export interface LimitSubjectRow {
  workspaceId: string | null
  apiKeyId: string | null
  userId: string | null
  endpointType: string
  model: string | null
  providerId: string | null
  providerSlug: string | null
  metadata: Record<string, unknown>
}

/** Record field -> [column, SQL type] for the jsonb record set. Order is the insert's column order. */
const COLUMNS: ReadonlyArray<readonly [keyof UsageRecord, string, string]> = [
  ['id', 'id', 'text'], ['createdAt', 'created_at', 'timestamptz'], ['organizationId', 'organization_id', 'text'],
  ['workspaceId', 'workspace_id', 'text'], ['apiKeyId', 'api_key_id', 'text'], ['userId', 'user_id', 'text'],
  ['traceId', 'trace_id', 'text'], ['spanId', 'span_id', 'text'], ['parentSpanId', 'parent_span_id', 'text'],
  ['spanName', 'span_name', 'text'], ['providerId', 'provider_id', 'text'], ['providerSlug', 'provider_slug', 'text'],
  ['providerKind', 'provider_kind', 'text'], ['integrationId', 'integration_id', 'text'], ['configId', 'config_id', 'text'],
  ['deploymentId', 'deployment_id', 'text'], ['promptId', 'prompt_id', 'text'], ['route', 'route', 'text'],
  ['endpointType', 'endpoint_type', 'text'], ['modelRequested', 'model_requested', 'text'], ['modelServed', 'model_served', 'text'],
  ['attempts', 'attempts', 'integer'], ['retries', 'retries', 'integer'], ['targetPath', 'target_path', 'text'],
  ['statusCode', 'status_code', 'integer'], ['errorCode', 'error_code', 'text'], ['cacheStatus', 'cache_status', 'text'],
  ['streamed', 'streamed', 'boolean'], ['aborted', 'aborted', 'boolean'], ['finishReason', 'finish_reason', 'text'],
  ['inputTokens', 'input_tokens', 'bigint'], ['outputTokens', 'output_tokens', 'bigint'], ['cachedInputTokens', 'cached_input_tokens', 'bigint'],
  ['cacheWriteInputTokens', 'cache_write_input_tokens', 'bigint'], ['reasoningTokens', 'reasoning_tokens', 'bigint'],
  ['estimated', 'estimated', 'boolean'], ['costUsd', 'cost_usd', 'double precision'], ['pricingVersion', 'pricing_version', 'text'],
  ['latencyMs', 'latency_ms', 'double precision'], ['ttftMs', 'ttft_ms', 'double precision'], ['metadata', 'metadata', 'jsonb'],
  ['logLevel', 'log_level', 'text'], ['requestBody', 'request_body', 'jsonb'], ['responseBody', 'response_body', 'jsonb'],
  ['bodiesDropped', 'bodies_dropped', 'boolean'], ['annotations', 'annotations', 'jsonb'],
  ['promptVersionId', 'prompt_version_id', 'text'],
  ['mcpServerId', 'mcp_server_id', 'text'], ['mcpToolName', 'mcp_tool_name', 'text'],
  ['agentServerId', 'agent_server_id', 'text'], ['agentMethod', 'agent_method', 'text'],
  ['audioInputTokens', 'audio_input_tokens', 'bigint'], ['cachedAudioInputTokens', 'cached_audio_input_tokens', 'bigint'],
  ['audioOutputTokens', 'audio_output_tokens', 'bigint'], ['cacheSavedCostUsd', 'cache_saved_cost_usd', 'double precision'],
  ['audioSeconds', 'audio_seconds', 'double precision'], ['inputCharacters', 'input_characters', 'bigint'],
  ['images', 'images', 'integer'], ['imageInputTokens', 'image_input_tokens', 'bigint'],
]

const COLUMN_LIST = COLUMNS.map(([, column]) => column).join(', ')
const RECORD_TYPE = COLUMNS.map(([, column, type]) => `${column} ${type}`).join(', ')
const INSERT_SQL = `INSERT INTO usage_logs (${COLUMN_LIST})
  SELECT ${COLUMN_LIST} FROM jsonb_to_recordset($1::jsonb) AS r(${RECORD_TYPE})
  ON CONFLICT (created_at, id) DO NOTHING
  RETURNING id`

/** The COPY path: a per-transaction staging table shaped like usage_logs, filled by COPY, moved by one INSERT. */
const STAGING_TABLE = 'usage_logs_incoming'
const CREATE_STAGING_SQL = `CREATE TEMPORARY TABLE ${STAGING_TABLE} (LIKE usage_logs INCLUDING DEFAULTS) ON COMMIT DROP`
const COPY_SQL = `COPY ${STAGING_TABLE} (${COLUMN_LIST}) FROM STDIN (FORMAT csv)`
const MOVE_SQL = `INSERT INTO usage_logs (${COLUMN_LIST}) SELECT ${COLUMN_LIST} FROM ${STAGING_TABLE}
  ON CONFLICT (created_at, id) DO NOTHING
  RETURNING id`

const ROLLUP_DIMENSIONS = ['workspace_id', 'api_key_id', 'provider_id', 'provider_kind', 'model', 'config_id', 'prompt_id'] as const
const ROLLUP_SQL = `INSERT INTO usage_rollups (period, bucket_start, organization_id, ${ROLLUP_DIMENSIONS.join(', ')}, status_code,
    requests, errors, cache_hits, input_tokens, output_tokens, cost_usd, latency_ms_sum, latency_hist, first_seen, last_seen)
  SELECT period, bucket_start, organization_id, ${ROLLUP_DIMENSIONS.join(', ')}, status_code,
    requests, errors, cache_hits, input_tokens, output_tokens, cost_usd, latency_ms_sum, latency_hist, first_seen, last_seen
  FROM jsonb_to_recordset($1::jsonb) AS r(period text, bucket_start timestamptz, organization_id text,
    ${ROLLUP_DIMENSIONS.map((d) => `${d} text`).join(', ')}, status_code integer, requests bigint, errors bigint, cache_hits bigint,
    input_tokens bigint, output_tokens bigint, cost_usd double precision, latency_ms_sum double precision, latency_hist jsonb,
    first_seen timestamptz, last_seen timestamptz)
  ON CONFLICT (period, organization_id, bucket_start, ${ROLLUP_DIMENSIONS.join(', ')}, status_code) DO UPDATE SET
    requests = usage_rollups.requests + excluded.requests,
    errors = usage_rollups.errors + excluded.errors,
    cache_hits = usage_rollups.cache_hits + excluded.cache_hits,
    input_tokens = usage_rollups.input_tokens + excluded.input_tokens,
    output_tokens = usage_rollups.output_tokens + excluded.output_tokens,
    cost_usd = usage_rollups.cost_usd + excluded.cost_usd,
    latency_ms_sum = usage_rollups.latency_ms_sum + excluded.latency_ms_sum,
    latency_hist = (SELECT jsonb_object_agg(bin, total) FROM (
      SELECT bin, sum(n::bigint) AS total FROM (
        SELECT * FROM jsonb_each_text(usage_rollups.latency_hist) UNION ALL SELECT * FROM jsonb_each_text(excluded.latency_hist)
      ) AS both_sides(bin, n) GROUP BY bin) AS merged),
    first_seen = LEAST(usage_rollups.first_seen, excluded.first_seen),
    last_seen = GREATEST(usage_rollups.last_seen, excluded.last_seen)`

export const MINUTE_MS = 60_000
export const HOUR_MS = 3_600_000

/** The model a request is counted under: what was served, else what was asked for. */
export function modelOf(record: Pick<UsageRecord, 'modelServed' | 'modelRequested'>): string {
  return record.modelServed ?? record.modelRequested ?? ''
}

export function isCacheHit(cacheStatus: string | null): boolean {
  return cacheStatus === 'HIT' || cacheStatus === 'SEMANTIC HIT'
}

interface RollupRow {
  period: 'minute' | 'hour'
  bucket_start: string
  organization_id: string
  workspace_id: string
  api_key_id: string
  provider_id: string
  provider_kind: string
  model: string
  config_id: string
  prompt_id: string
  status_code: number
  requests: number
  errors: number
  cache_hits: number
  input_tokens: number
  output_tokens: number
  cost_usd: number
  latency_ms_sum: number
  latency_hist: Record<string, number>
  first_seen: string
  last_seen: string
}

/** Sums records into rollup rows, one per (period, bucket, dimensions). */
export function rollupRows(records: readonly UsageRecord[]): RollupRow[] {
  const rows = new Map<string, RollupRow & { firstMs: number; lastMs: number }>()
  for (const record of records) {
    const atMs = Date.parse(record.createdAt)
    for (const [period, width] of [['minute', MINUTE_MS], ['hour', HOUR_MS]] as const) {
      const bucketMs = atMs - (atMs % width)
      const dims = {
        workspace_id: record.workspaceId ?? '', api_key_id: record.apiKeyId ?? '', provider_id: record.providerId ?? '',
        provider_kind: record.providerKind ?? '', model: modelOf(record), config_id: record.configId ?? '', prompt_id: record.promptId ?? '',
      }
      const key = [period, bucketMs, record.organizationId, ...Object.values(dims), record.statusCode].join('\u0000')
      let row = rows.get(key)
      if (!row) {
        row = {
          period, bucket_start: new Date(bucketMs).toISOString(), organization_id: record.organizationId, ...dims, status_code: record.statusCode,
          requests: 0, errors: 0, cache_hits: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, latency_ms_sum: 0,
          latency_hist: {}, first_seen: record.createdAt, last_seen: record.createdAt, firstMs: atMs, lastMs: atMs,
        }
        rows.set(key, row)
      }
      row.requests++
      if (record.statusCode >= 400) row.errors++
      if (isCacheHit(record.cacheStatus)) row.cache_hits++
      row.input_tokens += record.inputTokens
      row.output_tokens += record.outputTokens
      row.cost_usd += record.costUsd ?? 0
      row.latency_ms_sum += record.latencyMs
      const bin = binOf(record.latencyMs)
      row.latency_hist[bin] = (row.latency_hist[bin] ?? 0) + 1
      if (atMs < row.firstMs) {
        row.firstMs = atMs
        row.first_seen = record.createdAt
      }
      if (atMs > row.lastMs) {
        row.lastMs = atMs
        row.last_seen = record.createdAt
      }
    }
  }
  return [...rows.values()].map(({ firstMs: _first, lastMs: _last, ...row }) => row)
}

function partitionName(dayMs: number): string {
  const day = new Date(dayMs).toISOString().slice(0, 10).replaceAll('-', '')
  return `usage_logs_p${day}`
}

const PARTITION_PATTERN = /^usage_logs_p(\d{4})(\d{2})(\d{2})$/

export interface IngestOutcome {
  accepted: number
  duplicates: number
}

/** The batch as the jsonb record set of the INSERT path. */
function recordSet(records: readonly UsageRecord[]): string {
  return JSON.stringify(records.map((record) => {
    const row: Record<string, unknown> = {}
    for (const [field, column] of COLUMNS) row[column] = record[field]
    return row
  }))
}

/** The COPY path (inside the ingest transaction); answers the ids that were new, as the INSERT path does. */
async function copyBatch(tx: SqlExecutor, copyIn: NonNullable<SqlExecutor['copyIn']>, records: readonly UsageRecord[]): Promise<Array<{ id: string }>> {
  await tx.query(CREATE_STAGING_SQL)
  // jsonb columns get their JSON text (a body that is a JSON string must stay a JSON string).
  const values = (record: UsageRecord): unknown[] => COLUMNS.map(([field, , type]) => (type === 'jsonb' && record[field] != null ? JSON.stringify(record[field]) : record[field]))
  await copyIn(COPY_SQL, csvChunks(records.map(values)))
  return tx.query<{ id: string }>(MOVE_SQL)
}

export class UsageLogRepository {
  readonly #db: SqlDatabase
  /** Days whose partition this process created or saw. */
  readonly #partitions = new Set<number>()

  constructor(db: SqlDatabase) {
    this.#db = db
  }

  /** Read access for the analytics and log queries (usage/), which build their own parameterised SQL. */
  get reader(): SqlExecutor {
    return this.#db
  }

  /** Creates the daily partitions these instants fall in (idempotent, safe across replicas). */
  async ensurePartitions(instantsMs: Iterable<number>): Promise<void> {
    const days = new Set<number>()
    for (const atMs of instantsMs) days.add(atMs - (((atMs % DAY_MS) + DAY_MS) % DAY_MS))
    for (const dayMs of days) {
      if (this.#partitions.has(dayMs)) continue
      const from = new Date(dayMs).toISOString()
      const to = new Date(dayMs + DAY_MS).toISOString()
      // The name is built from digits only and the bounds are ISO instants we formatted: DDL takes no parameters.
      try {
        await this.#db.query(`CREATE TABLE IF NOT EXISTS ${partitionName(dayMs)} PARTITION OF usage_logs FOR VALUES FROM ('${from}') TO ('${to}')`)
      } catch (error) {
        // Another replica created it between our check and our create.
        if ((error as { code?: string }).code !== '42P07') throw error
      }
      this.#partitions.add(dayMs)
    }
  }

  /** Stores a batch: each record once (by id and start), its rollups in the same transaction. */
  async ingest(records: readonly UsageRecord[]): Promise<IngestOutcome> {
    if (records.length === 0) return { accepted: 0, duplicates: 0 }
    await this.ensurePartitions(records.map((record) => Date.parse(record.createdAt)))
    return this.#db.transaction(async (tx) => {
      const inserted = tx.copyIn ? await copyBatch(tx, tx.copyIn.bind(tx), records) : await tx.query<{ id: string }>(INSERT_SQL, [recordSet(records)])
      const fresh = new Set(inserted.map((row) => row.id))
      const counted = fresh.size === records.length ? records : records.filter((record) => fresh.has(record.id))
      if (counted.length > 0) await tx.query(ROLLUP_SQL, [JSON.stringify(rollupRows(counted))])
      return { accepted: fresh.size, duplicates: records.length - fresh.size }
    })
  }

  /** Sums over every rollup row of a period (consistency checks and the organisation summary). */
  async rollupTotals(organizationId: string, period: 'minute' | 'hour'): Promise<{ requests: number; errors: number; inputTokens: number; costUsd: number; histogramTotal: number }> {
    const [row] = await this.#db.query<{ requests: number; errors: number; input_tokens: number; cost_usd: number; hist: number }>(
      `SELECT coalesce(sum(requests), 0)::float8 AS requests, coalesce(sum(errors), 0)::float8 AS errors,
              coalesce(sum(input_tokens), 0)::float8 AS input_tokens, coalesce(sum(cost_usd), 0)::float8 AS cost_usd,
              coalesce(sum((SELECT sum(v::bigint) FROM jsonb_each_text(latency_hist) AS e(k, v))), 0)::float8 AS hist
       FROM usage_rollups WHERE organization_id = $1 AND period = $2`,
      [organizationId, period],
    )
    return { requests: row!.requests, errors: row!.errors, inputTokens: row!.input_tokens, costUsd: row!.cost_usd, histogramTotal: row!.hist }
  }

  /** The days that have a partition, oldest first. */
  /**
   * The distinct request subjects (the fields limits match and group on) of an organisation's
   * usage records since `since`, optionally in one workspace; of the metadata, only `metadataKeys`.
   * The usage alerts read which groups of a group_by policy have spent from here. At most `max`.
   */
  async limitSubjects(organizationId: string, since: Date, workspaceId: string | null, metadataKeys: readonly string[], max = 10_000): Promise<LimitSubjectRow[]> {
    const rows = await this.#db.query<{ workspace_id: string | null; api_key_id: string | null; user_id: string | null; endpoint_type: string; model_requested: string | null; provider_id: string | null; provider_slug: string | null; metadata: Record<string, unknown> | null }>(
      `SELECT DISTINCT workspace_id, api_key_id, user_id, endpoint_type, model_requested, provider_id, provider_slug,
          (SELECT jsonb_object_agg(key, value) FROM jsonb_each(metadata) WHERE key = ANY($4::text[])) AS metadata
        FROM usage_logs
        WHERE organization_id = $1 AND created_at >= $2 AND ($3::text IS NULL OR workspace_id = $3)
        LIMIT $5`,
      [organizationId, since.toISOString(), workspaceId, [...metadataKeys], max],
    )
    return rows.map((row) => ({
      workspaceId: row.workspace_id, apiKeyId: row.api_key_id, userId: row.user_id, endpointType: row.endpoint_type, model: row.model_requested,
      providerId: row.provider_id, providerSlug: row.provider_slug, metadata: row.metadata ?? {},
    }))
  }

  async partitions(): Promise<Array<{ name: string; dayMs: number }>> {
    const rows = await this.#db.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
       WHERE p.relname = 'usage_logs' ORDER BY c.relname`,
    )
    return rows.flatMap(({ name }) => {
      const match = PARTITION_PATTERN.exec(name)
      return match ? [{ name, dayMs: Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) }] : []
    })
  }

  /**
   * Retention: drops the partitions of days that ended before `now - logsDays`, deletes minute
   * rollups older than `minuteRollupDays` and hour rollups older than `rollupDays`.
   */
  async applyRetention(now: Date, policy: RetentionPolicy): Promise<{ droppedPartitions: string[]; deletedRollups: number }> {
    const logsCutoffMs = now.getTime() - policy.logsDays * DAY_MS
    const dropped: string[] = []
    for (const partition of await this.partitions()) {
      if (partition.dayMs + DAY_MS > logsCutoffMs) continue
      // The name matched PARTITION_PATTERN (digits only).
      await this.#db.query(`DROP TABLE IF EXISTS ${partition.name}`)
      this.#partitions.delete(partition.dayMs)
      dropped.push(partition.name)
    }
    const minutes = await this.#db.query<{ n: number }>(
      `WITH d AS (DELETE FROM usage_rollups WHERE period = 'minute' AND bucket_start < $1 RETURNING 1) SELECT count(*)::int AS n FROM d`,
      [new Date(now.getTime() - policy.minuteRollupDays * DAY_MS)],
    )
    const hours = await this.#db.query<{ n: number }>(
      `WITH d AS (DELETE FROM usage_rollups WHERE period = 'hour' AND bucket_start < $1 RETURNING 1) SELECT count(*)::int AS n FROM d`,
      [new Date(now.getTime() - policy.rollupDays * DAY_MS)],
    )
    return { droppedPartitions: dropped, deletedRollups: (minutes[0]?.n ?? 0) + (hours[0]?.n ?? 0) }
  }
}

export interface RetentionPolicy {
  logsDays: number
  rollupDays: number
  minuteRollupDays: number
}

/** The spec's display defaults: 90 days of logs, 365 of metrics; minute detail for a week. */
export const DEFAULT_RETENTION: RetentionPolicy = { logsDays: 90, rollupDays: 365, minuteRollupDays: 7 }
