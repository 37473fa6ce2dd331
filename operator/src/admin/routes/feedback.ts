/**
 * Feedback: POST /v1/feedback and PUT /v1/feedback/{id}, tied to a trace id. Workspace keys only
 * (the spec's key-capability table), with `logs.write`; the feedback belongs to the key's
 * workspace. Answers are shaped for batches, as the spec's are: {status, message, feedback_ids}.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { forbidden, notFound } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import type { AdminContext } from '../context.ts'
import { audit, parse, principalOf } from '../http.ts'

const metadataSchema = z.record(z.string().max(255), z.unknown()).refine((value) => JSON.stringify(value).length <= 8192, 'metadata must be at most 8 KiB')
const createSchema = z.strictObject({
  trace_id: z.string().min(1).max(256),
  value: z.int().min(-10).max(10),
  weight: z.number().min(0).max(1).default(1),
  metadata: metadataSchema.default({}),
})
const updateSchema = z.strictObject({ value: z.int().min(-10).max(10), weight: z.number().min(0).max(1).optional(), metadata: metadataSchema.optional() })

function feedbackWorkspace(principal: Principal): string {
  if (principal.keyType !== 'workspace' || principal.workspaceId === null) throw forbidden('feedback is given with a workspace API key')
  if (!principal.has('logs.write', principal.workspaceId)) throw forbidden('this key may not give feedback (needs logs.write)')
  return principal.workspaceId
}

export function feedbackRoutes(app: FastifyInstance, ctx: AdminContext): void {
  app.post('/', async (request) => {
    const principal = principalOf(request)
    const workspaceId = feedbackWorkspace(principal)
    const body = parse(createSchema, request.body)
    const created = await ctx.store.feedback.create({
      organizationId: principal.organizationId, workspaceId, traceId: body.trace_id, value: body.value, weight: body.weight, metadata: body.metadata, apiKeyId: principal.keyId,
    })
    audit(request, { action: 'feedback.create', resourceType: 'feedback', resourceId: created.id, workspaceId })
    return { status: 'success', message: 'feedback recorded', feedback_ids: [created.id] }
  })

  app.put<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const workspaceId = feedbackWorkspace(principal)
    const body = parse(updateSchema, request.body)
    const updated = await ctx.store.feedback.update(principal.organizationId, workspaceId, request.params.id, { value: body.value, weight: body.weight, metadata: body.metadata })
    if (!updated) throw notFound('feedback')
    audit(request, { action: 'feedback.update', resourceType: 'feedback', resourceId: updated.id, workspaceId })
    return { status: 'success', message: 'feedback updated', feedback_ids: [updated.id] }
  })
}
