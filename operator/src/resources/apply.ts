/**
 * Applies declared resources (the CRD shapes: from YAML files in embedded mode, from the Kubernetes
 * API in cluster mode) to the admin store. Level-triggered and idempotent: applying the same
 * resources twice changes nothing the second time. Rows it writes are marked `managedBy`, and the
 * admin API refuses to edit them.
 */
import { isDeepStrictEqual } from 'node:util'
import type { Config, Deployment, GatehouseResource, Guardrail, Provider, RateLimitPolicy, UsageLimitPolicy, Workspace } from '@gatehouse/crds'
import { z } from 'zod'
import { actionsSchema, checkSchema } from '../admin/routes/guardrail-checks.ts'
import { nextUsageResetAt } from '../identity/limits.ts'
import type { PolicyKind, PolicyRecord, Repositories } from '../store/index.ts'
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

/** The admin API's names for the defaults a Workspace CR declares (guardrails by name = slug). */
function storedDefaults(defaults: Workspace['spec']['defaults']): Record<string, unknown> {
  if (!defaults) return {}
  const { inputGuardrails, outputGuardrails, ...rest } = defaults
  return {
    ...rest,
    ...(inputGuardrails === undefined ? {} : { input_guardrails: inputGuardrails }),
    ...(outputGuardrails === undefined ? {} : { output_guardrails: outputGuardrails }),
  }
}

