/**
 * Provider rows (credentials + endpoint per upstream). Credentials are sealed with the keyring
 * before they reach SQL and opened only by `decryptedCredentials`, which the snapshot compiler
 * calls; list/get return records without them.
 */
import type { SqlExecutor } from '../sql.ts'
import { json, newId } from '../rows.ts'
import { boolean, jsonb, table, text, timestamp, type RecordOf } from '../table.ts'
import { Where } from './filters.ts'
import { deleteRow, updateRow } from './patch.ts'
import { envelopeKeyId, type Keyring } from '../../crypto/envelope.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

/** The `providers` table; `ProviderRecord` and every query below derive from it. */
export const providerTable = table('providers', {
  id: text().insert(),
  organizationId: text().insert(),
  workspaceId: text().nullable().insert(),
  slug: text().insert(),
  name: text().insert().patch(),
  kind: text().insert(),
  baseUrl: text().nullable().insert().patch(),
  /** The sealed envelope; never part of a record (see `ProviderRecord`). */
  credentialsEncrypted: text().nullable().insert().patch(),
  options: jsonb<Record<string, unknown>>().insert({}).patch(),
  tags: jsonb<Record<string, unknown>>().insert({}).patch(),
  allowAllWorkspaces: boolean().insert(true).patch(),
  allowedWorkspaceIds: jsonb<string[]>().insert([]).patch(),
  models: jsonb<string[]>().insert([]).patch(),
  status: text<'active' | 'disabled'>().insert('active').patch(),
  managedBy: text<NonNullable<ManagedBy>>().nullable().insert(),
  /** The integration whose credential and settings this provider uses (null: its own). */
  integrationId: text().nullable().insert(),
  note: text().nullable().insert().patch(),
  secretMappings: jsonb<SecretMapping[]>().insert([]).patch(),
  usageLimits: jsonb<Record<string, unknown>>().nullable().insert().patch(),
  rateLimits: jsonb<Array<Record<string, unknown>>>().insert([]).patch(),
  expiresAt: timestamp().nullable().insert().patch(),
  /** When the usage period last started anew (`reset_usage`). */
  lastResetAt: timestamp().nullable().patch(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

type ProviderRow = RecordOf<typeof providerTable.fields>

/** A provider as list/get answer it: the sealed credentials replaced by facts about them. */
export type ProviderRecord = Omit<ProviderRow, 'credentialsEncrypted'> & {
  /** True when credentials are stored (their value is never part of a record). */
  hasCredentials: boolean
  /** Key id of the envelope, to find rows still sealed under an old key. */
  credentialsKeyId: string | null
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

  #toRecord({ credentialsEncrypted, ...row }: ProviderRow): ProviderRecord {
    return {
      ...row,
      hasCredentials: credentialsEncrypted !== null,
      credentialsKeyId: credentialsEncrypted === null ? null : envelopeKeyId(credentialsEncrypted),
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
      ? existing?.credentialsEncrypted ?? null
      : this.#requireKeyring().seal(JSON.stringify(input.credentials), `provider:${id}`)
    const row = await providerTable.create(this.#db, { ...input, id, credentialsEncrypted: sealed }, `ON CONFLICT (id) DO UPDATE SET ${providerTable.excluded([
      'name', 'kind', 'baseUrl', 'credentialsEncrypted', 'options', 'tags', 'allowAllWorkspaces', 'allowedWorkspaceIds', 'models', 'status', 'managedBy',
      'integrationId', 'note', 'secretMappings', 'usageLimits', 'rateLimits', 'expiresAt',
    ])}, updated_at = now()`)
    this.#sink.add({ resource: 'provider', action: existing ? 'updated' : 'created', id })
    return this.#toRecord(row)
  }

  async #findRow(organizationId: string, workspaceId: string | null, slug: string): Promise<ProviderRow | null> {
    return providerTable.row(this.#db, 'WHERE organization_id = $1 AND workspace_id IS NOT DISTINCT FROM $2 AND slug = $3', [organizationId, workspaceId, slug])
  }

  async getBySlug(organizationId: string, workspaceId: string | null, slug: string): Promise<ProviderRecord | null> {
    const row = await this.#findRow(organizationId, workspaceId, slug)
    return row ? this.#toRecord(row) : null
  }

  async get(organizationId: string, id: string): Promise<ProviderRecord | null> {
    const row = await providerTable.row(this.#db, 'WHERE organization_id = $1 AND id = $2', [organizationId, id])
    return row ? this.#toRecord(row) : null
  }

  /** `workspaceId` undefined: all; null: organisation-wide only; a string: that workspace's. */
  async list(organizationId: string, workspaceId?: string | null): Promise<ProviderRecord[]> {
    const rows = workspaceId === undefined
      ? await providerTable.rows(this.#db, 'WHERE organization_id = $1 ORDER BY created_at, id', [organizationId])
      : await providerTable.rows(this.#db, 'WHERE organization_id = $1 AND workspace_id IS NOT DISTINCT FROM $2 ORDER BY created_at, id', [organizationId, workspaceId])
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
    const rows = await providerTable.rows(this.#db, `${where.sql} ORDER BY created_at, id${where.page(page, pageSize)}`, where.params)
    return { total: count?.n ?? 0, data: rows.map((row) => this.#toRecord(row)) }
  }

  /** Partial update by the admin API; `credentials` (when present) are sealed anew. */
  async update(organizationId: string, id: string, patch: ProviderPatch): Promise<ProviderRecord | null> {
    const { credentials, ...rest } = patch
    const credentialsEncrypted = credentials === undefined ? undefined : this.#requireKeyring().seal(JSON.stringify(credentials), `provider:${id}`)
    const row = await updateRow(this.#db, providerTable, organizationId, id, providerTable.set({ ...rest, credentialsEncrypted }, 3))
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
