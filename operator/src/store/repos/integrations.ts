/**
 * Integrations: an account at a model provider (credential, settings, models, workspace access).
 * The credential is sealed with the keyring before it reaches SQL (context `integration:<id>`) and
 * is opened only by `decryptedCredentials`, for the snapshot compiler; records never carry it.
 */
import { envelopeKeyId, type Keyring } from '../../crypto/envelope.ts'
import { isoRequired, json, newId } from '../rows.ts'
import type { SqlExecutor } from '../sql.ts'
import { Where } from './filters.ts'
import { deleteRow, setClause, updateRow } from './patch.ts'
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

export interface IntegrationRecord {
  id: string
  organizationId: string
  workspaceId: string | null
  slug: string
  name: string
  kind: string
  description: string | null
  baseUrl: string | null
  hasCredentials: boolean
  credentialsKeyId: string | null
  /** The last four characters of the API key, for display (`****abcd`). */
  maskedKey: string | null
  options: Record<string, string>
  secretMappings: SecretMapping[]
  tags: Record<string, string>
  allowAllModels: boolean
  models: IntegrationModel[]
  globalWorkspaceAccess: GlobalWorkspaceAccess
  workspaceAccess: WorkspaceAccess[]
  status: 'active' | 'archived'
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
  description: string | null
  base_url: string | null
  credentials_encrypted: string | null
  options: Record<string, string>
  secret_mappings: SecretMapping[]
  tags: Record<string, string>
  allow_all_models: boolean
  models: IntegrationModel[]
  global_workspace_access: GlobalWorkspaceAccess
  workspace_access: WorkspaceAccess[]
  status: 'active' | 'archived'
  managed_by: ManagedBy
  created_at: Date
  updated_at: Date
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

  #toRecord(row: Row): IntegrationRecord {
    const { [MASK_HINT]: hint, ...options } = row.options
    return {
      id: row.id,
      organizationId: row.organization_id,
      workspaceId: row.workspace_id,
      slug: row.slug,
      name: row.name,
      kind: row.kind,
      description: row.description,
      baseUrl: row.base_url,
      hasCredentials: row.credentials_encrypted !== null,
      credentialsKeyId: row.credentials_encrypted === null ? null : envelopeKeyId(row.credentials_encrypted),
      maskedKey: hint ? `****${hint}` : null,
      options,
      secretMappings: row.secret_mappings,
      tags: row.tags,
      allowAllModels: row.allow_all_models,
      models: row.models,
      globalWorkspaceAccess: row.global_workspace_access,
      workspaceAccess: row.workspace_access,
      status: row.status,
      managedBy: row.managed_by,
      createdAt: isoRequired(row.created_at),
      updatedAt: isoRequired(row.updated_at),
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
    const rows = await this.#db.query<Row>(
      `INSERT INTO integrations (id, organization_id, workspace_id, slug, name, kind, description, base_url, credentials_encrypted,
         options, secret_mappings, tags, allow_all_models, models, global_workspace_access, workspace_access, managed_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::jsonb, $12::jsonb, $13, $14::jsonb, $15::jsonb, $16::jsonb, $17)
       RETURNING *`,
      [
        id, input.organizationId, input.workspaceId, input.slug, input.name, input.kind, input.description ?? null, input.baseUrl ?? null,
        input.credentials && Object.keys(input.credentials).length > 0 ? this.#seal(id, input.credentials) : null,
        json(this.#options(input.options, input.credentials)), json(input.secretMappings ?? []), json(input.tags ?? {}),
        input.allowAllModels ?? true, json(input.models ?? []), json(input.globalWorkspaceAccess ?? { enabled: true }),
        json(input.workspaceAccess ?? []), input.managedBy ?? null,
      ],
    )
    this.#sink.add({ resource: 'integration', action: 'created', id })
    return this.#toRecord(rows[0]!)
  }

  async get(organizationId: string, idOrSlug: string): Promise<IntegrationRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM integrations WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
    return rows[0] ? this.#toRecord(rows[0]) : null
  }

  async list(organizationId: string, filter: IntegrationFilter = {}, page = 0, pageSize = 10_000): Promise<{ total: number; data: IntegrationRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
    if (filter.workspaceIds === null) where.add('workspace_id IS NULL')
    else if (filter.workspaceIds !== undefined) where.add('workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))', json(filter.workspaceIds))
    where.maybe('kind = ?', filter.kind)
    if (filter.workspaceScoped !== undefined) where.add(filter.workspaceScoped ? 'workspace_id IS NOT NULL' : 'workspace_id IS NULL')
    if (filter.tags && Object.keys(filter.tags).length > 0) where.add('tags @> ?::jsonb', json(filter.tags))
    const [count] = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM integrations${where.sql}`, where.params)
    const rows = await this.#db.query<Row>(`SELECT * FROM integrations${where.sql} ORDER BY created_at, id${where.page(page, pageSize)}`, where.params)
    return { total: count?.n ?? 0, data: rows.map((row) => this.#toRecord(row)) }
  }

  async update(organizationId: string, id: string, patch: IntegrationPatch): Promise<IntegrationRecord | null> {
    const current = await this.#db.query<Row>('SELECT * FROM integrations WHERE organization_id = $1 AND id = $2', [organizationId, id])
    if (!current[0]) return null
    const { credentials, options, ...rest } = patch
    const values = {
      ...rest,
      options: options === undefined && credentials === undefined ? undefined : this.#options(options ?? this.#toRecord(current[0]).options, credentials, current[0].options),
      sealed: credentials === undefined ? undefined : Object.keys(credentials).length > 0 ? this.#seal(id, credentials) : null,
    }
    const set = setClause(values, {
      name: ['name', 'value'], description: ['description', 'value'], baseUrl: ['base_url', 'value'], options: ['options', 'jsonb'],
      secretMappings: ['secret_mappings', 'jsonb'], tags: ['tags', 'jsonb'], allowAllModels: ['allow_all_models', 'value'],
      models: ['models', 'jsonb'], globalWorkspaceAccess: ['global_workspace_access', 'jsonb'], workspaceAccess: ['workspace_access', 'jsonb'],
      status: ['status', 'value'], sealed: ['credentials_encrypted', 'value'],
    }, 3)
    const row = await updateRow<Row>(this.#db, 'integrations', organizationId, id, set)
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
