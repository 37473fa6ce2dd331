/**
 * Applies declared resources (the CRD shapes: from YAML files in embedded mode, from the Kubernetes
 * API in cluster mode) to the admin store. Level-triggered and idempotent: applying the same
 * resources twice changes nothing the second time. Rows it writes are marked `managedBy`, and the
 * admin API refuses to edit them.
 *
 * Each kind is one handler (`kinds/`); this module only orders them and runs them in transactions.
 */
import type { GatehouseResource } from '@gatehouse/crds'
import type { Repositories } from '../store/index.ts'
import { configHandler, configSlug } from './kinds/config.ts'
import { deploymentHandler } from './kinds/deployment.ts'
import { guardrailHandler } from './kinds/guardrail.ts'
import { duplicatePolicies, rateLimitPolicyHandler, usageLimitPolicyHandler } from './kinds/policy.ts'
import { providerHandler } from './kinds/provider.ts'
import { workspaceHandler, workspaceSlug } from './kinds/workspace.ts'
import { objectLabel, ResourceError, type ApplyContext, type DeclaredNames, type ResourceHandler, type SourcedResource } from './resource.ts'

export { credentialsFromSecret } from './kinds/provider.ts'
export { duplicatePolicies } from './kinds/policy.ts'
export {
  objectLabel,
  ResourceError,
  type ApplyContext,
  type DeclaredNames,
  type ResourceErrorReason,
  type SecretKeyReference,
  type SecretResolver,
  type SourcedResource,
} from './resource.ts'

type Kind = GatehouseResource['kind']
type AppliedKind = 'Workspace' | 'Provider' | 'Config' | 'Guardrail' | 'Deployment' | 'RateLimitPolicy' | 'UsageLimitPolicy'

/** The handler of every kind the admin store holds, in apply order: workspaces before what refers to them. */
const HANDLERS: { readonly [K in AppliedKind]: ResourceHandler<K> } = {
  Workspace: workspaceHandler,
  Provider: providerHandler,
  Config: configHandler,
  Guardrail: guardrailHandler,
  Deployment: deploymentHandler,
  RateLimitPolicy: rateLimitPolicyHandler,
  UsageLimitPolicy: usageLimitPolicyHandler,
}

const APPLY_ORDER = Object.keys(HANDLERS) as AppliedKind[]

/** Kinds the admin store can hold; the others are refused with reason Unsupported. */
export const APPLIED_KINDS: ReadonlySet<Kind> = new Set(APPLY_ORDER)

/** The handler of an applied kind (typed loosely: the item's kind picks it, so they always match). */
function handlerOf(kind: Kind): ResourceHandler<Kind> | undefined {
  return (HANDLERS as Partial<Record<Kind, ResourceHandler<Kind>>>)[kind]
}

function requireHandler(item: SourcedResource): ResourceHandler<Kind> {
  const handler = handlerOf(item.resource.kind)
  if (handler) return handler
  throw new ResourceError(item.source, objectLabel(item.resource), 'kind', `${item.resource.kind} resources are not applied by this version of the control plane yet`, 'Unsupported')
}

function assertDistinctPolicies(items: readonly SourcedResource[]): void {
  const [first] = duplicatePolicies(items)
  if (first) throw first
}

/** Refuses kinds the admin store cannot hold, as a list (`gatehouse validate`). */
export function unsupportedKinds(items: readonly SourcedResource[]): ResourceError[] {
  return items.flatMap((item) => {
    try {
      requireHandler(item)
      return []
    } catch (error) {
      return [error as ResourceError]
    }
  })
}

type Transactional = { transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> }

/**
 * Applies every resource in dependency order (workspaces before what refers to them) in one
 * transaction. `then` runs in the same transaction with the ids of the rows written (a file set
 * prunes what it no longer declares there, so an edit lands as one change).
 */
export async function applyResources(
  store: Transactional,
  context: ApplyContext,
  items: readonly SourcedResource[],
  then?: (tx: Repositories, appliedIds: ReadonlySet<string>) => Promise<unknown>,
): Promise<void> {
  for (const item of items) requireHandler(item)
  assertDistinctPolicies(items)
  const named = <K extends Kind>(kind: K, slugOf: (resource: Extract<GatehouseResource, { kind: K }>) => string): Map<string, string> =>
    new Map(items.filter((item) => item.resource.kind === kind).map((item) => [item.resource.metadata.name, slugOf(item.resource as Extract<GatehouseResource, { kind: K }>)]))
  const declared: DeclaredNames = { workspaces: named('Workspace', workspaceSlug), configs: named('Config', configSlug) }
  await store.transaction(async (tx) => {
    const appliedIds = new Set<string>()
    for (const kind of APPLY_ORDER) {
      for (const item of items) {
        if (item.resource.kind === kind) appliedIds.add(await requireHandler(item).apply(tx, context, declared, item))
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
  store: Transactional,
  context: ApplyContext,
  item: SourcedResource,
  workspaces: ReadonlyMap<string, string>,
  configs: ReadonlyMap<string, string> = new Map(),
): Promise<{ adminId: string }> {
  const handler = requireHandler(item)
  const adminId = await store.transaction((tx) => handler.apply(tx, context, { workspaces, configs }, item))
  return { adminId }
}

/**
 * Deletes the admin-store row of a resource, if it exists and this owner manages it (a row someone
 * else owns is left alone). Idempotent: returns false when there was nothing to delete.
 */
export async function deleteResource(
  store: Transactional,
  context: ApplyContext,
  item: SourcedResource,
  workspaces: ReadonlyMap<string, string>,
  adminId: string | null,
): Promise<boolean> {
  const handler = handlerOf(item.resource.kind)
  if (!handler) return false
  return store.transaction(async (tx) => {
    const row = await handler.find(tx, context, item, workspaces, adminId)
    if (row === null || row.managedBy !== context.managedBy) return false
    return handler.delete(tx, context.organizationId, row.id)
  })
}

/** Whether the row recorded for a resource is still there (a cascade or a manual delete can remove it). */
export async function resourceRowExists(store: Repositories, organizationId: string, kind: Kind, adminId: string): Promise<boolean> {
  const handler = handlerOf(kind)
  return handler ? handler.exists(store, organizationId, adminId) : false
}
