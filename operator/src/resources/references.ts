/**
 * Cross-object checks of a resources file set: every name an object refers to (its workspace, a
 * Deployment's Config, a Provider's Secret, a Config target's provider) must resolve, or the
 * problem is reported before anything is written. Without this a Config naming `@deadx` would
 * start fine and fail on every request that uses it.
 */
import type { Config, GatehouseResource, Provider, Workspace } from '@gatehouse/crds'
import { duplicatePolicies, objectLabel, unsupportedKinds, type ResourceError, type SecretKeyReference, type SourcedResource } from './apply.ts'
import type { FileProblem, ReadFiles } from './files.ts'

/** Names that already exist outside the files (rows created through the admin API), at a start. */
export interface KnownNames {
  workspaces: ReadonlySet<string>
  configs: ReadonlySet<string>
  providers: ReadonlySet<string>
}

export interface ReferenceOptions {
  resolveSecret(reference: SecretKeyReference): string | null
  describeMissingSecret(reference: SecretKeyReference): string
  known?: KnownNames
}

const NONE: KnownNames = { workspaces: new Set(), configs: new Set(), providers: new Set() }

interface ConfigNode {
  provider?: unknown
  virtual_key?: unknown
  targets?: unknown
}

/** Every provider a config's target tree names, with the field that names it. */
function namedProviders(node: ConfigNode, path: string): Array<{ field: string; name: string }> {
  const found: Array<{ field: string; name: string }> = []
  for (const field of ['provider', 'virtual_key'] as const) {
    const value = node[field]
    if (typeof value === 'string') found.push({ field: `${path}.${field}`, name: value.replace(/^@/, '') })
  }
  if (Array.isArray(node.targets)) {
    for (const [index, target] of node.targets.entries()) {
      if (typeof target === 'object' && target !== null) found.push(...namedProviders(target as ConfigNode, `${path}.targets[${index}]`))
    }
  }
  return found
}

const workspaceOf = (resource: GatehouseResource): string | undefined =>
  'workspace' in resource.spec ? (resource.spec as { workspace?: string }).workspace : undefined

export function checkReferences(read: ReadFiles, options: ReferenceOptions): FileProblem[] {
  const known = options.known ?? NONE
  const items = read.resources
  const problems: FileProblem[] = []
  const report = (item: SourcedResource, field: string, message: string): void => {
    problems.push({ file: item.source, ...read.locate(item, field), object: objectLabel(item.resource), field, message })
  }
  const fromError = (error: ResourceError): void => {
    const item = items.find((candidate) => candidate.source === error.source && objectLabel(candidate.resource) === error.object)
    if (item) report(item, error.field, error.detail.slice(error.field.length + 2))
  }
  unsupportedKinds(items).forEach(fromError)
  duplicatePolicies(items).forEach(fromError)

  const ofKind = <K extends GatehouseResource['kind']>(kind: K): Array<SourcedResource & { resource: Extract<GatehouseResource, { kind: K }> }> =>
    items.filter((item) => item.resource.kind === kind) as Array<SourcedResource & { resource: Extract<GatehouseResource, { kind: K }> }>
  // An object may be named by its metadata.name (as in the cluster) or by the slug it stores under.
  const workspaceSlugs = new Map<string, string>()
  for (const { resource } of ofKind('Workspace')) {
    const workspace = resource as Workspace
    workspaceSlugs.set(workspace.metadata.name, workspace.spec.slug ?? workspace.metadata.name)
    workspaceSlugs.set(workspace.spec.slug ?? workspace.metadata.name, workspace.spec.slug ?? workspace.metadata.name)
  }
  const configNames = new Set(ofKind('Config').flatMap(({ resource }) => [resource.metadata.name, (resource as Config).spec.slug ?? resource.metadata.name]))
  const providers = ofKind('Provider').map(({ resource }) => {
    const provider = resource as Provider
    const workspace = provider.spec.workspace
    return { slug: provider.spec.slug ?? provider.metadata.name, workspace: workspace === undefined ? null : workspaceSlugs.get(workspace) ?? workspace }
  })

  const workspaceExists = (reference: string): boolean => workspaceSlugs.has(reference) || known.workspaces.has(reference)
  for (const item of items) {
    const reference = workspaceOf(item.resource)
    if (reference !== undefined && !workspaceExists(reference)) report(item, 'spec.workspace', `no Workspace named '${reference}'`)
  }
  for (const item of ofKind('Provider')) {
    const reference = item.resource.spec.secretRef
    if (reference && options.resolveSecret(reference) === null) report(item, 'spec.secretRef', options.describeMissingSecret(reference))
  }
  for (const item of ofKind('Deployment')) {
    const { spec } = item.resource
    if (!configNames.has(spec.config) && !known.configs.has(spec.config)) report(item, 'spec.config', `no Config named '${spec.config}'`)
    for (const [index, reference] of (spec.workspaces ?? []).entries()) {
      if (!workspaceExists(reference)) report(item, `spec.workspaces[${index}]`, `no Workspace named '${reference}'`)
    }
  }
  for (const item of ofKind('Config')) {
    const reference = item.resource.spec.workspace
    const workspace = reference === undefined ? null : workspaceSlugs.get(reference) ?? reference
    for (const { field, name } of namedProviders(item.resource.spec.config as ConfigNode, 'spec.config')) {
      if (known.providers.has(name)) continue
      const matching = providers.filter((provider) => provider.slug === name)
      // A workspace's config reaches its own providers and the organisation-wide ones.
      const reachable = matching.some((provider) => workspace === null || provider.workspace === null || provider.workspace === workspace)
      if (reachable) continue
      report(item, field, matching.length === 0
        ? `no Provider '@${name}' is declared`
        : `Provider '@${name}' belongs to workspace '${matching[0]!.workspace}', which this Config's workspace '${workspace}' cannot use`)
    }
  }
  return problems
}
