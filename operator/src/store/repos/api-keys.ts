/**
 * API key rows. Only HMAC hashes and a non-secret hint are stored; raw keys never reach this layer.
 * A rotation keeps the key id (usage and audit history stay attached) and moves the current hash
 * to `previous_key_hash`, valid until `previous_key_expires_at`.
 */
import type { SqlExecutor } from '../sql.ts'
import { json } from '../rows.ts'
import { jsonb, table, text, timestamp, type RecordOf } from '../table.ts'
import type { ChangeSink } from './sink.ts'
import { Where } from './filters.ts'
import { updateRow } from './patch.ts'

export type ApiKeyType = 'admin' | 'workspace'
export type ApiKeySubtype = 'service' | 'user'
export type ApiKeyStatus = 'active' | 'exhausted' | 'expired' | 'revoked'

export interface RotationPolicy {
  rotation_period?: 'weekly' | 'monthly'
  next_rotation_at?: string
  key_transition_period_ms: number
}

/** The `api_keys` table; `ApiKeyRecord` and every query below derive from it. */
export const apiKeyTable = table('api_keys', {
  id: text().insert(),
  organizationId: text().insert(),
  workspaceId: text().nullable().insert(),
  userId: text().nullable().insert(),
  type: text<ApiKeyType>().insert(),
  subtype: text<ApiKeySubtype>().insert(),
  name: text().insert().patch(),
  description: text().nullable().insert().patch(),
  keyHash: text().insert(),
  keyHint: text().insert(),
  previousKeyHash: text().nullable(),
  previousKeyHint: text().nullable(),
  previousKeyExpiresAt: timestamp().nullable(),
  scopes: jsonb<string[]>().insert().patch(),
  status: text<ApiKeyStatus>().patch(),
  expiresAt: timestamp().nullable().insert().patch(),
  rotationPolicy: jsonb<RotationPolicy>().nullable().insert().patch(),
  nextRotationAt: timestamp().nullable().insert().patch(),
  lastRotatedAt: timestamp().nullable(),
  usageLimits: jsonb<Record<string, unknown>>().nullable().insert().patch(),
  rateLimits: jsonb<unknown[]>().nullable().insert().patch(),
  defaults: jsonb<Record<string, unknown>>().insert({}).patch(),
  alertEmails: jsonb<string[]>().insert([]).patch(),
  lastResetAt: timestamp().nullable().patch(),
  creationMode: text<'ui' | 'api' | 'auto'>().insert('api'),
  createdBy: text().nullable().insert(),
  revokedAt: timestamp().nullable(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type ApiKeyRecord = RecordOf<typeof apiKeyTable.fields>

export interface NewApiKey {
  id: string
  organizationId: string
  workspaceId: string | null
  userId: string | null
  type: ApiKeyType
  subtype: ApiKeySubtype
  name: string
  description?: string | null
  keyHash: string
  keyHint: string
  scopes: string[]
  expiresAt?: string | null
  rotationPolicy?: RotationPolicy | null
  nextRotationAt?: string | null
  usageLimits?: Record<string, unknown> | null
  rateLimits?: unknown[] | null
  defaults?: Record<string, unknown>
  alertEmails?: string[]
  creationMode?: 'ui' | 'api' | 'auto'
  createdBy?: string | null
}

export interface ApiKeyPatch {
  name?: string
  description?: string | null
  scopes?: string[]
  expiresAt?: string | null
  rotationPolicy?: RotationPolicy | null
  nextRotationAt?: string | null
  usageLimits?: Record<string, unknown> | null
  rateLimits?: unknown[] | null
  defaults?: Record<string, unknown>
  alertEmails?: string[]
  lastResetAt?: string | null
  status?: ApiKeyStatus
}

export interface ApiKeyFilter {
  workspaceId?: string
  userId?: string
  /** Restrict to these `type/subtype` kinds, e.g. `workspace/user`. */
  kinds?: string[]
}

export class ApiKeyRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  async insert(input: NewApiKey): Promise<ApiKeyRecord> {
    const record = await apiKeyTable.create(this.#db, input)
    this.#sink.add({ resource: 'api_key', action: 'created', id: input.id })
    return record
  }

  async get(organizationId: string, id: string): Promise<ApiKeyRecord | null> {
    return apiKeyTable.row(this.#db, 'WHERE organization_id = $1 AND id = $2', [organizationId, id])
  }

  /**
   * The key whose current hash, or whose previous hash still inside its transition window,
   * equals `hash`. Status and expiry are the caller's to judge (to answer "expired" vs "unknown").
   */
  async findByHash(hash: string, now: Date): Promise<{ key: ApiKeyRecord; matched: 'current' | 'previous' } | null> {
    const key = await apiKeyTable.row(this.#db, 'WHERE key_hash = $1 OR (previous_key_hash = $1 AND previous_key_expires_at > $2::timestamptz) LIMIT 1', [hash, now.toISOString()])
    if (!key) return null
    return { key, matched: key.keyHash === hash ? 'current' : 'previous' }
  }

  async list(organizationId: string, filter: ApiKeyFilter, page: number, pageSize: number): Promise<{ total: number; data: ApiKeyRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId).add("status <> 'revoked'")
      .maybe('workspace_id = ?', filter.workspaceId).maybe('user_id = ?', filter.userId)
    if (filter.kinds !== undefined) where.add("(type || '/' || subtype) = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))", json(filter.kinds))
    const count = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM api_keys${where.sql}`, where.params)
    const data = await apiKeyTable.rows(this.#db, `${where.sql} ORDER BY created_at, id${where.page(page, pageSize)}`, where.params)
    return { total: count[0]?.n ?? 0, data }
  }

  async update(organizationId: string, id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | null> {
    const record = await updateRow(this.#db, apiKeyTable, organizationId, id, apiKeyTable.set(patch, 3))
    if (!record) return null
    this.#sink.add({ resource: 'api_key', action: 'updated', id })
    return record
  }

  /**
   * New secret under the same id. The current secret becomes the previous one until
   * `transitionEndsAt`; a secret still in an older transition is dropped at once (two at most).
   */
  async rotate(
    organizationId: string,
    id: string,
    input: { keyHash: string; keyHint: string; transitionEndsAt: string; nextRotationAt: string | null; now: string; expectedKeyHash: string },
  ): Promise<ApiKeyRecord | null> {
    // expectedKeyHash makes rotation compare-and-set: of two replicas' workers (or a worker and a
    // manual rotate) racing on one key, only one wins and the other sees null.
    const rows = await this.#db.query(
      `UPDATE api_keys SET previous_key_hash = key_hash, previous_key_hint = key_hint, previous_key_expires_at = $5::timestamptz,
         key_hash = $3, key_hint = $4, next_rotation_at = $6::timestamptz, last_rotated_at = $7::timestamptz, updated_at = now()
       WHERE organization_id = $1 AND id = $2 AND status = 'active' AND key_hash = $8 RETURNING ${apiKeyTable.columns}`,
      [organizationId, id, input.keyHash, input.keyHint, input.transitionEndsAt, input.nextRotationAt, input.now, input.expectedKeyHash],
    )
    if (!rows[0]) return null
    this.#sink.add({ resource: 'api_key', action: 'rotated', id })
    return apiKeyTable.toRecord(rows[0])
  }

  /** Immediate and final: both the current and any previous secret stop working. */
  async revoke(organizationId: string, id: string, now: Date): Promise<boolean> {
    const rows = await this.#db.query(
      `UPDATE api_keys SET status = 'revoked', revoked_at = $3::timestamptz, previous_key_hash = NULL, previous_key_hint = NULL,
         previous_key_expires_at = NULL, next_rotation_at = NULL, updated_at = now()
       WHERE organization_id = $1 AND id = $2 AND status <> 'revoked' RETURNING id`,
      [organizationId, id, now.toISOString()],
    )
    if (rows.length === 0) return false
    this.#sink.add({ resource: 'api_key', action: 'revoked', id })
    return true
  }

  /** Revokes every live key minted by `createdBy` (e.g. a superseded bootstrap key); returns their ids. */
  async revokeByCreator(organizationId: string, createdBy: string, now: Date): Promise<string[]> {
    const rows = await this.#db.query<{ id: string }>(
      `UPDATE api_keys SET status = 'revoked', revoked_at = $3::timestamptz, previous_key_hash = NULL, previous_key_hint = NULL,
         previous_key_expires_at = NULL, next_rotation_at = NULL, updated_at = now()
       WHERE organization_id = $1 AND created_by = $2 AND status <> 'revoked' RETURNING id`,
      [organizationId, createdBy, now.toISOString()],
    )
    for (const row of rows) this.#sink.add({ resource: 'api_key', action: 'revoked', id: row.id })
    return rows.map((row) => row.id)
  }

  /** Marks active keys past `expires_at` as expired; returns their ids. */
  async expireDue(now: Date): Promise<string[]> {
    const rows = await this.#db.query<{ id: string }>(
      `UPDATE api_keys SET status = 'expired', next_rotation_at = NULL, updated_at = now()
       WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $1::timestamptz RETURNING id`,
      [now.toISOString()],
    )
    for (const row of rows) this.#sink.add({ resource: 'api_key', action: 'expired', id: row.id })
    return rows.map((row) => row.id)
  }

  /** Forgets previous secrets whose transition window has ended; returns the key ids. */
  async endTransitions(now: Date): Promise<string[]> {
    const rows = await this.#db.query<{ id: string }>(
      `UPDATE api_keys SET previous_key_hash = NULL, previous_key_hint = NULL, previous_key_expires_at = NULL, updated_at = now()
       WHERE previous_key_expires_at IS NOT NULL AND previous_key_expires_at <= $1::timestamptz RETURNING id`,
      [now.toISOString()],
    )
    for (const row of rows) this.#sink.add({ resource: 'api_key', action: 'updated', id: row.id })
    return rows.map((row) => row.id)
  }

  async dueForRotation(now: Date, limit: number): Promise<ApiKeyRecord[]> {
    return apiKeyTable.rows(
      this.#db,
      "WHERE status = 'active' AND next_rotation_at IS NOT NULL AND next_rotation_at <= $1::timestamptz ORDER BY next_rotation_at, id LIMIT $2",
      [now.toISOString(), limit],
    )
  }

  async countActiveUserKeys(workspaceId: string): Promise<number> {
    const rows = await this.#db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1 AND subtype = 'user' AND status = 'active'",
      [workspaceId],
    )
    return rows[0]?.n ?? 0
  }

  /** Keys still in use (active, or exhausted and waiting for a reset): the reset and alert worker's input. */
  async inUse(organizationId: string): Promise<ApiKeyRecord[]> {
    return apiKeyTable.rows(this.#db, "WHERE organization_id = $1 AND status IN ('active', 'exhausted') ORDER BY created_at, id", [organizationId])
  }

  /**
   * Keys for the gateway snapshot: every active key, plus keys that ended within `recentMs`
   * so the gateway can say "expired"/"revoked" instead of "unknown" for a while.
   */
  async forSnapshot(organizationId: string, now: Date, recentMs: number): Promise<ApiKeyRecord[]> {
    const since = new Date(now.getTime() - recentMs).toISOString()
    return apiKeyTable.rows(
      this.#db,
      // Ended keys are dated by when they ended (application clock), not by the row's write time.
      "WHERE organization_id = $1 AND (status = 'active' OR COALESCE(revoked_at, expires_at, updated_at) >= $2::timestamptz) ORDER BY created_at, id",
      [organizationId, since],
    )
  }
}
