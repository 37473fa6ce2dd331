/**
 * Applies declared resources (the CRD shapes: from YAML files in embedded mode, from the Kubernetes
 * API in cluster mode) to the admin store. Level-triggered and idempotent: applying the same
 * resources twice changes nothing the second time. Rows it writes are marked `managedBy`, and the
 * admin API refuses to edit them.
 */
import type { Config, GatehouseResource, Provider, Workspace } from '@gatehouse/crds'
import type { Repositories } from '../store/index.ts'
import type { ManagedBy } from '../store/repos/workspaces.ts'

export interface SecretKeyReference {
  name: string
  key: string
}

/** Where a resource came from, for messages: a file path or `namespace/name`. */
export interface SourcedResource {
  resource: GatehouseResource
  source: string
}

/** Why a resource was refused, as a CamelCase reason (the operator's condition reason). */
export type ResourceErrorReason = 'InvalidSpec' | 'RefNotFound' | 'SecretNotFound' | 'Conflict' | 'Unsupported'

export class ResourceError extends Error {
  readonly source: string
  readonly object: string
  readonly field: string
  readonly reason: ResourceErrorReason
  /** The message without the source/object/field prefix (for status conditions). */
  readonly detail: string
  constructor(source: string, object: string, field: string, message: string, reason: ResourceErrorReason = 'InvalidSpec') {
    super(`${source}: ${object}: ${field}: ${message}`)
    this.name = 'ResourceError'
    this.source = source
    this.object = object
    this.field = field
    this.reason = reason
    this.detail = `${field}: ${message}`
  }
}

/** Returns the secret's value, or null when it does not exist. */
export type SecretResolver = (reference: SecretKeyReference) => string | null

export interface ApplyContext {
  organizationId: string
  managedBy: Exclude<ManagedBy, null>
  resolveSecret: SecretResolver
  /** Says where to look when a secret is missing, e.g. which environment variable would do. */
  describeMissingSecret(reference: SecretKeyReference): string
  /**
   * Whether a row created through the admin API (managedBy null) with the same slug is taken over.
   * Files adopt them (the default); the operator refuses with a Conflict instead of silently
   * seizing what someone created by hand.
   */
  adoptUnmanaged?: boolean
}

/** Refuses to write over a row that another owner manages (or, unless adopting, nobody does). */
function assertOwnable(context: ApplyContext, item: SourcedResource, existing: { managedBy: ManagedBy } | null): void {
  if (existing === null || existing.managedBy === context.managedBy) return
  if (existing.managedBy === null && context.adoptUnmanaged !== false) return
  const owner = existing.managedBy === null ? 'through the admin API' : `from ${existing.managedBy === 'file' ? 'a resources file' : 'Kubernetes'}`
  throw new ResourceError(item.source, objectLabel(item.resource), 'metadata.name', `a ${item.resource.kind} with this slug already exists, created ${owner}; remove it or choose another slug`, 'Conflict')
}

export function objectLabel(resource: GatehouseResource): string {
  return `${resource.kind}/${resource.metadata.name}`
}

const workspaceSlug = (workspace: Workspace): string => workspace.spec.slug ?? workspace.metadata.name

/**
 * A provider secret holds the API key, or a JSON object of named credentials (Bedrock's
 * accessKeyId/secretAccessKey, Azure Entra's tenantId/clientId/clientSecret), or a Google
 * service-account key, which is kept whole.
 */
export function credentialsFromSecret(value: string): Record<string, string> {
  const trimmed = value.trim()
  if (!trimmed.startsWith('{')) return { apiKey: trimmed }
  let parsed: unknown
  try {
    parsed = JSON.parse(trimmed)
  } catch {
    return { apiKey: trimmed }
  }
  if (typeof parsed !== 'object' || parsed === null) return { apiKey: trimmed }
  const record = parsed as Record<string, unknown>
  if (record.type === 'service_account') return { serviceAccountJson: trimmed }
  return Object.fromEntries(Object.entries(record).filter((entry): entry is [string, string] => typeof entry[1] === 'string'))
}

