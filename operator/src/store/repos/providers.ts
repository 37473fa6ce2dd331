/**
 * Provider rows (credentials + endpoint per upstream). Credentials are sealed with the keyring
 * before they reach SQL and opened only by `decryptedCredentials`, which the snapshot compiler
 * calls; list/get return records without them.
 */
import type { SqlExecutor } from '../sql.ts'
import { iso, isoRequired, json, newId } from '../rows.ts'
import { Where } from './filters.ts'
import { deleteRow, setClause, updateRow } from './patch.ts'
import { envelopeKeyId, type Keyring } from '../../crypto/envelope.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

export interface ProviderRecord {
  id: string
  organizationId: string
  workspaceId: string | null
  slug: string
  name: string
  kind: string
  baseUrl: string | null
  /** True when credentials are stored (their value is never part of a record). */
  hasCredentials: boolean
  /** Key id of the envelope, to find rows still sealed under an old key. */
  credentialsKeyId: string | null
  options: Record<string, unknown>
  tags: Record<string, unknown>
  allowAllWorkspaces: boolean
  allowedWorkspaceIds: string[]
  models: string[]
  status: 'active' | 'disabled'
  managedBy: ManagedBy
  /** The integration whose credential and settings this provider uses (null: its own). */
  integrationId: string | null
  note: string | null
  secretMappings: SecretMapping[]
  usageLimits: Record<string, unknown> | null
  rateLimits: Array<Record<string, unknown>>
  expiresAt: string | null
  /** When the usage period last started anew (`reset_usage`). */
  lastResetAt: string | null
  createdAt: string
  updatedAt: string
}

/** A credential field whose value comes from a secret reference (resolved by the compiler). */
export interface SecretMapping {
  target_field: string
  secret_reference_id: string
  secret_key?: string | null
  value_format?: 'string' | 'json'
}

export interface ProviderFilter {
  /** undefined: any; null: organisation-wide only; string[]: those workspaces. */
  workspaceIds?: string[] | null
  integrationId?: string
  /** Every pair must be present in the provider's tags. */
  tags?: Record<string, string>
}

interface Row {
  id: string
  organization_id: string
  workspace_id: string | null
  slug: string
  name: string
  kind: string
  base_url: string | null
  credentials_encrypted: string | null
  options: Record<string, unknown>
  tags: Record<string, unknown>
  allow_all_workspaces: boolean
  allowed_workspace_ids: string[]
  models: string[]
  status: 'active' | 'disabled'
  managed_by: ManagedBy
  integration_id: string | null
  note: string | null
  secret_mappings: SecretMapping[]
  usage_limits: Record<string, unknown> | null
  last_reset_at: Date | null
  rate_limits: Array<Record<string, unknown>>
  expires_at: Date | null
  created_at: Date
  updated_at: Date
}

export interface ProviderInput {
  organizationId: string
  workspaceId: string | null
  slug: string
  name: string
  kind: string
  baseUrl?: string | null
  /** Plain credentials; sealed here. `undefined` on update keeps the stored ones. */
  credentials?: Record<string, string>
  options?: Record<string, unknown>
  tags?: Record<string, unknown>
  allowAllWorkspaces?: boolean
  allowedWorkspaceIds?: string[]
  models?: string[]
  status?: 'active' | 'disabled'
  managedBy?: ManagedBy
  integrationId?: string | null
  note?: string | null
  secretMappings?: SecretMapping[]
  usageLimits?: Record<string, unknown> | null
  rateLimits?: Array<Record<string, unknown>>
  expiresAt?: string | null
}

/** Fields an admin update may change (credentials are sealed here when given). */
export type ProviderPatch = Partial<Omit<ProviderInput, 'organizationId' | 'workspaceId' | 'slug' | 'kind' | 'managedBy' | 'integrationId'>> & {
  /** Starts a new usage period (the admin API's `reset_usage`). */
  lastResetAt?: string | null
}

