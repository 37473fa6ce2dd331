/**
 * Prompt labels: /v1/labels. A label names one version of each prompt (`PUT /prompts/{id}/versions/
 * {versionId} {label_id}` moves it); completions may ask for `prompt@label`. The universal labels
 * `production`, `staging` and `development` exist everywhere and cannot be changed. Organisation-wide
 * labels are written by organisation-level principals; workspace labels by whoever may write
 * prompts in that workspace.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { conflict, forbidden, invalid, notFound } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import type { PromptLabelRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, pagination, parse, principalOf } from '../http.ts'
import { requirePromptAccess } from './prompt-access.ts'
import { promptWorkspaces } from './prompt-common.ts'
import { canSee, descriptionSchema, nameSchema, targetWorkspace, workspaceRefSchema } from './resource-access.ts'

const colorSchema = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'color_code must be a #rrggbb colour').nullable()
/** Labels are asked for as `prompt@label`: no "@" or spaces, and not only digits (that is a version number). */
const labelNameSchema = nameSchema.regex(/^[^\s@]+$/, 'a label name may not contain spaces or "@"').refine((name) => !/^[0-9]+$/.test(name), 'a label name may not be only digits (prompt@3 names version 3)')

const createSchema = z.strictObject({
  name: labelNameSchema,
  description: descriptionSchema.optional(),
  color_code: colorSchema.optional(),
  organisation_id: z.string().optional(),
  workspace_id: workspaceRefSchema.optional(),
})
const updateSchema = z.strictObject({ name: labelNameSchema.optional(), description: descriptionSchema.optional(), color_code: colorSchema.optional() })
const listQuery = z.object({ workspace_id: workspaceRefSchema.optional(), search: z.string().max(255).optional() }).loose()

function labelView(label: PromptLabelRecord): Record<string, unknown> {
  return {
    id: label.id, name: label.name, description: label.description, color_code: label.colorCode,
    organisation_id: label.organizationId, workspace_id: label.workspaceId, is_universal: label.isUniversal,
    created_at: label.createdAt, last_updated_at: label.updatedAt, status: label.status,
  }
}

export function promptLabelRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function requireWrite(principal: Principal, workspaceId: string | null, action: 'create' | 'update' | 'delete'): Promise<void> {
    if (workspaceId !== null) return requirePromptAccess(ctx, principal, workspaceId, action)
    if (!principal.isOrganisationLevel || !principal.has(`prompts.${action}`, null)) throw forbidden('only organisation-level credentials may change organisation-wide labels')
  }

  async function load(principal: Principal, id: string): Promise<PromptLabelRecord> {
    const label = await ctx.store.promptLabels.get(principal.organizationId, id)
    if (!label || (label.workspaceId !== null && !canSee(principal, label.workspaceId))) throw notFound('label')
    return label
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    const body = parse(createSchema, request.body)
    const workspaceId = await targetWorkspace(ctx, principal, body.workspace_id)
    await requireWrite(principal, workspaceId, 'create')
    const existing = await ctx.store.promptLabels.list(principal.organizationId, workspaceId === null ? [] : [workspaceId])
    if (existing.some((label) => label.name === body.name && (label.isUniversal || label.workspaceId === workspaceId))) throw conflict(`a label "${body.name}" already exists here`, 'name')
    const label = await ctx.store.promptLabels.create({ organizationId: principal.organizationId, workspaceId, name: body.name, description: body.description ?? null, colorCode: body.color_code ?? null })
    audit(request, { action: 'prompt_label.create', resourceType: 'prompt_label', resourceId: label.id, workspaceId })
    return { id: label.id }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const query = parse(listQuery, request.query)
    const workspaces = await promptWorkspaces(ctx, principal, query.workspace_id, 'list')
    const { page, pageSize } = pagination(request.query)
    const all = await ctx.store.promptLabels.list(principal.organizationId, workspaces, query.search)
    return { object: 'list', total: all.length, data: all.slice(page * pageSize, (page + 1) * pageSize).map(labelView) }
  })

  app.get<{ Params: { id: string } }>('/:id', async (request) => labelView(await load(principalOf(request), request.params.id)))

  app.put<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const label = await load(principal, request.params.id)
    if (label.isUniversal) throw invalid('id', 'universal labels (production, staging, development) cannot be changed')
    await requireWrite(principal, label.workspaceId, 'update')
    const body = parse(updateSchema, request.body)
    const updated = await ctx.store.promptLabels.update(label.id, { ...(body.name ? { name: body.name } : {}), ...(body.description !== undefined ? { description: body.description } : {}), ...(body.color_code !== undefined ? { colorCode: body.color_code } : {}) })
    audit(request, { action: 'prompt_label.update', resourceType: 'prompt_label', resourceId: label.id, workspaceId: label.workspaceId })
    return labelView(updated!)
  })

  app.delete<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const label = await load(principal, request.params.id)
    if (label.isUniversal) throw invalid('id', 'universal labels (production, staging, development) cannot be deleted')
    await requireWrite(principal, label.workspaceId, 'delete')
    await ctx.store.promptLabels.delete(label.id)
    audit(request, { action: 'prompt_label.delete', resourceType: 'prompt_label', resourceId: label.id, workspaceId: label.workspaceId })
    return {}
  })
}
