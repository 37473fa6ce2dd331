/** Organisation users (owner, admin, member). */
import type { SqlExecutor } from '../sql.ts'
import { newId } from '../rows.ts'
import { table, text, timestamp, type RecordOf } from '../table.ts'
import type { ChangeSink } from './sink.ts'
import { Where } from './filters.ts'
import { deleteRow, updateRow } from './patch.ts'

export type OrgRole = 'owner' | 'admin' | 'member'

/** The `users` table; `UserRecord` and every query below derive from it. */
export const userTable = table('users', {
  id: text().generated(newId),
  organizationId: text().insert(),
  email: text().insert().patch(),
  firstName: text().nullable().insert().patch(),
  lastName: text().nullable().insert().patch(),
  role: text<OrgRole>().insert().patch(),
  status: text<'active' | 'disabled'>().insert('active'),
  externalSubject: text().nullable().insert().patch(),
  /** SCIM `userName` and `externalId`, set when an identity provider provisions or links the user. */
  scimUserName: text().nullable().insert().patch(),
  scimExternalId: text().nullable().insert().patch(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
})

export type UserRecord = RecordOf<typeof userTable.fields>

export type UserStatus = UserRecord['status']

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

export class UserRepository {
  readonly #db: SqlExecutor
  readonly #sink: ChangeSink

  constructor(db: SqlExecutor, sink: ChangeSink) {
    this.#db = db
    this.#sink = sink
  }

  async create(input: NewUser): Promise<UserRecord> {
    const record = await userTable.create(this.#db, { ...input, email: input.email.toLowerCase() })
    this.#sink.add({ resource: 'user', action: 'created', id: record.id })
    await this.#forgetDeletion(input.organizationId, input.externalSubject)
    return record
  }

  async get(organizationId: string, id: string): Promise<UserRecord | null> {
    return userTable.row(this.#db, 'WHERE organization_id = $1 AND id = $2', [organizationId, id])
  }

  async findByEmail(organizationId: string, email: string): Promise<UserRecord | null> {
    return userTable.row(this.#db, 'WHERE organization_id = $1 AND email = $2', [organizationId, email.toLowerCase()])
  }

  async findBySubject(organizationId: string, subject: string): Promise<UserRecord | null> {
    return userTable.row(this.#db, 'WHERE organization_id = $1 AND external_subject = $2', [organizationId, subject])
  }

  async list(organizationId: string, filter: { role?: OrgRole; email?: string }, page: number, pageSize: number): Promise<{ total: number; data: UserRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId).maybe('role = ?', filter.role).maybe('email = ?', filter.email?.toLowerCase())
    const count = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM users${where.sql}`, where.params)
    const data = await userTable.rows(this.#db, `${where.sql} ORDER BY created_at, id${where.page(page, pageSize)}`, where.params)
    return { total: count[0]?.n ?? 0, data }
  }

  async update(organizationId: string, id: string, patch: UserPatch): Promise<UserRecord | null> {
    const set = userTable.set(patch.email === undefined ? patch : { ...patch, email: patch.email.toLowerCase() }, 3)
    const record = await updateRow(this.#db, userTable, organizationId, id, set)
    if (!record) return null
    this.#sink.add({ resource: 'user', action: 'updated', id })
    await this.#forgetDeletion(organizationId, patch.externalSubject)
    return record
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
    const record = await updateRow(this.#db, userTable, organizationId, id, { sql: 'status = $3, updated_at = now()', params: [status] })
    if (!record) return null
    this.#sink.add({ resource: 'user', action: 'updated', id })
    return record
  }

  async findByScimUserName(organizationId: string, userName: string): Promise<UserRecord | null> {
    return userTable.row(this.#db, 'WHERE organization_id = $1 AND lower(scim_user_name) = lower($2)', [organizationId, userName])
  }

  /** Every user of the organisation, oldest first (SCIM lists filter these in memory). */
  async listAll(organizationId: string): Promise<UserRecord[]> {
    return userTable.rows(this.#db, 'WHERE organization_id = $1 ORDER BY created_at, id', [organizationId])
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
