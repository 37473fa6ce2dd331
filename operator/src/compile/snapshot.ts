/**
 * Compiles the admin store into a GatewaySnapshot (the gateway's contract, validated with its own
 * `validateSnapshot` before it is returned).
 *
 * API keys: every active key, plus keys that ended (expired/revoked) within the last
 * RECENTLY_ENDED_MS so the gateway can say why a key stopped working. During a rotation transition
 * the previous secret is a second active entry with the SAME key id (usage and limits belong to the
 * key, not to the secret) and `expiresAt` = the end of the transition, so the gateway refuses it
 * on time even before the next snapshot. Entries are therefore unique by `hash`, not by `id`.
 */
import { SNAPSHOT_SCHEMA_VERSION, validateSnapshot, type GatewaySnapshot, type GatewaySnapshotInput, type SnapshotApiKey } from '@gatehouse/gateway/snapshot'
import type { Clock } from '../clock.ts'
import { systemClock } from '../clock.ts'
import type { ApiKeyRecord, ConfigRecord, Store } from '../store/index.ts'

export const RECENTLY_ENDED_MS = 24 * 3_600_000
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

function keyEntries(key: ApiKeyRecord, now: Date, resolveConfig: ConfigResolver): SnapshotApiKey[] {
  // The gateway knows active/expired/revoked; an exhausted key is unusable like a revoked one.
  const status = key.status === 'exhausted' ? 'revoked' : key.status
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

export async function compileSnapshot(store: Store, options: { generation: number; clock?: Clock }): Promise<GatewaySnapshot> {
  const now = (options.clock ?? systemClock)()
  const organization = await store.organizations.first()
  if (!organization) throw new Error('no organisation yet: run ensureOrganization first')
  const orgId = organization.id
  const [workspaces, keys, providers, configs] = await Promise.all([
    store.workspaces.listAll(orgId),
    store.apiKeys.forSnapshot(orgId, now, RECENTLY_ENDED_MS),
    store.providers.list(orgId),
    store.configs.list(orgId),
  ])
  const activeConfigs = configs.filter((c) => c.status === 'active')
  const resolveConfig = configResolver(activeConfigs)
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
    })),
    apiKeys: keys.flatMap((key) => keyEntries(key, now, resolveConfig)),
    providers: await Promise.all(providers.map(async (p) => ({
      id: p.id,
      slug: p.slug,
      name: p.name,
      kind: p.kind,
      baseUrl: p.baseUrl,
      credentials: await store.providers.decryptedCredentials(orgId, p.id),
      options: stringOptions(p.options),
      workspaceId: p.workspaceId,
      allowAllWorkspaces: p.allowAllWorkspaces,
      allowedWorkspaceIds: p.allowedWorkspaceIds,
      status: p.status,
      models: p.models,
    }))),
    configs: activeConfigs.map((c) => ({ id: c.id, slug: c.slug, workspaceId: c.workspaceId, version: c.version, config: c.config })),
  }
  const result = validateSnapshot(input)
  if (!result.ok) throw new SnapshotCompileError(result.problems)
  return result.snapshot
}
