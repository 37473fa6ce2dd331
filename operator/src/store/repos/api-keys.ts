/**
 * API key rows. Only HMAC hashes and a non-secret hint are stored; raw keys never reach this layer.
 * A rotation keeps the key id (usage and audit history stay attached) and moves the current hash
 * to `previous_key_hash`, valid until `previous_key_expires_at`.
 */
import type { SqlExecutor } from '../sql.ts'
import { iso, isoRequired, json } from '../rows.ts'
import type { ChangeSink } from './sink.ts'
import { Where } from './filters.ts'
import { setClause, updateRow } from './patch.ts'

export type ApiKeyType = 'admin' | 'workspace'
export type ApiKeySubtype = 'service' | 'user'
export type ApiKeyStatus = 'active' | 'exhausted' | 'expired' | 'revoked'

export interface RotationPolicy {
  rotation_period?: 'weekly' | 'monthly'
  next_rotation_at?: string
  key_transition_period_ms: number
}

export interface ApiKeyRecord {
  id: string
  organizationId: string
  workspaceId: string | null
  userId: string | null
  type: ApiKeyType
  subtype: ApiKeySubtype
  name: string
  description: string | null
  keyHash: string
  keyHint: string
  previousKeyHash: string | null
  previousKeyHint: string | null
  previousKeyExpiresAt: string | null
  scopes: string[]
  status: ApiKeyStatus
  expiresAt: string | null
  rotationPolicy: RotationPolicy | null
  nextRotationAt: string | null
  lastRotatedAt: string | null
  usageLimits: Record<string, unknown> | null
  rateLimits: unknown[] | null
  defaults: Record<string, unknown>
  alertEmails: string[]
  lastResetAt: string | null
  creationMode: 'ui' | 'api' | 'auto'
  createdBy: string | null
  revokedAt: string | null
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string
  workspace_id: string | null
  user_id: string | null
  type: ApiKeyType
  subtype: ApiKeySubtype
  name: string
  description: string | null
  key_hash: string
  key_hint: string
  previous_key_hash: string | null
  previous_key_hint: string | null
  previous_key_expires_at: Date | null
  scopes: string[]
  status: ApiKeyStatus
  expires_at: Date | null
  rotation_policy: RotationPolicy | null
  next_rotation_at: Date | null
  last_rotated_at: Date | null
  usage_limits: Record<string, unknown> | null
  rate_limits: unknown[] | null
  defaults: Record<string, unknown>
  alert_emails: string[]
  last_reset_at: Date | null
  creation_mode: 'ui' | 'api' | 'auto'
  created_by: string | null
  revoked_at: Date | null
  created_at: Date
  updated_at: Date
}

