/**
 * Prompts: /v1/prompts. A prompt is a template with immutable versions: creating it writes version
 * 1 and publishes it; `PUT /prompts/{id}` writes a new version when template content changes
 * (with `patch: true`, omitted version fields are copied from the latest version; without it,
 * `string` and `parameters` must be sent together) and changes name, collection and virtual key
 * in place; `PUT …/makeDefault {version}` publishes a version; `PUT …/versions/{id} {label_id}`
 * moves a label (production, staging, custom) onto a version, nothing else of a version changes.
 * Access follows the organisation's prompt settings (prompt-access.ts). Gateways render the
 * published and labelled versions (see the snapshot's prompts); render and completions are
 * data-plane routes.
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { conflict, invalid, notFound } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import type { PromptRecord, PromptVersionContent, PromptVersionRecord } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, pagination, parse, principalOf } from '../http.ts'
import { requirePromptAccess } from './prompt-access.ts'
import { checkTemplate, flagSchema, promptWorkspaces, templateSchema } from './prompt-common.ts'
import { descriptionSchema, generatedSlug, nameSchema, slugSchema, visibleOr404, workspaceRefSchema } from './resource-access.ts'

const parametersSchema = z.record(z.string(), z.unknown())
const modelSchema = z.string().min(1).max(512)
const listSchema = z.array(z.unknown()).max(128)
const metadataSchema = z.record(z.string(), z.unknown())
const virtualKeySchema = z.string().min(1).max(255)

const createSchema = z.strictObject({
  name: nameSchema,
  slug: slugSchema.optional(),
  collection_id: z.string().min(1).max(255),
  workspace_id: workspaceRefSchema.optional(),
  string: templateSchema,
  parameters: parametersSchema,
  virtual_key: virtualKeySchema,
  model: modelSchema.optional(),
  functions: listSchema.optional(),
  tools: listSchema.optional(),
  tool_choice: z.unknown().optional(),
  version_description: descriptionSchema.optional(),
  template_metadata: metadataSchema.optional(),
  is_raw_template: flagSchema.optional(),
})

const updateSchema = z.strictObject({
  patch: z.boolean().optional(),
  name: nameSchema.optional(),
  collection_id: z.string().min(1).max(255).optional(),
  string: templateSchema.optional(),
  parameters: parametersSchema.optional(),
  model: modelSchema.nullable().optional(),
  virtual_key: virtualKeySchema.optional(),
  version_description: descriptionSchema.optional(),
  functions: listSchema.nullable().optional(),
  tools: listSchema.nullable().optional(),
  tool_choice: z.unknown().optional(),
  is_raw_template: flagSchema.optional(),
  prompt_metadata: metadataSchema.nullable().optional(),
  template_metadata: metadataSchema.nullable().optional(),
})

/** The fields of a version; the prompt's other fields change in place. */
const VERSION_FIELDS = ['string', 'parameters', 'model', 'functions', 'tools', 'tool_choice', 'is_raw_template', 'prompt_metadata', 'template_metadata'] as const

const labelSchema = z.strictObject({ label_id: z.string().min(1).max(255).nullable() })
const publishSchema = z.strictObject({ version: z.int().min(1) })
const listQuery = z.object({ workspace_id: workspaceRefSchema.optional(), collection_id: z.string().min(1).max(255).optional(), search: z.string().max(255).optional() }).loose()

type UpdateBody = z.infer<typeof updateSchema>

export function promptView(prompt: PromptRecord, version: PromptVersionRecord): Record<string, unknown> {
  return {
    id: prompt.id,
    slug: prompt.slug,
    name: prompt.name,
    collection_id: prompt.collectionId,
    workspace_id: prompt.workspaceId,
    string: version.template,
    parameters: version.parameters,
    prompt_version: version.version,
    prompt_version_id: version.id,
    prompt_version_status: version.status,
    prompt_version_description: version.description,
    prompt_version_label_id: version.labelId,
    is_default_version: version.id === prompt.defaultVersionId,
    virtual_key: prompt.virtualKey,
    model: version.model,
    functions: version.functions,
    tools: version.tools,
    tool_choice: version.toolChoice ?? null,
    template_metadata: version.templateMetadata,
    is_raw_template: version.isRawTemplate,
    status: prompt.status,
    created_at: prompt.createdAt,
    last_updated_at: prompt.updatedAt,
    object: 'prompt',
  }
}

