/**
 * The audit trail. Writers pass already-redacted request details (admin/audit.ts); this layer only
 * stores and queries them.
 */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired, json, newId } from '../rows.ts'
import { Where } from './filters.ts'

export type ActorType = 'user' | 'api_key' | 'system' | 'anonymous'

export interface AuditEntry {
  organizationId: string
  actorType: ActorType
  actorId?: string | null
  userId?: string | null
  workspaceId?: string | null
  method?: string | null
  uri?: string | null
  requestId?: string | null
  action: string
  resourceType?: string | null
  resourceId?: string | null
  responseStatusCode?: number | null
  clientIp?: string | null
  requestBody?: unknown
  queryParams?: unknown
  details?: unknown
  occurredAt?: string
}

export interface AuditRecord extends Required<Omit<AuditEntry, 'occurredAt'>> {
  id: string
  occurredAt: string
}

interface Row {
  id: string
  organization_id: string
  occurred_at: Date
  actor_type: ActorType
  actor_id: string | null
  user_id: string | null
  workspace_id: string | null
  method: string | null
  uri: string | null
  request_id: string | null
  action: string
  resource_type: string | null
  resource_id: string | null
  response_status_code: number | null
  client_ip: string | null
  request_body: unknown
  query_params: unknown
  details: unknown
}

function toRecord(row: Row): AuditRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    occurredAt: isoRequired(row.occurred_at),
    actorType: row.actor_type,
    actorId: row.actor_id,
    userId: row.user_id,
    workspaceId: row.workspace_id,
    method: row.method,
    uri: row.uri,
    requestId: row.request_id,
    action: row.action,
    resourceType: row.resource_type,
    resourceId: row.resource_id,
    responseStatusCode: row.response_status_code,
    clientIp: row.client_ip,
    requestBody: row.request_body,
    queryParams: row.query_params,
    details: row.details,
  }
}

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
    await this.#db.query(
      `INSERT INTO audit_log (id, organization_id, occurred_at, actor_type, actor_id, user_id, workspace_id, method, uri, request_id, action,
         resource_type, resource_id, response_status_code, client_ip, request_body, query_params, details)
       VALUES ($1, $2, COALESCE($3::timestamptz, now()), $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::jsonb, $17::jsonb, $18::jsonb)`,
      [
        newId(), entry.organizationId, entry.occurredAt ?? null, entry.actorType, entry.actorId ?? null, entry.userId ?? null, entry.workspaceId ?? null,
        entry.method ?? null, entry.uri ?? null, entry.requestId ?? null, entry.action, entry.resourceType ?? null, entry.resourceId ?? null,
        entry.responseStatusCode ?? null, entry.clientIp ?? null, json(entry.requestBody ?? null), json(entry.queryParams ?? null), json(entry.details ?? null),
      ],
    )
  }

  async list(organizationId: string, filter: AuditFilter, page: number, pageSize: number): Promise<{ total: number; data: AuditRecord[] }> {
    const where = new Where().add('organization_id = ?', organizationId)
      .maybe('occurred_at >= ?::timestamptz', filter.startTime).maybe('occurred_at <= ?::timestamptz', filter.endTime)
      .maybe('method = ?', filter.method).maybe('uri = ?', filter.uri).maybe('request_id = ?', filter.requestId)
      .maybe('user_id = ?', filter.userId).maybe('actor_type = ?', filter.actorType).maybe('workspace_id = ?', filter.workspaceId)
      .maybe('response_status_code = ?', filter.responseStatusCode).maybe('resource_type = ?', filter.resourceType)
      .maybe('resource_id = ?', filter.resourceId).maybe('action = ?', filter.action).maybe('client_ip = ?', filter.clientIp)
    const count = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log${where.sql}`, where.params)
    const rows = await this.#db.query<Row>(`SELECT * FROM audit_log${where.sql} ORDER BY occurred_at DESC, id` + where.page(page, pageSize), where.params)
    return { total: count[0]?.n ?? 0, data: rows.map(toRecord) }
  }
}