async function applyWorkspace(tx: Repositories, context: ApplyContext, item: SourcedResource): Promise<string> {
  const workspace = item.resource as Workspace
  const slug = workspaceSlug(workspace)
  const fields = {
    slug,
    name: workspace.spec.name ?? workspace.metadata.name,
    description: workspace.spec.description ?? null,
    defaults: storedDefaults(workspace.spec.defaults),
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
  field = 'spec.workspace',
): Promise<string | null> {
  if (reference === undefined) return null
  const slug = declared.get(reference) ?? reference
  const workspace = await tx.workspaces.get(context.organizationId, slug)
  if (!workspace) throw new ResourceError(item.source, objectLabel(item.resource), field, `no Workspace named '${reference}'`, 'RefNotFound')
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

/** Object names of the declared set (a file set, or one namespace) mapped to the slugs they store under. */
export interface DeclaredNames {
  workspaces: ReadonlyMap<string, string>
  /** Config object name -> slug; a name not declared is taken as the slug itself. */
  configs: ReadonlyMap<string, string>
}

/**
 * Parses a spec fragment with the admin API's own schema (one set of rules for both ways in); a
 * refusal names the field in the resource's terms, e.g. `spec.checks[0].parameters.rule`.
 */
function parseWith<T>(schema: z.ZodType<T>, value: unknown, field: string, item: SourcedResource): T {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]!
  const path = issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')
  throw new ResourceError(item.source, objectLabel(item.resource), `${field}${path}`, issue.message)
}

/** The keys of `wanted` whose values differ from `existing`'s: an unchanged resource writes nothing. */
function changedFields<T extends object>(existing: T, wanted: Partial<T>): Partial<T> {
  return Object.fromEntries(Object.entries(wanted).filter(([key, value]) => !isDeepStrictEqual(existing[key as keyof T], value))) as Partial<T>
}

async function applyDeployment(tx: Repositories, context: ApplyContext, declared: DeclaredNames, item: SourcedResource): Promise<string> {
  const deployment = item.resource as Deployment
  const { spec } = deployment
  const organizationId = context.organizationId
  const config = await tx.configs.get(organizationId, declared.configs.get(spec.config) ?? spec.config)
  if (!config) throw new ResourceError(item.source, objectLabel(deployment), 'spec.config', `no Config named '${spec.config}'`, 'RefNotFound')
  const allowedWorkspaceIds: string[] = []
  for (const [index, reference] of (spec.workspaces ?? []).entries()) {
    allowedWorkspaceIds.push((await workspaceIdFor(tx, context, declared.workspaces, reference, item, `spec.workspaces[${index}]`))!)
  }
  const fields = {
    name: spec.name ?? deployment.metadata.name,
    description: null,
    type: spec.type,
    configId: config.id,
    // As through the admin API: a workspace list narrows the deployment, no list serves every workspace.
    allowAllWorkspaces: allowedWorkspaceIds.length === 0 && (spec.allowAllWorkspaces ?? true),
    allowedWorkspaceIds,
    status: 'active' as const,
    managedBy: context.managedBy,
  }
  const slug = spec.slug ?? deployment.metadata.name
  const existing = await tx.deployments.get(organizationId, slug)
  assertOwnable(context, item, existing)
  if (!existing) return (await tx.deployments.create({ organizationId, slug, ...fields })).id
  const patch = changedFields(existing, fields)
  if (Object.keys(patch).length > 0) await tx.deployments.update(organizationId, existing.id, patch)
  return existing.id
}
const guardrailChecks = z.array(checkSchema)

async function applyGuardrail(tx: Repositories, context: ApplyContext, declared: DeclaredNames, item: SourcedResource): Promise<string> {
  const guardrail = item.resource as Guardrail
  const { spec } = guardrail
  const organizationId = context.organizationId
  // The admin API's catalogue checks and defaults the parameters, so both ways in store the same row.
  const checks = parseWith(guardrailChecks, spec.checks.map((check) => ({
    id: check.id, ...(check.name === undefined ? {} : { name: check.name }), is_enabled: check.enabled, parameters: check.parameters ?? {},
  })), 'spec.checks', item)
  const actions = parseWith(actionsSchema, {
    deny: spec.actions.deny,
    async: spec.actions.async,
    ...(spec.actions.onSuccess === undefined ? {} : { on_success: spec.actions.onSuccess }),
    ...(spec.actions.onFail === undefined ? {} : { on_fail: spec.actions.onFail }),
    ...(spec.actions.holdBack === undefined ? {} : { hold_back: { mode: spec.actions.holdBack.mode, ...(spec.actions.holdBack.windowChars === undefined ? {} : { window_chars: spec.actions.holdBack.windowChars }) } }),
  }, 'spec.actions', item)
  const workspaceId = await workspaceIdFor(tx, context, declared.workspaces, spec.workspace, item)
  const slug = spec.slug ?? guardrail.metadata.name
  let existing = await tx.guardrails.get(organizationId, slug)
  assertOwnable(context, item, existing)
  // A guardrail does not move between workspaces (its permissions follow the workspace): replace it.
  if (existing && existing.workspaceId !== workspaceId) {
    await tx.guardrails.delete(organizationId, existing.id)
    existing = null
  }
  const fields = { name: spec.name ?? guardrail.metadata.name, checks, actions, hooks: [...spec.hooks], status: 'active' as const, managedBy: context.managedBy }
  if (!existing) return (await tx.guardrails.create({ organizationId, workspaceId, slug, ...fields })).id
  // Only what changed: a rewrite of unchanged checks would mint a new version.
  const patch = changedFields(existing, fields)
  if (Object.keys(patch).length > 0) await tx.guardrails.update(organizationId, existing.id, patch)
  return existing.id
}

type PolicyResource = RateLimitPolicy | UsageLimitPolicy

const policyKindOf = (resource: PolicyResource): PolicyKind => (resource.kind === 'RateLimitPolicy' ? 'rate_limits' : 'usage_limits')

/** Policies have no slug: a declared policy is identified by its kind, workspace and name. */
const policyName = (resource: PolicyResource): string => resource.spec.name ?? resource.metadata.name

async function findPolicy(tx: Repositories, context: ApplyContext, resource: PolicyResource, workspaceId: string | null): Promise<PolicyRecord | null> {
  const { data } = await tx.policies.list(context.organizationId, policyKindOf(resource), { workspaceIds: workspaceId === null ? null : [workspaceId] }, 0, 10_000)
  const named = data.filter((policy) => policy.name === policyName(resource))
  return named.find((policy) => policy.managedBy === context.managedBy) ?? named[0] ?? null
}

/** The policy columns a resource sets; the other kind's columns are null. */
function policyFields(resource: PolicyResource): Omit<PolicyRecord, 'id' | 'organizationId' | 'workspaceId' | 'kind' | 'nextUsageResetAt' | 'lastResetAt' | 'managedBy' | 'createdAt' | 'updatedAt'> {
  const { shadowMode, failureMode } = resource.spec
  const common = {
    name: policyName(resource), conditions: resource.spec.conditions, groupBy: resource.spec.groupBy, status: 'active' as const,
    shadow: shadowMode ?? false, failureMode: failureMode === undefined ? null : failureMode === 'FailOpen' ? 'open' as const : 'closed' as const,
  }
  if (resource.kind === 'RateLimitPolicy') {
    const { spec } = resource
    return { ...common, type: spec.type, unit: spec.unit, value: spec.value, creditLimit: null, alertThreshold: null, periodicReset: null, periodicResetDays: null }
  }
  const { spec } = resource
  return {
    ...common, type: spec.type, unit: null, value: null, creditLimit: spec.creditLimit, alertThreshold: spec.alertThreshold ?? null,
    periodicReset: spec.periodicReset ?? null, periodicResetDays: spec.periodicResetDays ?? null,
  }
}

async function applyPolicy(tx: Repositories, context: ApplyContext, declared: DeclaredNames, item: SourcedResource): Promise<string> {
  const resource = item.resource as PolicyResource
  const organizationId = context.organizationId
  const workspaceId = await workspaceIdFor(tx, context, declared.workspaces, resource.spec.workspace, item)
  const existing = await findPolicy(tx, context, resource, workspaceId)
  assertOwnable(context, item, existing)
  const fields = { ...policyFields(resource), managedBy: context.managedBy }
  const nextReset = (): string | null => (fields.creditLimit === null ? null : nextUsageResetAt({
    credit_limit: fields.creditLimit, type: 'cost', periodic_reset: fields.periodicReset, periodic_reset_days: fields.periodicResetDays,
  }, new Date()))
  if (!existing) {
    return (await tx.policies.create({ organizationId, workspaceId, kind: policyKindOf(resource), ...fields, nextUsageResetAt: nextReset() })).id
  }
  const patch = changedFields(existing, fields)
  if (Object.keys(patch).length === 0) return existing.id
  // The next reset moves only when the reset schedule does (as on an admin API update).
  const resetChanged = 'periodicReset' in patch || 'periodicResetDays' in patch
  await tx.policies.update(organizationId, existing.id, { ...patch, ...(resetChanged ? { nextUsageResetAt: nextReset() } : {}) })
  return existing.id
}

const APPLY_ORDER: ReadonlyArray<GatehouseResource['kind']> = ['Workspace', 'Provider', 'Config', 'Guardrail', 'Deployment', 'RateLimitPolicy', 'UsageLimitPolicy']

/** Kinds the admin store can hold; the others are refused with reason Unsupported. */
export const APPLIED_KINDS: ReadonlySet<GatehouseResource['kind']> = new Set(APPLY_ORDER)

function assertApplied(item: SourcedResource): void {
  if (APPLIED_KINDS.has(item.resource.kind)) return
  throw new ResourceError(item.source, objectLabel(item.resource), 'kind', `${item.resource.kind} resources are not applied by this version of the control plane yet`, 'Unsupported')
}

/** Writes one resource; returns the id of its admin-store row. */
function applyOne(tx: Repositories, context: ApplyContext, declared: DeclaredNames, item: SourcedResource): Promise<string> {
  switch (item.resource.kind) {
    case 'Workspace': return applyWorkspace(tx, context, item)
    case 'Provider': return applyProvider(tx, context, declared.workspaces, item)
    case 'Config': return applyConfig(tx, context, declared.workspaces, item)
    case 'Guardrail': return applyGuardrail(tx, context, declared, item)
    case 'Deployment': return applyDeployment(tx, context, declared, item)
    case 'RateLimitPolicy':
    case 'UsageLimitPolicy': return applyPolicy(tx, context, declared, item)
  }
}

/** Two policies with one identity (kind, workspace, name) would overwrite each other on every apply. */
export function duplicatePolicies(items: readonly SourcedResource[]): ResourceError[] {
  const seen = new Map<string, SourcedResource>()
  const problems: ResourceError[] = []
  for (const item of items) {
    if (item.resource.kind !== 'RateLimitPolicy' && item.resource.kind !== 'UsageLimitPolicy') continue
    const key = JSON.stringify([item.resource.kind, item.resource.spec.workspace ?? null, policyName(item.resource)])
    const first = seen.get(key)
    if (first) {
      problems.push(new ResourceError(item.source, objectLabel(item.resource), 'spec.name',
        `${objectLabel(first.resource)} (${first.source}) has the same name in the same workspace; a policy is identified by its name, so give each its own`))
    } else {
      seen.set(key, item)
    }
  }
  return problems
}

function assertDistinctPolicies(items: readonly SourcedResource[]): void {
  const [first] = duplicatePolicies(items)
  if (first) throw first
}

/** Refuses kinds the admin store cannot hold, as a list (`gatehouse validate`). */
export function unsupportedKinds(items: readonly SourcedResource[]): ResourceError[] {
  return items.flatMap((item) => {
    try {
      assertApplied(item)
      return []
    } catch (error) {
      return [error as ResourceError]
    }
  })
}

const configSlug = (config: Config): string => config.spec.slug ?? config.metadata.name

/**
 * Applies every resource in dependency order (workspaces before what refers to them) in one
 * transaction. `then` runs in the same transaction with the ids of the rows written (a file set
 * prunes what it no longer declares there, so an edit lands as one change).
 */
export async function applyResources(
  store: { transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> },
  context: ApplyContext,
  items: readonly SourcedResource[],
  then?: (tx: Repositories, appliedIds: ReadonlySet<string>) => Promise<unknown>,
): Promise<void> {
  for (const item of items) assertApplied(item)
  assertDistinctPolicies(items)
  const named = <K extends GatehouseResource['kind']>(kind: K, slugOf: (resource: Extract<GatehouseResource, { kind: K }>) => string): Map<string, string> =>
    new Map(items.filter((item) => item.resource.kind === kind).map((item) => [item.resource.metadata.name, slugOf(item.resource as Extract<GatehouseResource, { kind: K }>)]))
  const declared: DeclaredNames = { workspaces: named('Workspace', workspaceSlug), configs: named('Config', configSlug) }
  await store.transaction(async (tx) => {
    const appliedIds = new Set<string>()
    for (const kind of APPLY_ORDER) {
      for (const item of items) {
        if (item.resource.kind === kind) appliedIds.add(await applyOne(tx, context, declared, item))
      }
    }
    if (then) await then(tx, appliedIds)
  })
}

/**
 * Applies one resource on its own (the operator reconciles objects one at a time). `workspaces`
 * maps the Workspace object names visible to it (same namespace) to their slugs; `configs` the
 * Config names to theirs (a Config named but not listed is looked up by that name as its slug).
 */
export async function applyResource(
  store: { transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> },
  context: ApplyContext,
  item: SourcedResource,
  workspaces: ReadonlyMap<string, string>,
  configs: ReadonlyMap<string, string> = new Map(),
): Promise<{ adminId: string }> {
  assertApplied(item)
  const adminId = await store.transaction((tx) => applyOne(tx, context, { workspaces, configs }, item))
  return { adminId }
}

/**
 * The id of the workspace a reference names; null for none (organisation-wide), undefined when
 * it is gone (and the rows in it went with it: ON DELETE CASCADE).
 */
async function referencedWorkspaceId(tx: Repositories, organizationId: string, workspaces: ReadonlyMap<string, string>, reference: string | undefined): Promise<string | null | undefined> {
  if (reference === undefined) return null
  return (await tx.workspaces.get(organizationId, workspaces.get(reference) ?? reference))?.id
}

/** The row a resource maps to: by its recorded id when known, else by its identity (slug, or a policy's name). */
async function findRow(
  tx: Repositories,
  context: ApplyContext,
  item: SourcedResource,
  workspaces: ReadonlyMap<string, string>,
  adminId: string | null,
): Promise<{ id: string; managedBy: ManagedBy } | null> {
  const { resource } = item
  const organizationId = context.organizationId
  switch (resource.kind) {
    case 'Workspace': return tx.workspaces.get(organizationId, adminId ?? workspaceSlug(resource))
    case 'Deployment': return tx.deployments.get(organizationId, adminId ?? resource.spec.slug ?? resource.metadata.name)
    case 'Guardrail': return tx.guardrails.get(organizationId, adminId ?? resource.spec.slug ?? resource.metadata.name)
    default: break
  }
  if (adminId !== null) {
    if (resource.kind === 'Provider') return tx.providers.get(organizationId, adminId)
    if (resource.kind === 'Config') return tx.configs.get(organizationId, adminId)
    return tx.policies.get(organizationId, policyKindOf(resource), adminId)
  }
  const workspaceId = await referencedWorkspaceId(tx, organizationId, workspaces, resource.spec.workspace)
  if (workspaceId === undefined) return null
  if (resource.kind === 'Provider') return tx.providers.getBySlug(organizationId, workspaceId, resource.spec.slug ?? resource.metadata.name)
  if (resource.kind === 'Config') return tx.configs.get(organizationId, configSlug(resource), workspaceId)
  return findPolicy(tx, context, resource, workspaceId)
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
    switch (item.resource.kind) {
      case 'Workspace': return tx.workspaces.delete(organizationId, row.id)
      case 'Provider': return tx.providers.delete(organizationId, row.id)
      case 'Config': return tx.configs.delete(organizationId, row.id)
      case 'Deployment': return tx.deployments.delete(organizationId, row.id)
      case 'Guardrail': return tx.guardrails.delete(organizationId, row.id)
      case 'RateLimitPolicy':
      case 'UsageLimitPolicy': return tx.policies.delete(organizationId, row.id)
    }
  })
}

/** Whether the row recorded for a resource is still there (a cascade or a manual delete can remove it). */
export async function resourceRowExists(store: Repositories, organizationId: string, kind: GatehouseResource['kind'], adminId: string): Promise<boolean> {
  switch (kind) {
    case 'Workspace': return (await store.workspaces.get(organizationId, adminId))?.id === adminId
    case 'Provider': return (await store.providers.get(organizationId, adminId)) !== null
    case 'Config': return (await store.configs.get(organizationId, adminId))?.id === adminId
    case 'Deployment': return (await store.deployments.get(organizationId, adminId))?.id === adminId
    case 'Guardrail': return (await store.guardrails.get(organizationId, adminId))?.id === adminId
    case 'RateLimitPolicy': return (await store.policies.get(organizationId, 'rate_limits', adminId)) !== null
    case 'UsageLimitPolicy': return (await store.policies.get(organizationId, 'usage_limits', adminId)) !== null
  }
}