async function applyWorkspace(tx: Repositories, context: ApplyContext, item: SourcedResource): Promise<string> {
  const workspace = item.resource as Workspace
  const slug = workspaceSlug(workspace)
  const fields = {
    slug,
    name: workspace.spec.name ?? workspace.metadata.name,
    description: workspace.spec.description ?? null,
    defaults: workspace.spec.defaults ?? {},
    usageLimits: workspace.spec.usageLimits ?? [],
    rateLimits: workspace.spec.rateLimits ?? [],
    managedBy: context.managedBy,
  }
  const existing = await tx.workspaces.get(context.organizationId, slug)
  assertOwnable(context, item, existing)
  if (!existing) {
    const created = await tx.workspaces.create({ organizationId: context.organizationId, ...fields })
    if (workspace.spec.archived) await tx.workspaces.update(context.organizationId, created.id, { status: 'archived' })
    return created.id
  }
  await tx.workspaces.update(context.organizationId, existing.id, { ...fields, status: workspace.spec.archived ? 'archived' : 'active' })
  return existing.id
}

async function workspaceIdFor(
  tx: Repositories,
  context: ApplyContext,
  declared: ReadonlyMap<string, string>,
  reference: string | undefined,
  item: SourcedResource,
): Promise<string | null> {
  if (reference === undefined) return null
  const slug = declared.get(reference) ?? reference
  const workspace = await tx.workspaces.get(context.organizationId, slug)
  if (!workspace) throw new ResourceError(item.source, objectLabel(item.resource), 'spec.workspace', `no Workspace named '${reference}'`, 'RefNotFound')
  return workspace.id
}

async function applyProvider(tx: Repositories, context: ApplyContext, declared: ReadonlyMap<string, string>, item: SourcedResource): Promise<string> {
  const provider = item.resource as Provider
  const { spec } = provider
  let credentials: Record<string, string> = {}
  if (spec.secretRef) {
    const value = context.resolveSecret(spec.secretRef)
    if (value === null) {
      throw new ResourceError(item.source, objectLabel(provider), 'spec.secretRef', context.describeMissingSecret(spec.secretRef), 'SecretNotFound')
    }
    credentials = credentialsFromSecret(value)
  }
  const workspaceId = await workspaceIdFor(tx, context, declared, spec.workspace, item)
  const slug = spec.slug ?? provider.metadata.name
  assertOwnable(context, item, await tx.providers.getBySlug(context.organizationId, workspaceId, slug))
  const record = await tx.providers.upsert({
    organizationId: context.organizationId,
    workspaceId,
    slug,
    name: spec.name ?? provider.metadata.name,
    kind: spec.kind,
    baseUrl: spec.baseUrl ?? null,
    credentials,
    options: spec.options ?? {},
    tags: spec.tags ?? {},
    models: spec.models ?? [],
    managedBy: context.managedBy,
  })
  return record.id
}

async function applyConfig(tx: Repositories, context: ApplyContext, declared: ReadonlyMap<string, string>, item: SourcedResource): Promise<string> {
  const config = item.resource as Config
  const workspaceId = await workspaceIdFor(tx, context, declared, config.spec.workspace, item)
  const slug = config.spec.slug ?? config.metadata.name
  assertOwnable(context, item, await tx.configs.get(context.organizationId, slug, workspaceId))
  const record = await tx.configs.upsert({
    organizationId: context.organizationId,
    workspaceId,
    slug,
    name: config.spec.name ?? config.metadata.name,
    config: config.spec.config as Record<string, unknown>,
    isDefault: config.spec.isDefault ?? false,
    managedBy: context.managedBy,
  })
  return record.id
}

const APPLY_ORDER: ReadonlyArray<GatehouseResource['kind']> = ['Workspace', 'Provider', 'Config']

/** Kinds the admin store can hold; the others are refused with reason Unsupported. */
export const APPLIED_KINDS: ReadonlySet<GatehouseResource['kind']> = new Set(APPLY_ORDER)

function assertApplied(item: SourcedResource): void {
  if (APPLIED_KINDS.has(item.resource.kind)) return
  throw new ResourceError(item.source, objectLabel(item.resource), 'kind', `${item.resource.kind} resources are not applied by this version of the control plane yet`, 'Unsupported')
}

