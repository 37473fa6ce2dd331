/** Workspaces: the tenancy unit that keys, providers and configs belong to. */
import type { SqlExecutor } from '../sql.ts'
import { json, newId } from '../rows.ts'
import { jsonb, table, text, timestamp, type RecordOf } from '../table.ts'
import type { ChangeSink } from './sink.ts'
import { Where } from './filters.ts'
import { deleteRow, updateRow } from './patch.ts'

export type WorkspaceStatus = 'active' | 'archived'
export type ManagedBy = 'kubernetes' | 'file' | null

/** The `workspaces` table; `WorkspaceRecord` and every query below derive from it. */
export const workspaceTable = table('workspaces', {
  id: text().generated(newId),
  organizationId: text().insert(),
  slug: text().insert().patch(),
  name: text().insert().patch(),
  description: text().nullable().insert().patch(),
  status: text<WorkspaceStatus>().patch(),
  defaults: jsonb<Record<string, unknown>>().insert({}).patch(),
  usageLimits: jsonb<unknown[]>().insert([]).patch(),
  rateLimits: jsonb<unknown[]>().insert([]).patch(),
  settings: jsonb<Record<string, unknown>>().insert({}).patch(),
  nextUsageResetAt: timestamp().nullable().insert().patch(),
  lastResetAt: timestamp().nullable().patch(),
  managedBy: text<NonNullable<ManagedBy>>().nullable().insert().patch(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type WorkspaceRecord = RecordOf<typeof workspaceTable.fields>

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
    const record = await workspaceTable.create(this.#db, input)
    this.#sink.add({ resource: 'workspace', action: 'created', id: record.id })
    return record
  }

  /** By id or slug (the admin API accepts both). */
  async get(organizationId: string, idOrSlug: string): Promise<WorkspaceRecord | null> {
    return workspaceTable.row(this.#db, 'WHERE organization_id = $1 AND (id = $2 OR slug = $2) ORDER BY (id = $2) DESC LIMIT 1', [organizationId, idOrSlug])
  }

  /** Row lock for the rest of the transaction (serialises per-workspace caps such as user key counts). */
  async lock(organizationId: string, id: string): Promise<WorkspaceRecord | null> {
    return workspaceTable.row(this.#db, 'WHERE organization_id = $1 AND id = $2 FOR UPDATE', [organizationId, id])
  }

  async listAll(organizationId: string): Promise<WorkspaceRecord[]> {
    return workspaceTable.rows(this.#db, 'WHERE organization_id = $1 ORDER BY created_at, id', [organizationId])
  }

  async list(organizationId: string, filter: WorkspaceFilter, page: number, pageSize: number): Promise<{ total: number; data: WorkspaceRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
    if (filter.statuses) where.add('status = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))', json(filter.statuses))
    if (filter.ids) where.add('id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))', json(filter.ids))
    // strpos keeps the match literal (no LIKE wildcards from user input) and case-sensitive.
    where.maybe('strpos(name, ?) > 0', filter.nameContains).maybe('name = ?', filter.exactName)
    const count = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM workspaces${where.sql}`, where.params)
    const data = await workspaceTable.rows(this.#db, `${where.sql} ORDER BY created_at, id${where.page(page, pageSize)}`, where.params)
    return { total: count[0]?.n ?? 0, data }
  }

  async update(organizationId: string, id: string, patch: WorkspacePatch): Promise<WorkspaceRecord | null> {
    const set = workspaceTable.set(patch, 3)
    const record = await updateRow(this.#db, workspaceTable, organizationId, id, set)
    if (!record) return null
    this.#sink.add({ resource: 'workspace', action: 'updated', id })
    return record
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, 'workspaces', organizationId, id))) return false
    this.#sink.add({ resource: 'workspace', action: 'deleted', id })
    return true
  }
}