function toRecord(row: Row): ApiKeyRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    userId: row.user_id,
    type: row.type,
    subtype: row.subtype,
    name: row.name,
    description: row.description,
    keyHash: row.key_hash,
    keyHint: row.key_hint,
    previousKeyHash: row.previous_key_hash,
    previousKeyHint: row.previous_key_hint,
    previousKeyExpiresAt: iso(row.previous_key_expires_at),
    scopes: row.scopes,
    status: row.status,
    expiresAt: iso(row.expires_at),
    rotationPolicy: row.rotation_policy,
    nextRotationAt: iso(row.next_rotation_at),
    lastRotatedAt: iso(row.last_rotated_at),
    usageLimits: row.usage_limits,
    rateLimits: row.rate_limits,
    defaults: row.defaults,
    alertEmails: row.alert_emails,
    lastResetAt: iso(row.last_reset_at),
    creationMode: row.creation_mode,
    createdBy: row.created_by,
    revokedAt: iso(row.revoked_at),
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

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
    const rows = await this.#db.query<Row>(
      `INSERT INTO api_keys (id, organization_id, workspace_id, user_id, type, subtype, name, description, key_hash, key_hint,
         scopes, expires_at, rotation_policy, next_rotation_at, usage_limits, rate_limits, defaults, alert_emails, creation_mode, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12::timestamptz, $13::jsonb, $14::timestamptz, $15::jsonb, $16::jsonb,
         $17::jsonb, $18::jsonb, $19, $20) RETURNING *`,
      [
        input.id, input.organizationId, input.workspaceId, input.userId, input.type, input.subtype, input.name, input.description ?? null,
        input.keyHash, input.keyHint, json(input.scopes), input.expiresAt ?? null, json(input.rotationPolicy ?? null), input.nextRotationAt ?? null,
        json(input.usageLimits ?? null), json(input.rateLimits ?? null), json(input.defaults ?? {}), json(input.alertEmails ?? []),
        input.creationMode ?? 'api', input.createdBy ?? null,
      ],
    )
    this.#sink.add({ resource: 'api_key', action: 'created', id: input.id })
    return toRecord(rows[0]!)
  }

  async get(organizationId: string, id: string): Promise<ApiKeyRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM api_keys WHERE organization_id = $1 AND id = $2', [organizationId, id])
    return rows[0] ? toRecord(rows[0]) : null
  }

  /**
   * The key whose current hash, or whose previous hash still inside its transition window,
   * equals `hash`. Status and expiry are the caller's to judge (to answer "expired" vs "unknown").
   */
  async findByHash(hash: string, now: Date): Promise<{ key: ApiKeyRecord; matched: 'current' | 'previous' } | null> {
    const rows = await this.#db.query<Row>(
      `SELECT * FROM api_keys WHERE key_hash = $1 OR (previous_key_hash = $1 AND previous_key_expires_at > $2::timestamptz) LIMIT 1`,
      [hash, now.toISOString()],
    )
    const row = rows[0]
    if (!row) return null
    return { key: toRecord(row), matched: row.key_hash === hash ? 'current' : 'previous' }
  }

  async list(organizationId: string, filter: ApiKeyFilter, page: number, pageSize: number): Promise<{ total: number; data: ApiKeyRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId).add("status <> 'revoked'")
      .maybe('workspace_id = ?', filter.workspaceId).maybe('user_id = ?', filter.userId)
    if (filter.kinds !== undefined) where.add("(type || '/' || subtype) = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))", json(filter.kinds))
    const count = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM api_keys${where.sql}`, where.params)
    const rows = await this.#db.query<Row>(`SELECT * FROM api_keys${where.sql} ORDER BY created_at, id` + where.page(page, pageSize), where.params)
    return { total: count[0]?.n ?? 0, data: rows.map(toRecord) }
  }

  async update(organizationId: string, id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | null> {
    const set = setClause(patch, {
      name: ['name', 'value'],
      description: ['description', 'value'],
      scopes: ['scopes', 'jsonb'],
      expiresAt: ['expires_at', 'timestamptz'],
      rotationPolicy: ['rotation_policy', 'jsonb'],
      nextRotationAt: ['next_rotation_at', 'timestamptz'],
      usageLimits: ['usage_limits', 'jsonb'],
      rateLimits: ['rate_limits', 'jsonb'],
      defaults: ['defaults', 'jsonb'],
      alertEmails: ['alert_emails', 'jsonb'],
      lastResetAt: ['last_reset_at', 'timestamptz'],
      status: ['status', 'value'],
    }, 3)
    const row = await updateRow<Row>(this.#db, 'api_keys', organizationId, id, set)
    if (!row) return null
    this.#sink.add({ resource: 'api_key', action: 'updated', id })
    return toRecord(row)
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
    const rows = await this.#db.query<Row>(
      `UPDATE api_keys SET previous_key_hash = key_hash, previous_key_hint = key_hint, previous_key_expires_at = $5::timestamptz,
         key_hash = $3, key_hint = $4, next_rotation_at = $6::timestamptz, last_rotated_at = $7::timestamptz, updated_at = now()
       WHERE organization_id = $1 AND id = $2 AND status = 'active' AND key_hash = $8 RETURNING *`,
      [organizationId, id, input.keyHash, input.keyHint, input.transitionEndsAt, input.nextRotationAt, input.now, input.expectedKeyHash],
    )
    if (!rows[0]) return null
    this.#sink.add({ resource: 'api_key', action: 'rotated', id })
    return toRecord(rows[0])
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
    const rows = await this.#db.query<Row>(
      `SELECT * FROM api_keys WHERE status = 'active' AND next_rotation_at IS NOT NULL AND next_rotation_at <= $1::timestamptz
       ORDER BY next_rotation_at, id LIMIT $2`,
      [now.toISOString(), limit],
    )
    return rows.map(toRecord)
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
    const rows = await this.#db.query<Row>("SELECT * FROM api_keys WHERE organization_id = $1 AND status IN ('active', 'exhausted') ORDER BY created_at, id", [organizationId])
    return rows.map(toRecord)
  }

  /**
   * Keys for the gateway snapshot: every active key, plus keys that ended within `recentMs`
   * so the gateway can say "expired"/"revoked" instead of "unknown" for a while.
   */
  async forSnapshot(organizationId: string, now: Date, recentMs: number): Promise<ApiKeyRecord[]> {
    const since = new Date(now.getTime() - recentMs).toISOString()
    const rows = await this.#db.query<Row>(
      // Ended keys are dated by when they ended (application clock), not by the row's write time.
      `SELECT * FROM api_keys WHERE organization_id = $1
         AND (status = 'active' OR COALESCE(revoked_at, expires_at, updated_at) >= $2::timestamptz) ORDER BY created_at, id`,
      [organizationId, since],
    )
    return rows.map(toRecord)
  }
}
