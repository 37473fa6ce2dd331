/** Workspaces: the tenancy unit that keys, providers and configs belong to. */
import type { SqlExecutor } from '../sql.ts'
import { iso, isoRequired, json, newId } from '../rows.ts'
import type { ChangeSink } from './sink.ts'
import { Where } from './filters.ts'
import { deleteRow, setClause, updateRow } from './patch.ts'

export type WorkspaceStatus = 'active' | 'archived'
export type ManagedBy = 'kubernetes' | 'file' | null

export interface WorkspaceRecord {
  id: string
  organizationId: string
  slug: string
  name: string
  description: string | null
  status: WorkspaceStatus
  defaults: Record<string, unknown>
  usageLimits: unknown[]
  rateLimits: unknown[]
  settings: Record<string, unknown>
  nextUsageResetAt: string | null
  lastResetAt: string | null
  managedBy: ManagedBy
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string
  slug: string
  name: string
  description: string | null
  status: WorkspaceStatus
  defaults: Record<string, unknown>
  usage_limits: unknown[]
  rate_limits: unknown[]
  settings: Record<string, unknown>
  next_usage_reset_at: Date | null
  last_reset_at: Date | null
  managed_by: ManagedBy
  created_at: Date
  updated_at: Date
}

function toRecord(row: Row): WorkspaceRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    status: row.status,
    defaults: row.defaults,
    usageLimits: row.usage_limits,
    rateLimits: row.rate_limits,
    settings: row.settings,
    nextUsageResetAt: iso(row.next_usage_reset_at),
    lastResetAt: iso(row.last_reset_at),
    managedBy: row.managed_by,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

export interface NewWorkspace {
  organizationId: string
  slug: string
  name: string
  description?: string | null
  defaults?: Record<string, unknown>
  usageLimits?: unknown[]
  rateLimits?: unknown[]
  settings?: Record<string, unknown>
  nextUsageResetAt?: string | null
  managedBy?: ManagedBy
}

export interface WorkspacePatch {
  slug?: string
  name?: string
  description?: string | null
  status?: WorkspaceStatus
  defaults?: Record<string, unknown>
  usageLimits?: unknown[]
  rateLimits?: unknown[]
  settings?: Record<string, unknown>
  nextUsageResetAt?: string | null
  lastResetAt?: string | null
  managedBy?: ManagedBy
}

export interface WorkspaceFilter {
  statuses?: WorkspaceStatus[]
  /** Case-sensitive substring of the name. */
  nameContains?: string
  /** Exact name (the strict filter). */
  exactName?: string
  /** Restricts to these ids (a workspace-scoped caller sees only its own). */
  ids?: string[]
}

export class WorkspaceRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  async create(input: NewWorkspace): Promise<WorkspaceRecord> {
    const rows = await this.#db.query<Row>(
      `INSERT INTO workspaces (id, organization_id, slug, name, description, defaults, usage_limits, rate_limits, settings, next_usage_reset_at, managed_by)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, $9::jsonb, $10::timestamptz, $11) RETURNING *`,
      [
        newId(), input.organizationId, input.slug, input.name, input.description ?? null, json(input.defaults ?? {}),
        json(input.usageLimits ?? []), json(input.rateLimits ?? []), json(input.settings ?? {}), input.nextUsageResetAt ?? null, input.managedBy ?? null,
      ],
    )
    this.#sink.add({ resource: 'workspace', action: 'created', id: rows[0]!.id })
    return toRecord(rows[0]!)
  }

  /** By id or slug (the admin API accepts both). */
  async get(organizationId: string, idOrSlug: string): Promise<WorkspaceRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM workspaces WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
    return rows[0] ? toRecord(rows[0]) : null
  }

  /** Row lock for the rest of the transaction (serialises per-workspace caps such as user key counts). */
  async lock(organizationId: string, id: string): Promise<WorkspaceRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM workspaces WHERE organization_id = $1 AND id = $2 FOR UPDATE', [organizationId, id])
    return rows[0] ? toRecord(rows[0]) : null
  }

  async listAll(organizationId: string): Promise<WorkspaceRecord[]> {
    const rows = await this.#db.query<Row>('SELECT * FROM workspaces WHERE organization_id = $1 ORDER BY created_at, id', [organizationId])
    return rows.map(toRecord)
  }

  async list(organizationId: string, filter: WorkspaceFilter, page: number, pageSize: number): Promise<{ total: number; data: WorkspaceRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
    if (filter.statuses) where.add('status = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))', json(filter.statuses))
    if (filter.ids) where.add('id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))', json(filter.ids))
    // strpos keeps the match literal (no LIKE wildcards from user input) and case-sensitive.
    where.maybe('strpos(name, ?) > 0', filter.nameContains).maybe('name = ?', filter.exactName)
    const count = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM workspaces${where.sql}`, where.params)
    const rows = await this.#db.query<Row>(`SELECT * FROM workspaces${where.sql} ORDER BY created_at, id` + where.page(page, pageSize), where.params)
    return { total: count[0]?.n ?? 0, data: rows.map(toRecord) }
  }

  async update(organizationId: string, id: string, patch: WorkspacePatch): Promise<WorkspaceRecord | null> {
    const set = setClause(patch, {
      slug: ['slug', 'value'],
      name: ['name', 'value'],
      description: ['description', 'value'],
      status: ['status', 'value'],
      defaults: ['defaults', 'jsonb'],
      usageLimits: ['usage_limits', 'jsonb'],
      rateLimits: ['rate_limits', 'jsonb'],
      settings: ['settings', 'jsonb'],
      nextUsageResetAt: ['next_usage_reset_at', 'timestamptz'],
      lastResetAt: ['last_reset_at', 'timestamptz'],
      managedBy: ['managed_by', 'value'],
    }, 3)
    const row = await updateRow<Row>(this.#db, 'workspaces', organizationId, id, set)
    if (!row) return null
    this.#sink.add({ resource: 'workspace', action: 'updated', id })
    return toRecord(row)
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, 'workspaces', organizationId, id))) return false
    this.#sink.add({ resource: 'workspace', action: 'deleted', id })
    return true
  }
}
