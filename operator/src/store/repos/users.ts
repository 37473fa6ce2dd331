/** Organisation users (owner, admin, member). */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired, newId } from '../rows.ts'
import type { ChangeSink } from './sink.ts'
import { Where } from './filters.ts'
import { deleteRow, setClause } from './patch.ts'

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
  /** SCIM `userName` and `externalId`, set when an identity provider provisions or links the user. */
  scimUserName: string | null
  scimExternalId: string | null
  createdAt: string
  updatedAt: string
}

export type UserStatus = UserRecord['status']

interface Row {
  id: string
  organization_id: string
  email: string
  first_name: string | null
  last_name: string | null
  role: OrgRole
  status: 'active' | 'disabled'
  external_subject: string | null
  scim_user_name: string | null
  scim_external_id: string | null
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
    scimUserName: row.scim_user_name,
    scimExternalId: row.scim_external_id,
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
  scimUserName?: string | null
  scimExternalId?: string | null
  status?: UserStatus
}

/** Fields an update may change; a field left out keeps its value. */
export interface UserPatch {
  role?: OrgRole
  email?: string
  firstName?: string | null
  lastName?: string | null
  externalSubject?: string | null
  scimUserName?: string | null
  scimExternalId?: string | null
}

const PATCH_COLUMNS = {
  role: ['role', 'value'],
  email: ['email', 'value'],
  firstName: ['first_name', 'value'],
  lastName: ['last_name', 'value'],
  externalSubject: ['external_subject', 'value'],
  scimUserName: ['scim_user_name', 'value'],
  scimExternalId: ['scim_external_id', 'value'],
} as const

export class UserRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  async create(input: NewUser): Promise<UserRecord> {
    const rows = await this.#db.query<Row>(
      `INSERT INTO users (id, organization_id, email, first_name, last_name, role, external_subject, scim_user_name, scim_external_id, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
      [newId(), input.organizationId, input.email.toLowerCase(), input.firstName ?? null, input.lastName ?? null, input.role, input.externalSubject ?? null, input.scimUserName ?? null, input.scimExternalId ?? null, input.status ?? 'active'],
    )
    this.#sink.add({ resource: 'user', action: 'created', id: rows[0]!.id })
    await this.#forgetDeletion(input.organizationId, input.externalSubject)
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

  async update(organizationId: string, id: string, patch: UserPatch): Promise<UserRecord | null> {
    const set = setClause(patch.email === undefined ? patch : { ...patch, email: patch.email.toLowerCase() }, PATCH_COLUMNS, 3)
    const rows = await this.#db.query<Row>(`UPDATE users SET ${set.sql} WHERE organization_id = $1 AND id = $2 RETURNING *`, [organizationId, id, ...set.params])
    if (!rows[0]) return null
    this.#sink.add({ resource: 'user', action: 'updated', id })
    await this.#forgetDeletion(organizationId, patch.externalSubject)
    return toRecord(rows[0])
  }

  /** A subject linked to a user again (re-provisioned after a deletion) is no longer refused. */
  async #forgetDeletion(organizationId: string, subject: string | null | undefined): Promise<void> {
    if (subject) await this.#db.query('DELETE FROM deleted_user_subjects WHERE organization_id = $1 AND subject = $2', [organizationId, subject])
  }

  /**
   * Activates or deactivates a user. A disabled user keeps memberships and keys (reactivation
   * restores them); the change is published so gateways refuse the user's keys and tokens at once.
   */
  async setStatus(organizationId: string, id: string, status: UserStatus): Promise<UserRecord | null> {
    const rows = await this.#db.query<Row>('UPDATE users SET status = $3, updated_at = now() WHERE organization_id = $1 AND id = $2 RETURNING *', [organizationId, id, status])
    if (!rows[0]) return null
    this.#sink.add({ resource: 'user', action: 'updated', id })
    return toRecord(rows[0])
  }

  async findByScimUserName(organizationId: string, userName: string): Promise<UserRecord | null> {
    const rows = await this.#db.query<Row>('SELECT * FROM users WHERE organization_id = $1 AND lower(scim_user_name) = lower($2)', [organizationId, userName])
    return rows[0] ? toRecord(rows[0]) : null
  }

  /** Every user of the organisation, oldest first (SCIM lists filter these in memory). */
  async listAll(organizationId: string): Promise<UserRecord[]> {
    const rows = await this.#db.query<Row>('SELECT * FROM users WHERE organization_id = $1 ORDER BY created_at, id', [organizationId])
    return rows.map(toRecord)
  }

  /** Ids and subjects of users deleted since `since` (their JWTs may not have expired yet). */
  async deletedSubjects(organizationId: string, since: Date): Promise<string[]> {
    const rows = await this.#db.query<{ subject: string }>(
      'SELECT subject FROM deleted_user_subjects WHERE organization_id = $1 AND deleted_at >= $2 AND subject IS NOT NULL ORDER BY subject',
      [organizationId, since.toISOString()],
    )
    return rows.map((row) => row.subject)
  }

  /** Ids and identity-provider subjects of disabled users: what gateways must refuse. */
  async disabledIdentities(organizationId: string): Promise<Array<{ id: string; externalSubject: string | null }>> {
    const rows = await this.#db.query<{ id: string; external_subject: string | null }>("SELECT id, external_subject FROM users WHERE organization_id = $1 AND status = 'disabled' ORDER BY id", [organizationId])
    return rows.map((row) => ({ id: row.id, externalSubject: row.external_subject }))
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    // The subjects stay refused by gateways after the row is gone (see deletedSubjects).
    await this.#db.query(
      `INSERT INTO deleted_user_subjects (organization_id, subject)
       SELECT u.organization_id, subject FROM users u, unnest(ARRAY[u.id, u.external_subject]) AS subject
       WHERE u.organization_id = $1 AND u.id = $2 AND subject IS NOT NULL
       ON CONFLICT (organization_id, subject) DO UPDATE SET deleted_at = now()`,
      [organizationId, id],
    )
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