export class ProviderRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink
  readonly #keyring: Keyring | null

  constructor(db: SqlExecutor, sink: ChangeSink, keyring: Keyring | null) {
    this.#db = db
    this.#sink = sink
    this.#keyring = keyring
  }

  #toRecord(row: Row): ProviderRecord {
    return {
      id: row.id,
      organizationId: row.organization_id,
      workspaceId: row.workspace_id,
      slug: row.slug,
      name: row.name,
      kind: row.kind,
      baseUrl: row.base_url,
      hasCredentials: row.credentials_encrypted !== null,
      credentialsKeyId: row.credentials_encrypted === null ? null : envelopeKeyId(row.credentials_encrypted),
      options: row.options,
      tags: row.tags,
      allowAllWorkspaces: row.allow_all_workspaces,
      allowedWorkspaceIds: row.allowed_workspace_ids,
      models: row.models,
      status: row.status,
      managedBy: row.managed_by,
      integrationId: row.integration_id,
      note: row.note,
      secretMappings: row.secret_mappings,
      usageLimits: row.usage_limits,
      lastResetAt: iso(row.last_reset_at),
      rateLimits: row.rate_limits,
      expiresAt: iso(row.expires_at),
      createdAt: isoRequired(row.created_at),
      updatedAt: isoRequired(row.updated_at),
    }
  }

  #requireKeyring(): Keyring {
    if (!this.#keyring) throw new Error('provider credentials need GATEHOUSE_ENCRYPTION_KEY')
    return this.#keyring
  }

  /** Creates, or updates the row with the same (workspace, slug). */
  async upsert(input: ProviderInput): Promise<ProviderRecord> {
    const existing = await this.#findRow(input.organizationId, input.workspaceId, input.slug)
    const id = existing?.id ?? newId()
    const sealed = input.credentials === undefined
      ? existing?.credentials_encrypted ?? null
      : this.#requireKeyring().seal(JSON.stringify(input.credentials), `provider:${id}`)
    const rows = await this.#db.query<Row>(
      `INSERT INTO providers (id, organization_id, workspace_id, slug, name, kind, base_url, credentials_encrypted, options, tags,
         allow_all_workspaces, allowed_workspace_ids, models, status, managed_by,
         integration_id, note, secret_mappings, usage_limits, rate_limits, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12::jsonb, $13::jsonb, $14, $15,
         $16, $17, $18::jsonb, $19::jsonb, $20::jsonb, $21)
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, kind = EXCLUDED.kind, base_url = EXCLUDED.base_url,
         credentials_encrypted = EXCLUDED.credentials_encrypted, options = EXCLUDED.options, tags = EXCLUDED.tags,
         allow_all_workspaces = EXCLUDED.allow_all_workspaces, allowed_workspace_ids = EXCLUDED.allowed_workspace_ids,
         models = EXCLUDED.models, status = EXCLUDED.status, managed_by = EXCLUDED.managed_by,
         integration_id = EXCLUDED.integration_id, note = EXCLUDED.note, secret_mappings = EXCLUDED.secret_mappings,
         usage_limits = EXCLUDED.usage_limits, rate_limits = EXCLUDED.rate_limits, expires_at = EXCLUDED.expires_at, updated_at = now()
       RETURNING *`,
      [
        id, input.organizationId, input.workspaceId, input.slug, input.name, input.kind, input.baseUrl ?? null, sealed,
        json(input.options ?? {}), json(input.tags ?? {}), input.allowAllWorkspaces ?? true, json(input.allowedWorkspaceIds ?? []),
        json(input.models ?? []), input.status ?? 'active', input.managedBy ?? null,
        input.integrationId ?? null, input.note ?? null, json(input.secretMappings ?? []), input.usageLimits === undefined ? null : json(input.usageLimits),
        json(input.rateLimits ?? []), input.expiresAt ?? null,
      ],
    )
    this.#sink.add({ resource: 'provider', action: existing ? 'updated' : 'created', id })
    return this.#toRecord(rows[0]!)
  }

  async #findRow(organizationId: string, workspaceId: string | null, slug: string): Promise<Row | null> {
    const rows = await this.#db.query<Row>(
      'SELECT * FROM providers WHERE organization_id = $1 AND workspace_id IS NOT DISTINCT FROM $2 AND slug = $3',
      [organizationId, workspaceId, slug],
    )
    return rows[0] ?? null
  }

  async getBySlug(organizationId: string, workspaceId: string | null, slug: string): Promise<ProviderRecord | null> {
    const row = await this.#findRow(organizationId, workspaceId, slug)
    return row ? this.#toRecord(row) : null
  }

  async get(organizationId: string, id: string): Promise<ProviderRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM providers WHERE organization_id = $1 AND id = $2', [organizationId, id])
    return rows[0] ? this.#toRecord(rows[0]) : null
  }

  /** `workspaceId` undefined: all; null: organisation-wide only; a string: that workspace's. */
  async list(organizationId: string, workspaceId?: string | null): Promise<ProviderRecord[]> {
    const rows = workspaceId === undefined
      ? await this.#db.query<Row>('SELECT * FROM providers WHERE organization_id = $1 ORDER BY created_at, id', [organizationId])
      : await this.#db.query<Row>('SELECT * FROM providers WHERE organization_id = $1 AND workspace_id IS NOT DISTINCT FROM $2 ORDER BY created_at, id', [organizationId, workspaceId])
    return rows.map((row) => this.#toRecord(row))
  }

  /** Admin listing: filtered, paged, newest last. */
  async search(organizationId: string, filter: ProviderFilter, page: number, pageSize: number): Promise<{ total: number; data: ProviderRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
    if (filter.workspaceIds === null) where.add('workspace_id IS NULL')
    else if (filter.workspaceIds !== undefined) where.add('workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))', json(filter.workspaceIds))
    where.maybe('integration_id = ?', filter.integrationId)
    if (filter.tags && Object.keys(filter.tags).length > 0) where.add('tags @> ?::jsonb', json(filter.tags))
    const [count] = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM providers${where.sql}`, where.params)
    const rows = await this.#db.query<Row>(`SELECT * FROM providers${where.sql} ORDER BY created_at, id${where.page(page, pageSize)}`, where.params)
    return { total: count?.n ?? 0, data: rows.map((row) => this.#toRecord(row)) }
  }

  /** Partial update by the admin API; `credentials` (when present) are sealed anew. */
  async update(organizationId: string, id: string, patch: ProviderPatch): Promise<ProviderRecord | null> {
    const { credentials, ...rest } = patch
    const columns = {
      name: ['name', 'value'], baseUrl: ['base_url', 'value'], options: ['options', 'jsonb'], tags: ['tags', 'jsonb'],
      allowAllWorkspaces: ['allow_all_workspaces', 'value'], allowedWorkspaceIds: ['allowed_workspace_ids', 'jsonb'],
      models: ['models', 'jsonb'], status: ['status', 'value'], note: ['note', 'value'], secretMappings: ['secret_mappings', 'jsonb'],
      usageLimits: ['usage_limits', 'jsonb'], rateLimits: ['rate_limits', 'jsonb'], expiresAt: ['expires_at', 'timestamptz'],
      lastResetAt: ['last_reset_at', 'timestamptz'],
    } as const
    const set = setClause({ ...rest, sealed: credentials === undefined ? undefined : this.#requireKeyring().seal(JSON.stringify(credentials), `provider:${id}`) },
      { ...columns, sealed: ['credentials_encrypted', 'value'] }, 3)
    const row = await updateRow<Row>(this.#db, 'providers', organizationId, id, set)
    if (!row) return null
    this.#sink.add({ resource: 'provider', action: 'updated', id })
    return this.#toRecord(row)
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, 'providers', organizationId, id))) return false
    this.#sink.add({ resource: 'provider', action: 'deleted', id })
    return true
  }

  /** For the snapshot compiler only: the plain credentials of one provider. */
  async decryptedCredentials(organizationId: string, id: string): Promise<Record<string, string>> {
    const rows = await this.#db.query<{ credentials_encrypted: string | null }>(
      'SELECT credentials_encrypted FROM providers WHERE organization_id = $1 AND id = $2',
      [organizationId, id],
    )
    const sealed = rows[0]?.credentials_encrypted
    if (!sealed) return {}
    return JSON.parse(this.#requireKeyring().open(sealed, `provider:${id}`)) as Record<string, string>
  }
}
