/**
 * Compiles the admin store into a GatewaySnapshot (the gateway's contract, validated with its own
 * `validateSnapshot` before it is returned).
 *
 * API keys: every active key, plus keys that ended (expired/revoked) within the last
 * RECENTLY_ENDED_MS so the gateway can say why a key stopped working. During a rotation transition
 * the previous secret is a second active entry with the SAME key id (usage and limits belong to the
 * key, not to the secret) and `expiresAt` = the end of the transition, so the gateway refuses it
 * on time even before the next snapshot. Entries are therefore unique by `hash`, not by `id`.
 *
 * Providers: a provider onto an integration takes the integration's kind, endpoint, credential,
 * options, model list and workspace access (the provider's own values win where it has them).
 * Credential fields mapped onto secret references are read here (see secrets.ts); a provider
 * whose credential cannot be read, whose integration is archived or that has expired is compiled
 * disabled, so the gateway refuses it clearly instead of calling upstream without a credential.
 *
 * Users: keys of a deactivated user are compiled revoked (active again on reactivation), and
 * `revokedSubjects` lists deactivated users' ids and IdP subjects, plus those of users deleted in
 * the last DELETED_SUBJECTS_MS, so gateways refuse their JWTs too.
 *
 * Deployments: `compileSnapshot(store, { deployment: 'slug' })` compiles the snapshot a gateway of
 * that deployment serves: only the workspaces it is assigned (keys, providers and configs of
 * other workspaces left out), with the deployment's config named in `snapshot.deployment`.
 */
import { providerNetwork, SNAPSHOT_SCHEMA_VERSION, validateSnapshot, type GatewaySnapshot, type GatewaySnapshotInput, type SnapshotApiKey } from '@gatehouse/gateway/snapshot'
import type { Clock } from '../clock.ts'
import { systemClock } from '../clock.ts'
import type { ApiKeyRecord, ConfigRecord, DeploymentRecord, IntegrationRecord, PolicyKind, PolicyRecord, ProviderRecord, SecretReferenceRecord, Store } from '../store/index.ts'
import { compileGuardrailDefaults, compileGuardrails } from './guardrails.ts'
import { compileLimits } from './limits.ts'
import { compilePrompts } from './prompts.ts'
import { compileMcpServers } from './mcp.ts'
import { compileAgentServers } from './agents.ts'
import { effectiveSettings } from '../identity/settings.ts'
import { integrationPrices, overridePrices } from './prices.ts'
import { environmentSecretReader, resolveSecretMappings, type SecretReader } from './secrets.ts'

export const RECENTLY_ENDED_MS = 24 * 3_600_000
/** How long a deleted user's subjects stay refused: longer than any sensible JWT lifetime. */
export const DELETED_SUBJECTS_MS = 30 * 24 * 3_600_000
const PRODUCER = { component: 'gatehouse-operator', version: '0.1.0' }

export class SnapshotCompileError extends Error {
  override name = 'SnapshotCompileError'
  readonly problems: Array<{ path: string; message: string }>

  constructor(problems: Array<{ path: string; message: string }>) {
    super(`compiled snapshot is invalid: ${problems.slice(0, 5).map((p) => `${p.path}: ${p.message}`).join('; ')}`)
    this.problems = problems
  }
}

function earlier(a: string | null, b: string | null): string | null {
  if (a === null) return b
  if (b === null) return a
  return a < b ? a : b
}

/**
 * Resolves a config reference (id or slug) as seen from a workspace: its own config of that slug
 * first, then an organisation-wide one. An unknown reference resolves to null rather than
 * producing a snapshot the gateway would refuse as a whole; requests then name their route.
 */
type ConfigResolver = (reference: unknown, workspaceId: string | null) => string | null

function configResolver(configs: readonly ConfigRecord[]): ConfigResolver {
  const ids = new Set(configs.map((c) => c.id))
  const bySlug = new Map(configs.map((c) => [`${c.workspaceId ?? '*'}/${c.slug}`, c.id]))
  return (reference, workspaceId) => {
    if (typeof reference !== 'string' || reference === '') return null
    if (ids.has(reference)) return reference
    return (workspaceId ? bySlug.get(`${workspaceId}/${reference}`) : undefined) ?? bySlug.get(`*/${reference}`) ?? null
  }
}