function versionListView(version: PromptVersionRecord): Record<string, unknown> {
  return {
    id: version.id,
    prompt_id: version.promptId,
    prompt_template: version.template,
    prompt_version: version.version,
    prompt_description: version.description,
    label_id: version.labelId,
    created_at: version.createdAt,
    status: version.status,
    object: 'prompt',
  }
}

/**
 * The content of the version an update writes, or null when it changes no version field.
 * Without `patch`, `string` and `parameters` are required and omitted optional fields are cleared;
 * with it, omitted fields keep the latest version's values.
 */
function nextContent(body: UpdateBody, latest: PromptVersionRecord): PromptVersionContent | null {
  if (!VERSION_FIELDS.some((field) => body[field] !== undefined)) return null
  if (body.patch !== true) {
    for (const field of ['string', 'parameters'] as const) {
      if (body[field] === undefined) throw invalid(field, `${field} is required when a version field changes without "patch": true (send every version field, or set patch to copy the rest from the latest version)`)
    }
  }
  const keep = body.patch === true
  const metadata = body.template_metadata !== undefined ? body.template_metadata : body.prompt_metadata
  return {
    template: body.string ?? latest.template,
    parameters: body.parameters ?? latest.parameters,
    model: body.model !== undefined ? body.model : keep ? latest.model : null,
    functions: body.functions !== undefined ? body.functions : keep ? latest.functions : null,
    tools: body.tools !== undefined ? body.tools : keep ? latest.tools : null,
    toolChoice: body.tool_choice !== undefined ? body.tool_choice : keep ? latest.toolChoice : null,
    templateMetadata: metadata !== undefined ? metadata : keep ? latest.templateMetadata : null,
    isRawTemplate: body.is_raw_template ?? (keep ? latest.isRawTemplate : false),
  }
}

function sameContent(a: PromptVersionContent, b: PromptVersionContent): boolean {
  const canonical = (c: PromptVersionContent): string => JSON.stringify([c.template, c.parameters, c.model, c.functions, c.tools, c.toolChoice ?? null, c.templateMetadata, c.isRawTemplate])
  return canonical(a) === canonical(b)
}

