/** Pending invitations of people into the organisation (accepted on their first JWT sign-in). */
import type { SqlExecutor } from '../sql.ts'
import { newId } from '../rows.ts'
import { jsonb, table, text, timestamp, type RecordOf } from '../table.ts'
import { Where } from './filters.ts'
import type { WorkspaceRole } from './members.ts'

export type InviteStatus = 'pending' | 'cancelled' | 'accepted' | 'expired'

/** The `invites` table; `InviteRecord` and every query below derive from it. */
export const inviteTable = table('invites', {
  id: text().generated(newId),
  organizationId: text().insert(),
  email: text().insert(),
  role: text<'admin' | 'member'>().insert(),
  workspaces: jsonb<Array<{ workspace_id: string; role: WorkspaceRole }>>().insert(),
  status: text<InviteStatus>(),
  invitedBy: text().nullable().insert(),
  expiresAt: timestamp().insert(),
  acceptedAt: timestamp().nullable(),
  createdAt: timestamp(),
})

export type InviteRecord = RecordOf<typeof inviteTable.fields>

export class InviteRepository {
  readonly #db: SqlExecutor

  constructor(db: SqlExecutor) {
    this.#db = db
  }

  async create(input: Omit<InviteRecord, 'id' | 'status' | 'acceptedAt' | 'createdAt'>): Promise<InviteRecord> {
    return inviteTable.create(this.#db, { ...input, email: input.email.toLowerCase() })
  }

  async get(organizationId: string, id: string): Promise<InviteRecord | null> {
    return inviteTable.row(this.#db, 'WHERE organization_id = $1 AND id = $2', [organizationId, id])
  }

  async pendingFor(organizationId: string, email: string, now: Date): Promise<InviteRecord | null> {
    return inviteTable.row(
      this.#db,
      "WHERE organization_id = $1 AND email = $2 AND status = 'pending' AND expires_at > $3::timestamptz ORDER BY created_at DESC LIMIT 1",
      [organizationId, email.toLowerCase(), now.toISOString()],
    )
  }

  async list(organizationId: string, filter: { role?: string; email?: string; status?: InviteStatus }, page: number, pageSize: number): Promise<{ total: number; data: InviteRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
      .maybe('role = ?', filter.role).maybe('email = ?', filter.email?.toLowerCase()).maybe('status = ?', filter.status)
    const count = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM invites${where.sql}`, where.params)
    const data = await inviteTable.rows(this.#db, `${where.sql} ORDER BY created_at, id${where.page(page, pageSize)}`, where.params)
    return { total: count[0]?.n ?? 0, data }
  }

  async setStatus(organizationId: string, id: string, status: InviteStatus, expiresAt?: string): Promise<InviteRecord | null> {
    const rows = await this.#db.query(
      `UPDATE invites SET status = $3, expires_at = COALESCE($4::timestamptz, expires_at),
         accepted_at = CASE WHEN $3 = 'accepted' THEN now() ELSE accepted_at END
       WHERE organization_id = $1 AND id = $2 RETURNING ${inviteTable.columns}`,
      [organizationId, id, status, expiresAt ?? null],
    )
    return rows[0] ? inviteTable.toRecord(rows[0]) : null
  }
}