export function keyEntries(key: ApiKeyRecord, now: Date, resolveConfig: ConfigResolver, disabledUsers: ReadonlySet<string> = new Set()): SnapshotApiKey[] {
  // The gateway knows active/expired/revoked; an exhausted key is unusable like a revoked one, and
  // so is the key of a deactivated user (active again, unchanged, when the user is reactivated).
  const userDisabled = key.userId !== null && disabledUsers.has(key.userId)
  const status = key.status === 'exhausted' || (userDisabled && key.status === 'active') ? 'revoked' : key.status
  const defaultConfigId = resolveConfig(key.defaults.config_id, key.workspaceId)
  const base = {
    id: key.id,
    type: key.type,
    subtype: key.subtype,
    workspaceId: key.workspaceId,
    userId: key.userId,
    scopes: key.scopes,
    defaultConfigId,
  }
  const entries: SnapshotApiKey[] = [{ ...base, hash: key.keyHash, status, expiresAt: key.expiresAt }]
  if (key.previousKeyHash && key.previousKeyExpiresAt && status === 'active' && new Date(key.previousKeyExpiresAt) > now) {
    entries.push({ ...base, hash: key.previousKeyHash, status: 'active', expiresAt: earlier(key.previousKeyExpiresAt, key.expiresAt) })
  }
  return entries
}

function stringOptions(options: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(options)) {
    if (value === null || value === undefined) continue
    out[name] = typeof value === 'string' ? value : JSON.stringify(value)
  }
  return out
}

export interface CompileOptions {
  generation: number
  clock?: Clock
  /** Slug or id of a deployment: compile the snapshot its gateways serve. */
  deployment?: string
  /** Reads the values behind secret references (default: the control plane's environment). */
  readSecret?: SecretReader
  /** Told about every object compiled in a degraded way (never with secret values). */
  onProblem?: (problem: { path: string; message: string }) => void
}

/** Which workspaces an integration admits: null = all of them. */
function integrationWorkspaces(integration: IntegrationRecord): ReadonlySet<string> | null {
  if (integration.workspaceId !== null) return new Set([integration.workspaceId])
  if (integration.globalWorkspaceAccess.enabled) return null
  return new Set(integration.workspaceAccess.filter((access) => access.enabled).map((access) => access.id))
}

/**
 * An endpoint given as `configurations.custom_host` (the reference's name for an integration's or
 * provider's address); null when absent, a problem when it is not an http(s) URL.
 */
function configuredHost(options: Readonly<Record<string, string>>, problems: string[]): string | null {
  const value = options.custom_host
  if (value === undefined || value === '') return null
  try {
    const url = new URL(value)
    if (url.protocol === 'https:' || url.protocol === 'http:') return url.href
  } catch {
    // reported below
  }
  problems.push('configurations.custom_host is not an http(s) URL')
  return null
}

interface ProviderSources {
  orgId: string
  /** The organisation setting network_settings.allow_private_networks. */
  privateNetworksAllowed: boolean
  now: Date
  integrations: ReadonlyMap<string, IntegrationRecord>
  references: ReadonlyMap<string, SecretReferenceRecord>
  read: SecretReader
  report: (path: string, message: string) => void
}