/** Writes one resource; returns the id of its admin-store row. */
function applyOne(tx: Repositories, context: ApplyContext, declared: ReadonlyMap<string, string>, item: SourcedResource): Promise<string> {
  if (item.resource.kind === 'Workspace') return applyWorkspace(tx, context, item)
  if (item.resource.kind === 'Provider') return applyProvider(tx, context, declared, item)
  return applyConfig(tx, context, declared, item)
}

/** Applies every resource in dependency order (workspaces before what refers to them) in one transaction. */
export async function applyResources(
  store: { transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> },
  context: ApplyContext,
  items: readonly SourcedResource[],
): Promise<void> {
  for (const item of items) assertApplied(item)
  const declared = new Map(
    items.filter((item) => item.resource.kind === 'Workspace').map((item) => [item.resource.metadata.name, workspaceSlug(item.resource as Workspace)]),
  )
  await store.transaction(async (tx) => {
    for (const kind of APPLY_ORDER) {
      for (const item of items) {
        if (item.resource.kind === kind) await applyOne(tx, context, declared, item)
      }
    }
  })
}

/**
 * Applies one resource on its own (the operator reconciles objects one at a time). `workspaces`
 * maps the Workspace object names visible to it (same namespace) to their slugs.
 */
export async function applyResource(
  store: { transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> },
  context: ApplyContext,
  item: SourcedResource,
  workspaces: ReadonlyMap<string, string>,
): Promise<{ adminId: string }> {
  assertApplied(item)
  const adminId = await store.transaction((tx) => applyOne(tx, context, workspaces, item))
  return { adminId }
}

/** The row a resource maps to: by its recorded id when known, else by (workspace, slug). */
async function findRow(
  tx: Repositories,
  context: ApplyContext,
  item: SourcedResource,
  workspaces: ReadonlyMap<string, string>,
  adminId: string | null,
): Promise<{ id: string; managedBy: ManagedBy } | null> {
  const { resource } = item
  const organizationId = context.organizationId
  if (resource.kind === 'Workspace') return tx.workspaces.get(organizationId, adminId ?? workspaceSlug(resource))
  if (adminId !== null) {
    return resource.kind === 'Provider' ? tx.providers.get(organizationId, adminId) : tx.configs.get(organizationId, adminId)
  }
  const reference = (resource as Provider | Config).spec.workspace
  let workspaceId: string | null = null
  if (reference !== undefined) {
    const workspace = await tx.workspaces.get(organizationId, workspaces.get(reference) ?? reference)
    // Its workspace is gone, and its rows went with it (ON DELETE CASCADE).
    if (!workspace) return null
    workspaceId = workspace.id
  }
  const slug = (resource as Provider | Config).spec.slug ?? resource.metadata.name
  return resource.kind === 'Provider' ? tx.providers.getBySlug(organizationId, workspaceId, slug) : tx.configs.get(organizationId, slug, workspaceId)
}

/**
 * Deletes the admin-store row of a resource, if it exists and this owner manages it (a row someone
 * else owns is left alone). Idempotent: returns false when there was nothing to delete.
 */
export async function deleteResource(
  store: { transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> },
  context: ApplyContext,
  item: SourcedResource,
  workspaces: ReadonlyMap<string, string>,
  adminId: string | null,
): Promise<boolean> {
  if (!APPLIED_KINDS.has(item.resource.kind)) return false
  return store.transaction(async (tx) => {
    const row = await findRow(tx, context, item, workspaces, adminId)
    if (row === null || row.managedBy !== context.managedBy) return false
    const organizationId = context.organizationId
    if (item.resource.kind === 'Workspace') return tx.workspaces.delete(organizationId, row.id)
    if (item.resource.kind === 'Provider') return tx.providers.delete(organizationId, row.id)
    return tx.configs.delete(organizationId, row.id)
  })
}

/** Whether the row recorded for a resource is still there (a cascade or a manual delete can remove it). */
export async function resourceRowExists(store: Repositories, organizationId: string, kind: GatehouseResource['kind'], adminId: string): Promise<boolean> {
  if (kind === 'Workspace') return (await store.workspaces.get(organizationId, adminId))?.id === adminId
  if (kind === 'Provider') return (await store.providers.get(organizationId, adminId)) !== null
  if (kind === 'Config') return (await store.configs.get(organizationId, adminId))?.id === adminId
  return false
}
