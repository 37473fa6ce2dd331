/**
 * Audit of administrative actions: every mutating admin request (POST/PUT/PATCH/DELETE) is
 * recorded with who (key id or user id), what (action, resource), when, from where (IP) and the
 * request details, whatever its outcome. JWT failures are recorded too. Bodies are redacted first:
 * key material, hashes and provider secrets never reach the audit table.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Store } from '../store/index.ts'

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const SECRET_FIELD = /key|secret|password|token|credential|authorization|pepper|hash/i
/** Field names that contain "key" but are not secrets. */
const SAFE_FIELDS = new Set(['key_transition_period_ms', 'workspace_api_key_details'])
const KEY_MATERIAL = /ghk_(?:adm|ws)_[0-9A-Za-z]+/g
const JWT_MATERIAL = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g
const HEX_DIGEST = /\b[0-9a-f]{64}\b/g
export const REDACTED = '[redacted]'
/** Audit rows keep request details, not payload dumps. */
const MAX_STRING_CHARS = 2000

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8) return REDACTED
  if (typeof value === 'string') {
    const clean = value.replace(KEY_MATERIAL, REDACTED).replace(JWT_MATERIAL, REDACTED).replace(HEX_DIGEST, REDACTED)
    return clean.length > MAX_STRING_CHARS ? `${clean.slice(0, MAX_STRING_CHARS)}…` : clean
  }
  if (Array.isArray(value)) return value.slice(0, 100).map((item) => redact(item, depth + 1))
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [name, inner] of Object.entries(value)) {
      out[name] = SECRET_FIELD.test(name) && !SAFE_FIELDS.has(name) ? REDACTED : redact(inner, depth + 1)
    }
    return out
  }
  return value
}

export function isMutating(method: string): boolean {
  return MUTATING.has(method)
}

/** The route pattern (`/v1/api-keys/:id`), never the raw URL with ids or query strings. */
function routePattern(request: FastifyRequest): string {
  return request.routeOptions.url ?? request.url.split('?')[0]!
}

function defaultAction(request: FastifyRequest): string {
  return `${request.method} ${routePattern(request)}`
}

export async function recordRequest(store: Store, organizationId: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const principal = request.principal
  const target = request.auditTarget
  await store.audit.record({
    organizationId,
    actorType: principal ? principal.actor.type : 'anonymous',
    actorId: principal?.actor.id ?? null,
    userId: principal?.user?.id ?? null,
    workspaceId: target?.workspaceId ?? principal?.workspaceId ?? null,
    method: request.method,
    uri: routePattern(request),
    requestId: request.id,
    action: target?.action ?? defaultAction(request),
    resourceType: target?.resourceType ?? null,
    resourceId: target?.resourceId ?? null,
    responseStatusCode: reply.statusCode,
    clientIp: request.ip,
    requestBody: redact(request.body ?? null),
    queryParams: redact(request.query ?? null),
    details: target?.details ? redact(target.details) : null,
  })
}

export async function recordAuthFailure(store: Store, organizationId: string, request: FastifyRequest, mechanism: string, reason: string, statusCode: number): Promise<void> {
  await store.audit.record({
    organizationId,
    actorType: 'anonymous',
    method: request.method,
    uri: routePattern(request),
    requestId: request.id,
    action: `auth.${mechanism}_failed`,
    resourceType: 'session',
    responseStatusCode: statusCode,
    clientIp: request.ip,
    details: { reason: redact(reason) },
  })
}