async function compileProvider(store: Store, sources: ProviderSources, provider: ProviderRecord) {
  const integration = provider.integrationId ? sources.integrations.get(provider.integrationId) ?? null : null
  const path = `providers.${provider.slug}`
  const problems: string[] = []
  let kind = provider.kind
  let baseUrl = provider.baseUrl
  let credentials: Record<string, string> = {}
  let options: Record<string, string> = {}
  let allowAllWorkspaces = provider.allowAllWorkspaces
  let allowedWorkspaceIds = provider.allowedWorkspaceIds
  let models = provider.models
  let disabled = provider.status === 'disabled' || (provider.expiresAt !== null && new Date(provider.expiresAt) <= sources.now)
  const scopeWorkspace = provider.workspaceId ?? integration?.workspaceId ?? null
  if (integration) {
    kind = integration.kind
    baseUrl = provider.baseUrl ?? configuredHost(integration.options, problems) ?? integration.baseUrl
    credentials = await store.integrations.decryptedCredentials(sources.orgId, integration.id)
    options = { ...integration.options }
    const resolved = await resolveSecretMappings(integration.secretMappings, sources.references, scopeWorkspace, sources.read)
    Object.assign(credentials, resolved.credentials)
    Object.assign(options, resolved.options)
    problems.push(...resolved.problems)
    if (integration.status !== 'active') problems.push(`integration ${integration.slug} is archived`)
    const admitted = integrationWorkspaces(integration)
    if (admitted !== null) {
      if (provider.workspaceId !== null) {
        if (!admitted.has(provider.workspaceId)) problems.push(`integration ${integration.slug} is not enabled for this provider's workspace`)
      } else {
        allowedWorkspaceIds = allowAllWorkspaces ? [...admitted] : allowedWorkspaceIds.filter((id) => admitted.has(id))
        allowAllWorkspaces = false
      }
    }
    if (!integration.allowAllModels) {
      const enabled = integration.models.filter((model) => model.enabled).map((model) => model.slug)
      models = models.length === 0 ? enabled : models.filter((model) => enabled.includes(model))
      // An empty list means "any model" to the gateway: a restriction that leaves none must not.
      if (models.length === 0) problems.push(`integration ${integration.slug} enables no model this provider may use`)
    }
  }
  Object.assign(credentials, await store.providers.decryptedCredentials(sources.orgId, provider.id))
  Object.assign(options, stringOptions(provider.options))
  if (provider.baseUrl === null) baseUrl = configuredHost(stringOptions(provider.options), problems) ?? baseUrl
  const own = await resolveSecretMappings(provider.secretMappings, sources.references, scopeWorkspace, sources.read)
  Object.assign(credentials, own.credentials)
  Object.assign(options, own.options)
  problems.push(...own.problems)
  // Any problem (unreadable secret, archived or unshared integration, no model) disables the provider.
  if (problems.length > 0) disabled = true
  for (const problem of problems) sources.report(path, problem)
  return {
    id: provider.id,
    slug: provider.slug,
    name: provider.name,
    kind,
    baseUrl,
    credentials,
    options,
    workspaceId: provider.workspaceId,
    allowAllWorkspaces,
    allowedWorkspaceIds,
    status: disabled ? 'disabled' as const : 'active' as const,
    models,
    integrationId: integration?.id ?? null,
    // Tenant-written addresses stay on public networks unless the organisation decided otherwise.
    network: providerNetwork({
      declaredByOperator: provider.managedBy !== null || (integration?.managedBy ?? null) !== null,
      organisationAllows: sources.privateNetworksAllowed,
      options,
    }),
  }
}

const POLICY_PAGE = 500

/** Every active policy of one kind (paged through; archived ones are never enforced). */
export async function activePolicies(store: Store, orgId: string, kind: PolicyKind): Promise<PolicyRecord[]> {
  const out: PolicyRecord[] = []
  for (let page = 0; ; page++) {
    const { total, data } = await store.policies.list(orgId, kind, { status: 'active' }, page, POLICY_PAGE)
    out.push(...data)
    if (data.length === 0 || out.length >= total) return out
  }
}

/** The workspaces a deployment serves (null: all), or throws when it does not exist. */
function deploymentWorkspaces(deployment: DeploymentRecord | undefined, reference: string): ReadonlySet<string> | null {
  if (!deployment) throw new SnapshotCompileError([{ path: 'deployment', message: `no deployment ${reference}` }])
  return deployment.allowAllWorkspaces ? null : new Set(deployment.allowedWorkspaceIds)
}

