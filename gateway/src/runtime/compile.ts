/**
 * Compiles a validated snapshot into the lookup structures the request path reads: keys by hash,
 * providers by slug per workspace, each provider with its adapter and connection pool. Built once
 * per snapshot so a request does map lookups and nothing else.
 */
import type { Dispatcher } from 'undici'
import { adapterFor } from '../providers/registry.ts'
import { compileSavedConfig, configVisibleTo, type CompiledConfig } from '../routing/select.ts'
import type { GatewaySnapshot, ProviderNetwork, SnapshotApiKey, SnapshotProvider, SnapshotWorkspace } from '../snapshot/schema.ts'
import type { SnapshotLimit, SnapshotPrice } from '../snapshot/policies.ts'
import { secretBag } from '../core/secret.ts'
import { ssrfConnector } from '../upstream/ssrf.ts'
import { createPool, defaultTimeouts } from '../upstream/transport.ts'
import type { CompiledProvider, ProviderLookup } from '../routing/target.ts'
export type { CompiledProvider } from '../routing/target.ts'

export interface CompiledKey {
  readonly record: SnapshotApiKey
  readonly expiresAtMs: number | null
  /** The config a request with this key runs under when it names none: the key's, else its workspace's. */
  readonly defaultConfig: CompiledConfig | null
}

export interface RuntimeConfig extends ProviderLookup {
  readonly generation: number
  readonly hash: string
  readonly organizationId: string
  readonly keysByHash: ReadonlyMap<string, CompiledKey>
  readonly workspaces: ReadonlyMap<string, SnapshotWorkspace>
  /** The config a workspace's callers without a key of their own (JWTs) run under: the workspace's, else the deployment's. */
  readonly workspaceDefaults: ReadonlyMap<string, CompiledConfig | null>
  /** Providers by workspace (or organisation-wide) slug and by id. */
  readonly providers: ProviderIndex
  /** Saved configs, validated and planned: `id:${id}` and `slug:${workspaceId or *}/${slug}`. */
  readonly configs: ReadonlyMap<string, CompiledConfig>
  /** Every pool this runtime owns, closed when a newer runtime replaces it. */
  readonly dispatchers: ReadonlySet<Dispatcher>
  /** The snapshot it was compiled from: feature stages compile their part of it once per runtime. */
  readonly snapshot: GatewaySnapshot
  /** Rate limits and budgets, as the snapshot carries them (the limits stage indexes them). */
  readonly limits: readonly SnapshotLimit[]
  /** Price overrides on top of the shipped table (pricing/price.ts indexes them once). */
  readonly prices: readonly SnapshotPrice[]
  /** The deployment this snapshot was compiled for, when one. */
  readonly deploymentId: string | null
  /** User ids and identity-provider subjects of deactivated users (their JWTs are refused). */
  readonly revokedSubjects: ReadonlySet<string>
}

export interface CompileProblem {
  path: string
  message: string
}

/** Reuses pools of an earlier runtime for unchanged origins, so a snapshot swap keeps warm connections. */
export type PoolSource = (origin: string, network: ProviderNetwork) => Dispatcher

/**
 * A provider's pool: every connection goes through the SSRF check (a tenant may have written the
 * base URL), reaching private networks only where the snapshot allows it for that provider.
 */
export function createProviderPool(origin: string, network: ProviderNetwork): Dispatcher {
  const connect = ssrfConnector({ allowPrivateNetwork: network === 'private-allowed', connectTimeoutMs: defaultTimeouts.connectMs })
  return createPool(origin, defaultTimeouts, undefined, connect)
}

