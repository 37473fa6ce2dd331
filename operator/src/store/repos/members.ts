/** Workspace membership with a workspace role (admin, manager, member). */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired } from '../rows.ts'
import type { ChangeSink } from './sink.ts'
import { Where } from './filters.ts'
import type { OrgRole } from './users.ts'

export type WorkspaceRole = 'admin' | 'manager' | 'member'

export interface MemberRecord {
  workspaceId: string
  userId: string
  role: WorkspaceRole
  email: string
  firstName: string | null
  lastName: string | null
  orgRole: OrgRole
  createdAt: string
  updatedAt: string
}

interface Row {
  workspace_id: string
  user_id: string
  role: WorkspaceRole
  email: string
  first_name: string | null
  last_name: string | null
  org_role: OrgRole
  created_at: Date
  updated_at: Date
}

function toRecord(row: Row): MemberRecord {
  return {
    workspaceId: row.workspace_id,
    userId: row.user_id,
    role: row.role,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    orgRole: row.org_role,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

const SELECT = `SELECT m.workspace_id, m.user_id, m.role, m.created_at, m.updated_at,
  u.email, u.first_name, u.last_name, u.role AS org_role
  FROM workspace_members m JOIN users u ON u.id = m.user_id`

export class MemberRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  /** Adds or changes a membership given by hand (SCIM group sync then leaves it alone). */
  async upsert(workspaceId: string, userId: string, role: WorkspaceRole): Promise<void> {
    await this.#db.query(
      `INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = EXCLUDED.role, granted_by_scim = false, updated_at = now()`,
      [workspaceId, userId, role],
    )
    this.#sink.add({ resource: 'member', action: 'updated', id: `${workspaceId}/${userId}` })
  }

  async get(workspaceId: string, userId: string): Promise<MemberRecord | null> {
    const rows = await this.#db.query<Row>(`${SELECT} WHERE m.workspace_id = $1 AND m.user_id = $2`, [workspaceId, userId])
    return rows[0] ? toRecord(rows[0]) : null
  }

  async list(workspaceId: string, filter: { role?: WorkspaceRole; email?: string }, page: number, pageSize: number): Promise<{ total: number; data: MemberRecord[] }> {
    const where = new Where().add('m.workspace_id = ?', workspaceId).maybe('m.role = ?', filter.role).maybe('u.email = ?', filter.email?.toLowerCase())
    const count = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM workspace_members m JOIN users u ON u.id = m.user_id${where.sql}`, where.params)
    const rows = await this.#db.query<Row>(`${SELECT}${where.sql} ORDER BY m.created_at, m.user_id` + where.page(page, pageSize), where.params)
    return { total: count[0]?.n ?? 0, data: rows.map(toRecord) }
  }

  async workspacesOf(userId: string): Promise<Array<{ workspaceId: string; role: WorkspaceRole }>> {
    const rows = await this.#db.query<{ workspace_id: string; role: WorkspaceRole }>('SELECT workspace_id, role FROM workspace_members WHERE user_id = $1 ORDER BY workspace_id', [userId])
    return rows.map((row) => ({ workspaceId: row.workspace_id, role: row.role }))
  }

  async delete(workspaceId: string, userId: string): Promise<boolean> {
    const rows = await this.#db.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2 RETURNING user_id', [workspaceId, userId])
    if (rows.length === 0) return false
    this.#sink.add({ resource: 'member', action: 'deleted', id: `${workspaceId}/${userId}` })
    return true
  }
}
