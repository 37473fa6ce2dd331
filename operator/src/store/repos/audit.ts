/**
 * The audit trail. Writers pass already-redacted request details (admin/audit.ts); this layer only
 * stores and queries them.
 */
import type { SqlExecutor } from '../sql.ts'
import { newId } from '../rows.ts'
import { jsonb, number, table, text, timestamp, type InsertOf, type RecordOf } from '../table.ts'
import { Where } from './filters.ts'

export type ActorType = 'user' | 'api_key' | 'system' | 'anonymous'

/** The `audit_log` table; `AuditEntry` (what is written) and `AuditRecord` (what is read) derive from it. */
export const auditTable = table('audit_log', {
  id: text().generated(newId),
  organizationId: text().insert(),
  /** Given, or the database's clock. */
  occurredAt: timestamp().insertOrDefault(),
  actorType: text<ActorType>().insert(),
  actorId: text().nullable().insert(),
  userId: text().nullable().insert(),
  workspaceId: text().nullable().insert(),
  method: text().nullable().insert(),
  uri: text().nullable().insert(),
  requestId: text().nullable().insert(),
  action: text().insert(),
  resourceType: text().nullable().insert(),
  resourceId: text().nullable().insert(),
  responseStatusCode: number().nullable().insert(),
  clientIp: text().nullable().insert(),
  requestBody: jsonb<unknown>().nullable().insert(),
  queryParams: jsonb<unknown>().nullable().insert(),
  details: jsonb<unknown>().nullable().insert(),
})

export type AuditEntry = InsertOf<typeof auditTable.fields>
export type AuditRecord = RecordOf<typeof auditTable.fields>

export interface AuditFilter {
  startTime?: string
  endTime?: string
  method?: string
  uri?: string
  requestId?: string
  userId?: string
  actorType?: ActorType
  workspaceId?: string
  responseStatusCode?: number
  resourceType?: string
  resourceId?: string
  action?: string
  clientIp?: string
}

export class AuditRepository {
  readonly #db: SqlExecutor

  constructor(db: SqlExecutor) {
    this.#db = db
  }

  async record(entry: AuditEntry): Promise<void> {
    const insert = auditTable.insert(entry)
    await this.#db.query(insert.sql, insert.params)
  }

  async list(organizationId: string, filter: AuditFilter, page: number, pageSize: number): Promise<{ total: number; data: AuditRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
      .maybe('occurred_at >= ?::timestamptz', filter.startTime).maybe('occurred_at <= ?::timestamptz', filter.endTime)
      .maybe('method = ?', filter.method).maybe('uri = ?', filter.uri).maybe('request_id = ?', filter.requestId)
      .maybe('user_id = ?', filter.userId).maybe('actor_type = ?', filter.actorType).maybe('workspace_id = ?', filter.workspaceId)
      .maybe('response_status_code = ?', filter.responseStatusCode).maybe('resource_type = ?', filter.resourceType)
      .maybe('resource_id = ?', filter.resourceId).maybe('action = ?', filter.action).maybe('client_ip = ?', filter.clientIp)
    const count = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log${where.sql}`, where.params)
    const data = await auditTable.rows(this.#db, `${where.sql} ORDER BY occurred_at DESC, id${where.page(page, pageSize)}`, where.params)
    return { total: count[0]?.n ?? 0, data }
  }
}