export function compileRuntime(
  snapshot: GatewaySnapshot,
  hash: string,
  poolFor: PoolSource = createProviderPool,
): { ok: true; runtime: RuntimeConfig } | { ok: false; problems: CompileProblem[] } {
  const problems: CompileProblem[] = []
  const dispatchers = new Set<Dispatcher>()

  const configs = compileConfigs(snapshot, problems)
  const workspaces = new Map(snapshot.workspaces.map((workspace) => [workspace.id, workspace]))
  const defaultConfig = (configId: string | null, workspaceId: string | null, path: string): CompiledConfig | null => {
    if (configId === null) return null
    const config = configs.get(`id:${configId}`)
    if (!config || !configVisibleTo(config.record, workspaceId)) {
      problems.push({ path, message: `no config '${configId}' is available to workspace '${workspaceId ?? '(organisation)'}'` })
      return null
    }
    return config
  }
  const workspaceDefaults = new Map<string, CompiledConfig | null>()
  snapshot.workspaces.forEach((workspace, index) => {
    workspaceDefaults.set(workspace.id, defaultConfig(workspace.defaultConfigId, workspace.id, `workspaces.${index}.defaultConfigId`))
  })

  // A gateway deployment's config is the last default: after the request's, the key's and the workspace's.
  const deploymentConfigId = snapshot.deployment?.configId ?? null
  const deploymentConfig = deploymentConfigId === null ? null : (configs.get(`id:${deploymentConfigId}`) ?? null)
  if (deploymentConfigId !== null && deploymentConfig === null) {
    problems.push({ path: 'deployment.configId', message: `no config '${deploymentConfigId}' is in the snapshot` })
  }
  const deploymentDefault = (workspaceId: string | null): CompiledConfig | null =>
    deploymentConfig !== null && configVisibleTo(deploymentConfig.record, workspaceId) ? deploymentConfig : null

  const keysByHash = new Map<string, CompiledKey>()
  snapshot.apiKeys.forEach((key, index) => {
    if (key.status !== 'active') return
    const ownDefault = defaultConfig(key.defaultConfigId, key.workspaceId, `apiKeys.${index}.defaultConfigId`)
    const workspaceDefault = key.workspaceId === null ? null : (workspaceDefaults.get(key.workspaceId) ?? null)
    keysByHash.set(key.hash, {
      record: key,
      expiresAtMs: key.expiresAt === null ? null : Date.parse(key.expiresAt),
      defaultConfig: ownDefault ?? workspaceDefault ?? deploymentDefault(key.workspaceId),
    })
  })

  const providers = new ProviderIndex()
  snapshot.providers.forEach((record, index) => {
    const adapter = adapterFor(record.kind)
    if (!adapter) {
      problems.push({ path: `providers.${index}.kind`, message: `unknown provider kind '${record.kind}'` })
      return
    }
    let base: string | null
    try {
      // Providers addressed by their options (Azure resource, Vertex location, Bedrock region) derive a default.
      base = record.baseUrl ?? adapter.baseUrlFor?.(record.options) ?? adapter.defaultBaseUrl
    } catch (error) {
      problems.push({ path: `providers.${index}.options`, message: error instanceof Error ? error.message : String(error) })
      return
    }
    if (!base) {
      problems.push({ path: `providers.${index}.baseUrl`, message: `provider kind '${record.kind}' has no default address; set baseUrl` })
      return
    }
    const baseUrl = new URL(base)
    const dispatcher = poolFor(baseUrl.origin, record.network)
    dispatchers.add(dispatcher)
    const compiled: CompiledProvider = {
      record,
      adapter,
      endpoint: {
        baseUrl,
        auth: adapter.auth,
        credentials: secretBag(record.credentials),
        options: record.options,
        timeouts: defaultTimeouts,
        dispatcher,
        allowPrivateNetwork: record.network === 'private-allowed',
      },
    }
    if (providers.slugged(record.workspaceId, record.slug)) problems.push({ path: `providers.${index}.slug`, message: `duplicate provider slug '${record.slug}'` })
    providers.add(compiled)
  })

  if (problems.length > 0) return { ok: false, problems }
  return {
    ok: true,
    runtime: {
      findProvider(workspaceId, slugOrId) {
        return providers.find(workspaceId, slugOrId)
      },
      generation: snapshot.generation,
      hash,
      organizationId: snapshot.organizationId,
      keysByHash,
      workspaces,
      workspaceDefaults: new Map(snapshot.workspaces.map((workspace) => [workspace.id, workspaceDefaults.get(workspace.id) ?? deploymentDefault(workspace.id)])),
      providers,
      configs,
      dispatchers,
      snapshot,
      limits: snapshot.limits,
      prices: snapshot.prices,
      deploymentId: snapshot.deployment?.id ?? null,
      revokedSubjects: new Set(snapshot.revokedSubjects),
    },
  }
}

