/**
 * GET /v1/audit-logs: the audit trail with filters (time window, method, uri, request id, user,
 * actor type, workspace, status code, resource type/id, action, client IP) and pages. Organisation
 * level only (admin keys, owners, admins) with `audit_logs.list`.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { requireCapability } from '../../identity/capabilities.ts'
import type { AuditRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { listEnvelope, parse, pagination, principalOf } from '../http.ts'

const time = z.iso.datetime({ offset: true })
const query = z.object({
  start_time: time.optional(),
  end_time: time.optional(),
  method: z.enum(['POST', 'PUT', 'PATCH', 'DELETE', 'GET']).optional(),
  uri: z.string().max(2000).optional(),
  request_id: z.string().max(200).optional(),
  user_id: z.string().max(200).optional(),
  user_type: z.enum(['user', 'api_key', 'system', 'anonymous']).optional(),
  workspace_id: z.string().max(200).optional(),
  response_status_code: z.coerce.number().int().min(100).max(599).optional(),
  resource_type: z.string().max(100).optional(),
  resource_id: z.string().max(200).optional(),
  action: z.string().max(200).optional(),
  client_ip: z.string().max(100).optional(),
}).loose()

function recordView(record: AuditRecord): Record<string, unknown> {
  return {
    id: record.id,
    timestamp: record.occurredAt,
    method: record.method,
    uri: record.uri,
    request_id: record.requestId,
    request_body: record.requestBody,
    query_params: record.queryParams,
    user_id: record.userId,
    user_type: record.actorType,
    actor_id: record.actorId,
    organisation_id: record.organizationId,
    workspace_id: record.workspaceId,
    response_status_code: record.responseStatusCode,
    resource_type: record.resourceType,
    resource_id: record.resourceId,
    action: record.action,
    client_ip: record.clientIp,
    details: record.details,
  }
}

export function auditLogRoutes(app: FastifyInstance, ctx: AdminContext): void {
  app.get('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'audit_logs', 'list')
    const q = parse(query, request.query)
    const { page, pageSize } = pagination(request.query)
    const result = await ctx.store.audit.list(principal.organizationId, {
      startTime: q.start_time, endTime: q.end_time, method: q.method, uri: q.uri, requestId: q.request_id, userId: q.user_id,
      actorType: q.user_type, workspaceId: q.workspace_id, responseStatusCode: q.response_status_code, resourceType: q.resource_type,
      resourceId: q.resource_id, action: q.action, clientIp: q.client_ip,
    }, page, pageSize)
    return listEnvelope(result.total, result.data.map(recordView))
  })
}