export function promptRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function load(principal: Principal, idOrSlug: string): Promise<PromptRecord> {
    const workspaceId = principal.isOrganisationLevel ? undefined : principal.workspaceId ?? undefined
    return visibleOr404(principal, await ctx.store.prompts.get(principal.organizationId, idOrSlug, workspaceId), 'prompt')
  }

  async function collectionIn(principal: Principal, reference: string, workspaceRef: string | undefined): Promise<{ id: string; workspaceId: string }> {
    const collection = await ctx.store.promptCollections.get(principal.organizationId, reference)
    if (!collection || !visibleOr404Safe(principal, collection.workspaceId)) throw invalid('collection_id', 'collection_id: collection not found')
    if (workspaceRef) {
      const workspace = await ctx.store.workspaces.get(principal.organizationId, workspaceRef)
      if (!workspace || workspace.id !== collection.workspaceId) throw invalid('collection_id', 'collection_id: the collection is not in that workspace')
    }
    return collection
  }

  function visibleOr404Safe(principal: Principal, workspaceId: string): boolean {
    const visible = principal.visibleWorkspaceIds()
    return visible === null || visible.includes(workspaceId)
  }

  /** The prompt's provider must be one the workspace can use: its own, or an organisation-wide one admitting it. */
  async function checkVirtualKey(organizationId: string, workspaceId: string, reference: string): Promise<void> {
    const slug = reference.replace(/^@/, '')
    if (await ctx.store.providers.getBySlug(organizationId, workspaceId, slug)) return
    const shared = await ctx.store.providers.getBySlug(organizationId, null, slug)
    if (shared && (shared.allowAllWorkspaces || shared.allowedWorkspaceIds.includes(workspaceId))) return
    throw invalid('virtual_key', `virtual_key: no provider "${slug}" is available to this workspace`)
  }

  async function latestVersion(promptId: string): Promise<PromptVersionRecord> {
    const [latest] = await ctx.store.prompts.versions(promptId)
    if (!latest) throw notFound('prompt version')
    return latest
  }

  app.post('/', async (request) => {
    const principal = principalOf(request)
    const body = parse(createSchema, request.body)
    const collection = await collectionIn(principal, body.collection_id, body.workspace_id)
    await requirePromptAccess(ctx, principal, collection.workspaceId, 'create')
    checkTemplate(body.string, 'string', body.is_raw_template ?? false)
    await checkVirtualKey(principal.organizationId, collection.workspaceId, body.virtual_key)
    const slug = body.slug ?? generatedSlug('pp', body.name)
    if (await ctx.store.prompts.get(principal.organizationId, slug, collection.workspaceId)) throw conflict(`a prompt "${slug}" already exists in this workspace`, 'slug')
    const { prompt, version } = await ctx.store.transaction((tx) => tx.prompts.create(
      { organizationId: principal.organizationId, workspaceId: collection.workspaceId, collectionId: collection.id, slug, name: body.name, virtualKey: body.virtual_key },
      {
        template: body.string,
        parameters: body.parameters,
        model: body.model ?? null,
        functions: body.functions ?? null,
        tools: body.tools ?? null,
        toolChoice: body.tool_choice ?? null,
        templateMetadata: body.template_metadata ?? null,
        isRawTemplate: body.is_raw_template ?? false,
      },
      body.version_description ?? null,
    ))
    audit(request, { action: 'prompt.create', resourceType: 'prompt', resourceId: prompt.id, workspaceId: prompt.workspaceId, details: { version: 1 } })
    return { id: prompt.id, slug: prompt.slug, version_id: version.id, object: 'prompt' }
  })

  app.get('/', async (request) => {
    const principal = principalOf(request)
    const query = parse(listQuery, request.query)
    const workspaces = await promptWorkspaces(ctx, principal, query.workspace_id, 'list')
    const { page, pageSize } = pagination(request.query)
    const all = await ctx.store.prompts.list(principal.organizationId, { workspaceIds: workspaces, ...(query.collection_id ? { collectionId: query.collection_id } : {}), ...(query.search ? { search: query.search } : {}) })
    const page_ = all.slice(page * pageSize, (page + 1) * pageSize)
    const data = await Promise.all(page_.map(async (prompt) => {
      const published = prompt.defaultVersionId ? await ctx.store.prompts.version(prompt.id, prompt.defaultVersionId) : null
      return {
        id: prompt.id, slug: prompt.slug, name: prompt.name, collection_id: prompt.collectionId, workspace_id: prompt.workspaceId,
        model: published?.model ?? null, status: prompt.status, created_at: prompt.createdAt, last_updated_at: prompt.updatedAt, object: 'prompt',
      }
    }))
    return { object: 'list', total: all.length, data }
  })

  app.get<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const prompt = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, prompt.workspaceId, 'read')
    const version = prompt.defaultVersionId ? await ctx.store.prompts.version(prompt.id, prompt.defaultVersionId) : null
    return promptView(prompt, version ?? await latestVersion(prompt.id))
  })

  app.put<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const prompt = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, prompt.workspaceId, 'update')
    const body = parse(updateSchema, request.body)
    const collection = body.collection_id === undefined ? undefined : await collectionIn(principal, body.collection_id, undefined)
    if (collection && collection.workspaceId !== prompt.workspaceId) throw invalid('collection_id', 'collection_id: the collection is in another workspace')
    if (body.virtual_key !== undefined) await checkVirtualKey(principal.organizationId, prompt.workspaceId, body.virtual_key)
    const result = await ctx.store.transaction(async (tx) => {
      const [latest] = await tx.prompts.versions(prompt.id)
      if (!latest) throw notFound('prompt version')
      const content = nextContent(body, latest)
      // Checked as the new version will read it: `is_raw_template` may come from the latest version.
      if (content !== null) checkTemplate(content.template, 'string', content.isRawTemplate)
      let version = latest
      if (content !== null && !sameContent(content, latest)) version = await tx.prompts.addVersion(prompt.id, content, body.version_description ?? null)
      else if (body.version_description !== undefined) await tx.prompts.describe(latest.id, body.version_description)
      const changes = { ...(body.name ? { name: body.name } : {}), ...(collection ? { collectionId: collection.id } : {}), ...(body.virtual_key ? { virtualKey: body.virtual_key } : {}) }
      if (Object.keys(changes).length > 0) await tx.prompts.update(prompt.id, changes)
      return { version, created: version.id !== latest.id }
    })
    audit(request, { action: 'prompt.update', resourceType: 'prompt', resourceId: prompt.id, workspaceId: prompt.workspaceId, details: { version: result.version.version, new_version: result.created, patch: body.patch === true } })
    return { id: prompt.id, slug: prompt.slug, prompt_version_id: result.version.id }
  })

  app.delete<{ Params: { id: string } }>('/:id', async (request) => {
    const principal = principalOf(request)
    const prompt = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, prompt.workspaceId, 'delete')
    await ctx.store.prompts.delete(principal.organizationId, prompt.id)
    audit(request, { action: 'prompt.delete', resourceType: 'prompt', resourceId: prompt.id, workspaceId: prompt.workspaceId })
    return {}
  })

  app.get<{ Params: { id: string } }>('/:id/versions', async (request) => {
    const principal = principalOf(request)
    const prompt = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, prompt.workspaceId, 'read')
    return (await ctx.store.prompts.versions(prompt.id)).map(versionListView)
  })

  app.get<{ Params: { id: string; versionId: string } }>('/:id/versions/:versionId', async (request) => {
    const principal = principalOf(request)
    const prompt = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, prompt.workspaceId, 'read')
    const version = await ctx.store.prompts.version(prompt.id, request.params.versionId)
    if (!version) throw notFound('prompt version')
    return promptView(prompt, version)
  })

  app.put<{ Params: { id: string; versionId: string } }>('/:id/versions/:versionId', async (request) => {
    const principal = principalOf(request)
    const prompt = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, prompt.workspaceId, 'update')
    const fields = Object.keys((request.body ?? {}) as object).filter((field) => field !== 'label_id')
    if (fields.length > 0) throw invalid(fields[0]!, `versions are immutable: only label_id may change (got ${fields.join(', ')}); write a new version with PUT /prompts/{id}`)
    const body = parse(labelSchema, request.body)
    const version = await ctx.store.prompts.version(prompt.id, request.params.versionId)
    if (!version) throw notFound('prompt version')
    if (body.label_id !== null) {
      const label = await ctx.store.promptLabels.get(principal.organizationId, body.label_id)
      if (!label || (label.workspaceId !== null && label.workspaceId !== prompt.workspaceId)) throw invalid('label_id', 'label_id: label not found')
    }
    await ctx.store.transaction((tx) => tx.prompts.label(prompt.id, version.id, body.label_id))
    audit(request, { action: 'prompt.label', resourceType: 'prompt', resourceId: prompt.id, workspaceId: prompt.workspaceId, details: { version: version.version, label_id: body.label_id } })
    return {}
  })

  app.put<{ Params: { id: string } }>('/:id/makeDefault', async (request) => {
    const principal = principalOf(request)
    const prompt = await load(principal, request.params.id)
    await requirePromptAccess(ctx, principal, prompt.workspaceId, 'publish')
    const body = parse(publishSchema, request.body)
    const version = await ctx.store.prompts.version(prompt.id, String(body.version))
    if (!version) throw invalid('version', `version: prompt has no version ${body.version}`)
    await ctx.store.prompts.publish(prompt.id, version.id)
    audit(request, { action: 'prompt.publish', resourceType: 'prompt', resourceId: prompt.id, workspaceId: prompt.workspaceId, details: { version: version.version } })
    return {}
  })
}
