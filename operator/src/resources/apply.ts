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

export class ResourceError extends Error {
  readonly source: string
  readonly object: string
  readonly field: string
  constructor(source: string, object: string, field: string, message: string) {
    super(`${source}: ${object}: ${field}: ${message}`)
    this.name = 'ResourceError'
    this.source = source
    this.object = object
    this.field = field
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

async function applyWorkspace(tx: Repositories, context: ApplyContext, workspace: Workspace): Promise<void> {
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
  if (!existing) {
    const created = await tx.workspaces.create({ organizationId: context.organizationId, ...fields })
    if (workspace.spec.archived) await tx.workspaces.update(context.organizationId, created.id, { status: 'archived' })
    return
  }
  await tx.workspaces.update(context.organizationId, existing.id, { ...fields, status: workspace.spec.archived ? 'archived' : 'active' })
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
  if (!workspace) throw new ResourceError(item.source, objectLabel(item.resource), 'spec.workspace', `no Workspace named '${reference}'`)
  return workspace.id
}

async function applyProvider(tx: Repositories, context: ApplyContext, declared: ReadonlyMap<string, string>, item: SourcedResource): Promise<void> {
  const provider = item.resource as Provider
  const { spec } = provider
  let credentials: Record<string, string> = {}
  if (spec.secretRef) {
    const value = context.resolveSecret(spec.secretRef)
    if (value === null) {
      throw new ResourceError(item.source, objectLabel(provider), 'spec.secretRef', context.describeMissingSecret(spec.secretRef))
    }
    credentials = credentialsFromSecret(value)
  }
  await tx.providers.upsert({
    organizationId: context.organizationId,
    workspaceId: await workspaceIdFor(tx, context, declared, spec.workspace, item),
    slug: spec.slug ?? provider.metadata.name,
    name: spec.name ?? provider.metadata.name,
    kind: spec.kind,
    baseUrl: spec.baseUrl ?? null,
    credentials,
    options: spec.options ?? {},
    tags: spec.tags ?? {},
    models: spec.models ?? [],
    managedBy: context.managedBy,
  })
}

async function applyConfig(tx: Repositories, context: ApplyContext, declared: ReadonlyMap<string, string>, item: SourcedResource): Promise<void> {
  const config = item.resource as Config
  await tx.configs.upsert({
    organizationId: context.organizationId,
    workspaceId: await workspaceIdFor(tx, context, declared, config.spec.workspace, item),
    slug: config.spec.slug ?? config.metadata.name,
    name: config.spec.name ?? config.metadata.name,
    config: config.spec.config as Record<string, unknown>,
    managedBy: context.managedBy,
  })
}

const APPLY_ORDER: ReadonlyArray<GatehouseResource['kind']> = ['Workspace', 'Provider', 'Config']

/** Applies every resource in dependency order (workspaces before what refers to them) in one transaction. */
export async function applyResources(
  store: { transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> },
  context: ApplyContext,
  items: readonly SourcedResource[],
): Promise<void> {
  for (const item of items) {
    if (!APPLY_ORDER.includes(item.resource.kind)) {
      throw new ResourceError(item.source, objectLabel(item.resource), 'kind', `${item.resource.kind} resources are not applied by this version of the control plane yet`)
    }
  }
  const declared = new Map(
    items.filter((item) => item.resource.kind === 'Workspace').map((item) => [item.resource.metadata.name, workspaceSlug(item.resource as Workspace)]),
  )
  await store.transaction(async (tx) => {
    for (const kind of APPLY_ORDER) {
      for (const item of items) {
        if (item.resource.kind !== kind) continue
        if (kind === 'Workspace') await applyWorkspace(tx, context, item.resource as Workspace)
        else if (kind === 'Provider') await applyProvider(tx, context, declared, item)
        else await applyConfig(tx, context, declared, item)
      }
    }
  })
}
