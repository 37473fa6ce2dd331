/**
 * Integrations: an account at a model provider (credential, settings, models, workspace access).
 * The credential is sealed with the keyring before it reaches SQL (context `integration:<id>`) and
 * is opened only by `decryptedCredentials`, for the snapshot compiler; records never carry it.
 */
import { envelopeKeyId, type Keyring } from '../../crypto/envelope.ts'
import { json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { boolean, jsonb, table, text, timestamp, type RecordOf } from '../table.ts'
import { Where } from './filters.ts'
import { deleteRow, updateRow } from './patch.ts'
import type { SecretMapping } from './providers.ts'
import type { ChangeSink } from './sink.ts'
import type { ManagedBy } from './workspaces.ts'

export interface IntegrationModel {
  slug: string
  enabled: boolean
  is_custom?: boolean
  is_finetune?: boolean
  base_model_slug?: string | null
  pricing_config?: Record<string, unknown> | null
}

export interface WorkspaceAccess {
  id: string
  enabled: boolean
  usage_limits?: unknown[] | null
  rate_limits?: unknown[] | null
  /** When this workspace's usage period last started anew (`reset_usage`). */
  last_reset_at?: string | null
}

export interface GlobalWorkspaceAccess {
  enabled: boolean
  usage_limits?: unknown[] | null
  rate_limits?: unknown[] | null
}

/** The `integrations` table; `IntegrationRecord` and every query below derive from it. */
export const integrationTable = table('integrations', {
  id: text().insert(),
  organizationId: text().insert(),
  workspaceId: text().nullable().insert(),
  slug: text().insert(),
  name: text().insert().patch(),
  kind: text().insert(),
  description: text().nullable().insert().patch(),
  baseUrl: text().nullable().insert().patch(),
  /** The sealed envelope; never part of a record (see `IntegrationRecord`). */
  credentialsEncrypted: text().nullable().insert().patch(),
  /** Stored with the key's display hint under `__hint`, which records answer as `maskedKey`. */
  options: jsonb<Record<string, string>>().insert({}).patch(),
  secretMappings: jsonb<SecretMapping[]>().insert([]).patch(),
  tags: jsonb<Record<string, string>>().insert({}).patch(),
  allowAllModels: boolean().insert(true).patch(),
  models: jsonb<IntegrationModel[]>().insert([]).patch(),
  globalWorkspaceAccess: jsonb<GlobalWorkspaceAccess>().insert({ enabled: true }).patch(),
  workspaceAccess: jsonb<WorkspaceAccess[]>().insert([]).patch(),
  status: text<'active' | 'archived'>().patch(),
  managedBy: text<NonNullable<ManagedBy>>().nullable().insert(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

type IntegrationRow = RecordOf<typeof integrationTable.fields>

/** An integration as answered: the sealed credentials replaced by facts about them. */
export type IntegrationRecord = Omit<IntegrationRow, 'credentialsEncrypted'> & {
  hasCredentials: boolean
  credentialsKeyId: string | null
  /** The last four characters of the API key, for display (`****abcd`). */
  maskedKey: string | null
}

export interface IntegrationInput {
  organizationId: string
  workspaceId: string | null
  slug: string
  name: string
  kind: string
  description?: string | null
  baseUrl?: string | null
  /** Plain credentials (gateway field names); sealed here. */
  credentials?: Record<string, string>
  options?: Record<string, string>
  secretMappings?: SecretMapping[]
  tags?: Record<string, string>
  allowAllModels?: boolean
  models?: IntegrationModel[]
  globalWorkspaceAccess?: GlobalWorkspaceAccess
  workspaceAccess?: WorkspaceAccess[]
  managedBy?: ManagedBy
}

export type IntegrationPatch = Partial<Pick<IntegrationInput,
  'name' | 'description' | 'baseUrl' | 'credentials' | 'options' | 'secretMappings' | 'tags' | 'allowAllModels' | 'models' | 'globalWorkspaceAccess' | 'workspaceAccess'>> & {
  status?: 'active' | 'archived'
}

export interface IntegrationFilter {
  /** undefined: any; null: organisation-level only; string[]: those workspaces. */
  workspaceIds?: string[] | null
  tags?: Record<string, string>
  kind?: string
  /** true: workspace integrations only; false: organisation integrations only. */
  workspaceScoped?: boolean
}

const MASK_HINT = '__hint'

export class IntegrationRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink
  readonly #keyring: Keyring | null

  constructor(db: SqlExecutor, sink: ChangeSink, keyring: Keyring | null) {
    this.#db = db
    this.#sink = sink
    this.#keyring = keyring
  }

  #toRecord({ credentialsEncrypted, options: stored, ...row }: IntegrationRow): IntegrationRecord {
    const { [MASK_HINT]: hint, ...options } = stored
    return {
      ...row,
      options,
      hasCredentials: credentialsEncrypted !== null,
      credentialsKeyId: credentialsEncrypted === null ? null : envelopeKeyId(credentialsEncrypted),
      maskedKey: hint ? `****${hint}` : null,
    }
  }

  #seal(id: string, credentials: Record<string, string>): string {
    if (!this.#keyring) throw new Error('integration credentials need GATEHOUSE_ENCRYPTION_KEY')
    return this.#keyring.seal(JSON.stringify(credentials), `integration:${id}`)
  }

  /** Only the last four characters of the API key are kept in clear, as a display hint. */
  #options(options: Record<string, string> | undefined, credentials: Record<string, string> | undefined, previous?: Record<string, string>): Record<string, string> {
    const base = { ...(options ?? {}) }
    const apiKey = credentials?.apiKey
    if (apiKey && apiKey.length >= 12) base[MASK_HINT] = apiKey.slice(-4)
    else if (credentials === undefined && previous?.[MASK_HINT]) base[MASK_HINT] = previous[MASK_HINT]
    return base
  }

  async create(input: IntegrationInput): Promise<IntegrationRecord> {
    const id = newId()
    const row = await integrationTable.create(this.#db, {
      ...input,
      id,
      credentialsEncrypted: input.credentials && Object.keys(input.credentials).length > 0 ? this.#seal(id, input.credentials) : null,
      options: this.#options(input.options, input.credentials),
    })
    this.#sink.add({ resource: 'integration', action: 'created', id })
    return this.#toRecord(row)
  }

  async get(organizationId: string, idOrSlug: string): Promise<IntegrationRecord | null> {
    const row = await integrationTable.row(this.#db, 'WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
    return row ? this.#toRecord(row) : null
  }

  async list(organizationId: string, filter: IntegrationFilter = {}, page = 0, pageSize = 10_000): Promise<{ total: number; data: IntegrationRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
    if (filter.workspaceIds === null) where.add('workspace_id IS NULL')
    else if (filter.workspaceIds !== undefined) where.add('workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))', json(filter.workspaceIds))
    where.maybe('kind = ?', filter.kind)
    if (filter.workspaceScoped !== undefined) where.add(filter.workspaceScoped ? 'workspace_id IS NOT NULL' : 'workspace_id IS NULL')
    if (filter.tags && Object.keys(filter.tags).length > 0) where.add('tags @> ?::jsonb', json(filter.tags))
    const [count] = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM integrations${where.sql}`, where.params)
    const rows = await integrationTable.rows(this.#db, `${where.sql} ORDER BY created_at, id${where.page(page, pageSize)}`, where.params)
    return { total: count?.n ?? 0, data: rows.map((row) => this.#toRecord(row)) }
  }

  async update(organizationId: string, id: string, patch: IntegrationPatch): Promise<IntegrationRecord | null> {
    const current = await integrationTable.row(this.#db, 'WHERE organization_id = $1 AND id = $2', [organizationId, id])
    if (!current) return null
    const { credentials, options, ...rest } = patch
    const set = integrationTable.set({
      ...rest,
      options: options === undefined && credentials === undefined ? undefined : this.#options(options ?? this.#toRecord(current).options, credentials, current.options),
      credentialsEncrypted: credentials === undefined ? undefined : Object.keys(credentials).length > 0 ? this.#seal(id, credentials) : null,
    }, 3)
    const row = await updateRow(this.#db, integrationTable, organizationId, id, set)
    this.#sink.add({ resource: 'integration', action: 'updated', id })
    return row ? this.#toRecord(row) : null
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, 'integrations', organizationId, id))) return false
    this.#sink.add({ resource: 'integration', action: 'deleted', id })
    return true
  }

  /** For the snapshot compiler only. */
  async decryptedCredentials(organizationId: string, id: string): Promise<Record<string, string>> {
    const rows = await this.#db.query<{ credentials_encrypted: string | null }>('SELECT credentials_encrypted FROM integrations WHERE organization_id = $1 AND id = $2', [organizationId, id])
    const sealed = rows[0]?.credentials_encrypted
    if (!sealed) return {}
    if (!this.#keyring) throw new Error('integration credentials need GATEHOUSE_ENCRYPTION_KEY')
    return JSON.parse(this.#keyring.open(sealed, `integration:${id}`)) as Record<string, string>
  }
}