export async function compileSnapshot(store: Store, options: CompileOptions): Promise<GatewaySnapshot> {
  const now = (options.clock ?? systemClock)()
  const organization = await store.organizations.first()
  if (!organization) throw new Error('no organisation yet: run ensureOrganization first')
  const orgId = organization.id
  const [allWorkspaces, allKeys, allProviders, configs, integrations, references, deployment, allGuardrails, organisationGuardrails, guardrailExclusions, ratePolicies, usagePolicies, modelPrices] = await Promise.all([
    store.workspaces.listAll(orgId),
    store.apiKeys.forSnapshot(orgId, now, RECENTLY_ENDED_MS),
    store.providers.list(orgId),
    store.configs.list(orgId),
    store.integrations.list(orgId),
    store.secretReferences.list(orgId),
    options.deployment === undefined ? Promise.resolve(null) : store.deployments.get(orgId, options.deployment),
    store.guardrails.listActive(orgId),
    store.organisationGuardrails.get(orgId),
    store.organisationGuardrails.exclusions(orgId),
    activePolicies(store, orgId, 'rate_limits'),
    activePolicies(store, orgId, 'usage_limits'),
    store.modelPrices.current(orgId),
  ])
  const [disabledIdentities, deletedSubjects] = await Promise.all([
    store.users.disabledIdentities(orgId),
    store.users.deletedSubjects(orgId, new Date(now.getTime() - DELETED_SUBJECTS_MS)),
  ])
  const disabledUsers = new Set(disabledIdentities.map((user) => user.id))
  const served = options.deployment === undefined ? null : deploymentWorkspaces(deployment ?? undefined, options.deployment)
  const inScope = (workspaceId: string | null): boolean => workspaceId === null || served === null || served.has(workspaceId)
  const workspaces = allWorkspaces.filter((w) => inScope(w.id))
  const keys = allKeys.filter((k) => inScope(k.workspaceId))
  const providers = allProviders.filter((p) => inScope(p.workspaceId))
  const activeConfigs = configs.filter((c) => c.status === 'active' && inScope(c.workspaceId))
  const resolveConfig = configResolver(activeConfigs)
  const sources: ProviderSources = {
    orgId,
    privateNetworksAllowed: (organization.settings as { network_settings?: { allow_private_networks?: boolean } }).network_settings?.allow_private_networks === true,
    now,
    integrations: new Map(integrations.data.map((i) => [i.id, i])),
    references: new Map(references.data.map((r) => [r.id, r])),
    read: options.readSecret ?? environmentSecretReader(),
    report: (path, message) => options.onProblem?.({ path, message }),
  }
  const guardrails = allGuardrails.filter((g) => inScope(g.workspaceId))
  const prompts = await compilePrompts(store, orgId, inScope)
  const compiledProviders = await Promise.all(providers.map((p) => compileProvider(store, sources, p)))
  if (served !== null) {
    // Organisation-wide providers stay, limited to the workspaces this deployment serves.
    for (const provider of compiledProviders) {
      if (provider.workspaceId !== null) continue
      provider.allowedWorkspaceIds = (provider.allowAllWorkspaces ? [...served] : provider.allowedWorkspaceIds.filter((id) => served.has(id)))
      provider.allowAllWorkspaces = false
    }
  }
  // Integration model pricing first; the Model Pricing overrides win where both name a model.
  const prices = [
    ...integrations.data.flatMap((integration) => integrationPrices(integration, compiledProviders.filter((p) => p.integrationId === integration.id).map((p) => p.id))),
    ...overridePrices(modelPrices.filter((price) => inScope(price.workspaceId))),
  ]
  const relayedSources = { orgId, privateNetworksAllowed: sources.privateNetworksAllowed, report: sources.report }
  const input: GatewaySnapshotInput = {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    generation: options.generation,
    producedAt: now.toISOString(),
    producedBy: PRODUCER,
    organizationId: orgId,
    workspaces: workspaces.map((w) => ({
      id: w.id,
      slug: w.slug,
      name: w.name,
      status: w.status,
      defaultConfigId: resolveConfig(w.defaults.config_id, w.id),
      logLevel: effectiveSettings(organization.settings, w.settings).log_settings?.level ?? 'full',
    })),
    apiKeys: keys.flatMap((key) => keyEntries(key, now, resolveConfig, disabledUsers)),
    providers: compiledProviders,
    configs: activeConfigs.map((c) => ({ id: c.id, slug: c.slug, workspaceId: c.workspaceId, version: c.version, config: c.config })),
    guardrails: compileGuardrails(guardrails),
    guardrailDefaults: compileGuardrailDefaults(guardrails, organisationGuardrails, guardrailExclusions, workspaces, sources.report),
    deployment: deployment
      ? { id: deployment.id, slug: deployment.slug, type: deployment.type, configId: deployment.configId !== null && activeConfigs.some((c) => c.id === deployment.configId) ? deployment.configId : null }
      : null,
    limits: compileLimits({
      policies: [...ratePolicies, ...usagePolicies].filter((p) => inScope(p.workspaceId)),
      apiKeys: keys,
      workspaces,
      providers,
      integrations: integrations.data,
      now,
      report: sources.report,
    }),
    prices,
    ...prompts,
    mcpServers: await compileMcpServers(store, relayedSources, (workspaceId) => inScope(workspaceId)),
    agentServers: await compileAgentServers(store, relayedSources, (workspaceId) => inScope(workspaceId)),
    revokedSubjects: [...new Set([...disabledIdentities.flatMap((user) => (user.externalSubject === null ? [user.id] : [user.id, user.externalSubject])), ...deletedSubjects])],
  }
  const result = validateSnapshot(input)
  if (!result.ok) throw new SnapshotCompileError(result.problems)
  return result.snapshot
}
