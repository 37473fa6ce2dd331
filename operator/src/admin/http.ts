/** Small helpers shared by admin route modules: body parsing, pagination, list envelopes. */
import type { FastifyRequest } from 'fastify'
import { z } from 'zod'
import { invalid, unauthenticated } from '../errors.ts'
import type { Principal } from '../identity/principal.ts'
import type { AuditTarget } from './context.ts'

export const DEFAULT_PAGE_SIZE = 50
export const MAX_PAGE_SIZE = 100

/** `a.b[0].c` from a zod issue path, for the error's `param`. */
export function issuePath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${String(part)}` : String(part)), '')
}

/** Parses with `schema`; the first problem becomes AB01 (400) naming the field. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, root = ''): z.infer<S> {
  const result = schema.safeParse(value ?? {})
  if (result.success) return result.data
  const issue = result.error.issues[0]!
  const path = issuePath(issue.path)
  const param = [root, path].filter(Boolean).join('.') || null
  const message = issue.code === 'unrecognized_keys' ? `unknown field(s): ${issue.keys.join(', ')}` : issue.message
  throw invalid(param ?? '(body)', param ? `${param}: ${message}` : message)
}

const pageQuery = z.object({
  current_page: z.coerce.number().int().min(0).optional(),
  currentPage: z.coerce.number().int().min(0).optional(),
  page_size: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
  pageSize: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
})

/** 0-based `current_page` and `page_size` (camelCase spellings accepted, as some clients send them). */
export function pagination(query: unknown): { page: number; pageSize: number } {
  const q = parse(pageQuery, query)
  return { page: q.current_page ?? q.currentPage ?? 0, pageSize: q.page_size ?? q.pageSize ?? DEFAULT_PAGE_SIZE }
}

export function listEnvelope<T>(total: number, data: T[]): { object: 'list'; total: number; data: T[] } {
  return { object: 'list', total, data }
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthenticated('authentication required')
  return request.principal
}

export function audit(request: FastifyRequest, target: AuditTarget): void {
  request.auditTarget = target
}
