/**
 * Provider rows (credentials + endpoint per upstream). Credentials are sealed with the keyring
 * before they reach SQL and opened only by `decryptedCredentials`, which the snapshot compiler
 * calls; list/get return records without them.
 */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired, json, newId } from '../rows.ts'
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
  createdAt: string
  updatedAt: string
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
         allow_all_workspaces, allowed_workspace_ids, models, status, managed_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12::jsonb, $13::jsonb, $14, $15)
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, kind = EXCLUDED.kind, base_url = EXCLUDED.base_url,
         credentials_encrypted = EXCLUDED.credentials_encrypted, options = EXCLUDED.options, tags = EXCLUDED.tags,
         allow_all_workspaces = EXCLUDED.allow_all_workspaces, allowed_workspace_ids = EXCLUDED.allowed_workspace_ids,
         models = EXCLUDED.models, status = EXCLUDED.status, managed_by = EXCLUDED.managed_by, updated_at = now()
       RETURNING *`,
      [
        id, input.organizationId, input.workspaceId, input.slug, input.name, input.kind, input.baseUrl ?? null, sealed,
        json(input.options ?? {}), json(input.tags ?? {}), input.allowAllWorkspaces ?? true, json(input.allowedWorkspaceIds ?? []),
        json(input.models ?? []), input.status ?? 'active', input.managedBy ?? null,
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

  async delete(organizationId: string, id: string): Promise<boolean> {
    const rows = await this.#db.query('DELETE FROM providers WHERE organization_id = $1 AND id = $2 RETURNING id', [organizationId, id])
    if (rows.length === 0) return false
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
