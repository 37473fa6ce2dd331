/**
 * What every kind's handler shares: the resource as declared (with where it came from), the
 * context it is applied in, and the error that refuses it with a field and a condition reason.
 */
import { isDeepStrictEqual } from 'node:util'
import type { GatehouseResource } from '@gatehouse/crds'
import type { z } from 'zod'
import type { Repositories } from '../store/index.ts'
import type { ManagedBy } from '../store/repos/workspaces.ts'

export interface SecretKeyReference {
  name: string
  key: string
}

/** Where a resource came from, for messages: a file path or `namespace/name`. */
export interface SourcedResource<Resource extends GatehouseResource = GatehouseResource> {
  resource: Resource
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
    // Empty parts (a problem of the whole file or object) are left out rather than repeated.
    super([source, object, field, message].filter((part) => part !== '').join(': '))
    this.name = 'ResourceError'
    this.source = source
    this.object = object
    this.field = field
    this.reason = reason
    this.detail = field === '' ? message : `${field}: ${message}`
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

/** Object names of the declared set (a file set, or one namespace) mapped to the slugs they store under. */
export interface DeclaredNames {
  workspaces: ReadonlyMap<string, string>
  /** Config object name -> slug; a name not declared is taken as the slug itself. */
  configs: ReadonlyMap<string, string>
}

/** The admin-store row a resource maps to, as far as ownership is concerned. */
export interface OwnedRow {
  id: string
  managedBy: ManagedBy
}

/**
 * One kind's part of applying resources: how it is written, found again and removed. The apply
 * step composes these in dependency order; nothing outside a handler knows a kind's tables.
 */
export interface ResourceHandler<Kind extends GatehouseResource['kind']> {
  /** Writes the resource; returns the id of its admin-store row. */
  apply(tx: Repositories, context: ApplyContext, declared: DeclaredNames, item: SourcedResource<Extract<GatehouseResource, { kind: Kind }>>): Promise<string>
  /** The row by its recorded id when known, else by its identity (slug, or a policy's name); null when gone. */
  find(
    tx: Repositories,
    context: ApplyContext,
    item: SourcedResource<Extract<GatehouseResource, { kind: Kind }>>,
    workspaces: ReadonlyMap<string, string>,
    adminId: string | null,
  ): Promise<OwnedRow | null>
  delete(tx: Repositories, organizationId: string, id: string): Promise<boolean>
  /** Whether the row recorded for a resource is still there (a cascade or a manual delete can remove it). */
  exists(store: Repositories, organizationId: string, adminId: string): Promise<boolean>
}

export function objectLabel(resource: GatehouseResource): string {
  return `${resource.kind}/${resource.metadata.name}`
}

/** Refuses to write over a row that another owner manages (or, unless adopting, nobody does). */
export function assertOwnable(context: ApplyContext, item: SourcedResource, existing: { managedBy: ManagedBy } | null): void {
  if (existing === null || existing.managedBy === context.managedBy) return
  if (existing.managedBy === null && context.adoptUnmanaged !== false) return
  const owner = existing.managedBy === null ? 'through the admin API' : `from ${existing.managedBy === 'file' ? 'a resources file' : 'Kubernetes'}`
  throw new ResourceError(item.source, objectLabel(item.resource), 'metadata.name', `a ${item.resource.kind} with this slug already exists, created ${owner}; remove it or choose another slug`, 'Conflict')
}

/** The id of the workspace a resource refers to; null for none (organisation-wide). Refuses a dangling reference. */
export async function workspaceIdFor(
  tx: Repositories,
  context: ApplyContext,
  declared: ReadonlyMap<string, string>,
  reference: string | undefined,
  item: SourcedResource,
  field = 'spec.workspace',
): Promise<string | null> {
  if (reference === undefined) return null
  const slug = declared.get(reference) ?? reference
  const workspace = await tx.workspaces.get(context.organizationId, slug)
  if (!workspace) throw new ResourceError(item.source, objectLabel(item.resource), field, `no Workspace named '${reference}'`, 'RefNotFound')
  return workspace.id
}

/**
 * The id of the workspace a reference names; null for none (organisation-wide), undefined when
 * it is gone (and the rows in it went with it: ON DELETE CASCADE).
 */
export async function referencedWorkspaceId(tx: Repositories, organizationId: string, workspaces: ReadonlyMap<string, string>, reference: string | undefined): Promise<string | null | undefined> {
  if (reference === undefined) return null
  return (await tx.workspaces.get(organizationId, workspaces.get(reference) ?? reference))?.id
}

/**
 * Parses a spec fragment with the admin API's own schema (one set of rules for both ways in); a
 * refusal names the field in the resource's terms, e.g. `spec.checks[0].parameters.rule`.
 */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, field: string, item: SourcedResource): T {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]!
  const path = issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')
  throw new ResourceError(item.source, objectLabel(item.resource), `${field}${path}`, issue.message)
}

/** The keys of `wanted` whose values differ from `existing`'s: an unchanged resource writes nothing. */
export function changedFields<T extends object>(existing: T, wanted: Partial<T>): Partial<T> {
  return Object.fromEntries(Object.entries(wanted).filter(([key, value]) => !isDeepStrictEqual(existing[key as keyof T], value))) as Partial<T>
}
