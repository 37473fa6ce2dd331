/** Pending invitations of people into the organisation (accepted on their first JWT sign-in). */
import type { SqlExecutor } from '../sql.ts'
import { iso, isoRequired, json, newId } from '../rows.ts'
import { Where } from './filters.ts'
import type { WorkspaceRole } from './members.ts'

export type InviteStatus = 'pending' | 'cancelled' | 'accepted' | 'expired'

export interface InviteRecord {
  id: string
  organizationId: string
  email: string
  role: 'admin' | 'member'
  workspaces: Array<{ workspace_id: string; role: WorkspaceRole }>
  status: InviteStatus
  invitedBy: string | null
  expiresAt: string
  acceptedAt: string | null
  createdAt: string
}

interface Row {
  id: string
  organization_id: string
  email: string
  role: 'admin' | 'member'
  workspaces: Array<{ workspace_id: string; role: WorkspaceRole }>
  status: InviteStatus
  invited_by: string | null
  expires_at: Date
  accepted_at: Date | null
  created_at: Date
}

function toRecord(row: Row): InviteRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    email: row.email,
    role: row.role,
    workspaces: row.workspaces,
    status: row.status,
    invitedBy: row.invited_by,
    expiresAt: isoRequired(row.expires_at),
    acceptedAt: iso(row.accepted_at),
    createdAt: isoRequired(row.created_at),
  }
}

export class InviteRepository {
  readonly #db: SqlExecutor

  constructor(db: SqlExecutor) {
    this.#db = db
  }

  async create(input: Omit<InviteRecord, 'id' | 'status' | 'acceptedAt' | 'createdAt'>): Promise<InviteRecord> {
    const rows = await this.#db.query<Row>(
      `INSERT INTO invites (id, organization_id, email, role, workspaces, invited_by, expires_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7::timestamptz) RETURNING *`,
      [newId(), input.organizationId, input.email.toLowerCase(), input.role, json(input.workspaces), input.invitedBy, input.expiresAt],
    )
    return toRecord(rows[0]!)
  }

  async get(organizationId: string, id: string): Promise<InviteRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM invites WHERE organization_id = $1 AND id = $2', [organizationId, id])
    return rows[0] ? toRecord(rows[0]) : null
  }

  async pendingFor(organizationId: string, email: string, now: Date): Promise<InviteRecord | null> {
    const rows = await this.#db.query<Row>(
      `SELECT * FROM invites WHERE organization_id = $1 AND email = $2 AND status = 'pending' AND expires_at > $3::timestamptz
       ORDER BY created_at DESC LIMIT 1`,
      [organizationId, email.toLowerCase(), now.toISOString()],
    )
    return rows[0] ? toRecord(rows[0]) : null
  }

  async list(organizationId: string, filter: { role?: string; email?: string; status?: InviteStatus }, page: number, pageSize: number): Promise<{ total: number; data: InviteRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
      .maybe('role = ?', filter.role).maybe('email = ?', filter.email?.toLowerCase()).maybe('status = ?', filter.status)
    const count = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM invites${where.sql}`, where.params)
    const rows = await this.#db.query<Row>(`SELECT * FROM invites${where.sql} ORDER BY created_at, id` + where.page(page, pageSize), where.params)
    return { total: count[0]?.n ?? 0, data: rows.map(toRecord) }
  }

  async setStatus(organizationId: string, id: string, status: InviteStatus, expiresAt?: string): Promise<InviteRecord | null> {
    const rows = await this.#db.query<Row>(
      `UPDATE invites SET status = $3, expires_at = COALESCE($4::timestamptz, expires_at),
         accepted_at = CASE WHEN $3 = 'accepted' THEN now() ELSE accepted_at END
       WHERE organization_id = $1 AND id = $2 RETURNING *`,
      [organizationId, id, status, expiresAt ?? null],
    )
    return rows[0] ? toRecord(rows[0]) : null
  }
}
