/** Organisation users (owner, admin, member). */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired, newId } from '../rows.ts'
import type { ChangeSink } from './sink.ts'
import { Where } from './filters.ts'
import { deleteRow } from './patch.ts'

export type OrgRole = 'owner' | 'admin' | 'member'

export interface UserRecord {
  id: string
  organizationId: string
  email: string
  firstName: string | null
  lastName: string | null
  role: OrgRole
  status: 'active' | 'disabled'
  externalSubject: string | null
  createdAt: string
  updatedAt: string
}

interface Row {
  id: string
  organization_id: string
  email: string
  first_name: string | null
  last_name: string | null
  role: OrgRole
  status: 'active' | 'disabled'
  external_subject: string | null
  created_at: Date
  updated_at: Date
}

function toRecord(row: Row): UserRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    role: row.role,
    status: row.status,
    externalSubject: row.external_subject,
    createdAt: isoRequired(row.created_at),
    updatedAt: isoRequired(row.updated_at),
  }
}

export interface NewUser {
  organizationId: string
  email: string
  role: OrgRole
  firstName?: string | null
  lastName?: string | null
  externalSubject?: string | null
}

export class UserRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  async create(input: NewUser): Promise<UserRecord> {
    const rows = await this.#db.query<Row>(
      `INSERT INTO users (id, organization_id, email, first_name, last_name, role, external_subject)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [newId(), input.organizationId, input.email.toLowerCase(), input.firstName ?? null, input.lastName ?? null, input.role, input.externalSubject ?? null],
    )
    this.#sink.add({ resource: 'user', action: 'created', id: rows[0]!.id })
    return toRecord(rows[0]!)
  }

  async get(organizationId: string, id: string): Promise<UserRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM users WHERE organization_id = $1 AND id = $2', [organizationId, id])
    return rows[0] ? toRecord(rows[0]) : null
  }

  async findByEmail(organizationId: string, email: string): Promise<UserRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM users WHERE organization_id = $1 AND email = $2', [organizationId, email.toLowerCase()])
    return rows[0] ? toRecord(rows[0]) : null
  }

  async findBySubject(organizationId: string, subject: string): Promise<UserRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM users WHERE organization_id = $1 AND external_subject = $2', [organizationId, subject])
    return rows[0] ? toRecord(rows[0]) : null
  }

  async list(organizationId: string, filter: { role?: OrgRole; email?: string }, page: number, pageSize: number): Promise<{ total: number; data: UserRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId).maybe('role = ?', filter.role).maybe('email = ?', filter.email?.toLowerCase())
    const count = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM users${where.sql}`, where.params)
    const sql = `SELECT * FROM users${where.sql} ORDER BY created_at, id`
    const rows = await this.#db.query<Row>(sql + where.page(page, pageSize), where.params)
    return { total: count[0]?.n ?? 0, data: rows.map(toRecord) }
  }

  async update(organizationId: string, id: string, patch: { role?: OrgRole; firstName?: string | null; lastName?: string | null; externalSubject?: string | null }): Promise<UserRecord | null> {
    const rows = await this.#db.query<Row>(
      `UPDATE users SET
         role = COALESCE($3, role),
         first_name = CASE WHEN $4::boolean THEN $5 ELSE first_name END,
         last_name = CASE WHEN $6::boolean THEN $7 ELSE last_name END,
         external_subject = CASE WHEN $8::boolean THEN $9 ELSE external_subject END,
         updated_at = now()
       WHERE organization_id = $1 AND id = $2 RETURNING *`,
      [organizationId, id, patch.role ?? null, 'firstName' in patch, patch.firstName ?? null, 'lastName' in patch, patch.lastName ?? null, 'externalSubject' in patch, patch.externalSubject ?? null],
    )
    if (!rows[0]) return null
    this.#sink.add({ resource: 'user', action: 'updated', id })
    return toRecord(rows[0])
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!(await deleteRow(this.#db, 'users', organizationId, id))) return false
    // Cascades to memberships and user keys, which the gateway must drop.
    this.#sink.add({ resource: 'user', action: 'deleted', id })
    return true
  }

  async countByRole(organizationId: string, role: OrgRole): Promise<number> {
    const rows = await this.#db.query<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE organization_id = $1 AND role = $2', [organizationId, role])
    return rows[0]?.n ?? 0
  }
}