/** Validates every saved config; a bad one fails the snapshot with the path of the bad field. */
function compileConfigs(snapshot: GatewaySnapshot, problems: CompileProblem[]): Map<string, CompiledConfig> {
  const configs = new Map<string, CompiledConfig>()
  snapshot.configs.forEach((record, index) => {
    const compiled = compileSavedConfig(record)
    if (!compiled.ok) {
      for (const issue of compiled.issues) problems.push({ path: ['configs', index, 'config', ...issue.path].join('.'), message: issue.message })
      return
    }
    const slugKey = `slug:${record.workspaceId ?? '*'}/${record.slug}`
    if (configs.has(slugKey)) problems.push({ path: `configs.${index}.slug`, message: `duplicate config slug '${record.slug}'` })
    configs.set(slugKey, compiled.config)
    configs.set(`id:${record.id}`, compiled.config)
  })
  return configs
}

/** May a workspace use this provider? Workspace providers are private; organisation ones follow their allowlist. */
export function providerVisibleTo(provider: SnapshotProvider, workspaceId: string | null): boolean {
  if (provider.status !== 'active') return false
  if (provider.workspaceId !== null) return provider.workspaceId === workspaceId
  return provider.allowAllWorkspaces || (workspaceId !== null && provider.allowedWorkspaceIds.includes(workspaceId))
}

/** The scope of providers every workspace may be allowed (a workspace's scope is its id). */
const ORGANISATION_SCOPE = '*'

/**
 * A runtime's providers by scope (a workspace id, or `*` for the organisation's) then slug, and by
 * id: every request looks one up, and composite keys built per request (`${workspaceId}/${slug}`,
 * `id:${id}`) had to be flattened and hashed each time (0.6 % of the gateway's CPU profile under load).
 */
export class ProviderIndex {
  readonly #bySlug = new Map<string, Map<string, CompiledProvider>>()
  readonly #byId = new Map<string, CompiledProvider>()

  add(provider: CompiledProvider): void {
    const { workspaceId, slug, id } = provider.record
    const scope = workspaceId ?? ORGANISATION_SCOPE
    let slugs = this.#bySlug.get(scope)
    if (!slugs) this.#bySlug.set(scope, (slugs = new Map()))
    slugs.set(slug, provider)
    this.#byId.set(id, provider)
  }

  /** The provider with this slug in a workspace (null: the organisation's), whoever may see it. */
  slugged(workspaceId: string | null, slug: string): CompiledProvider | undefined {
    return this.#bySlug.get(workspaceId ?? ORGANISATION_SCOPE)?.get(slug)
  }

  byId(id: string): CompiledProvider | undefined {
    return this.#byId.get(id)
  }

  /** Every provider, once. */
  all(): IterableIterator<CompiledProvider> {
    return this.#byId.values()
  }

  /** By slug (workspace first, then organisation-wide) or id, as the workspace may see it. */
  find(workspaceId: string | null, slugOrId: string): CompiledProvider | undefined {
    const candidate = (workspaceId !== null ? this.slugged(workspaceId, slugOrId) : undefined) ?? this.slugged(null, slugOrId) ?? this.#byId.get(slugOrId)
    return candidate && providerVisibleTo(candidate.record, workspaceId) ? candidate : undefined
  }
}
