/**
 * Which config a request runs under: the `x-gateway-config` header (inline JSON, or a saved
 * config's id or slug), else the default of its key, else of its workspace (both resolved when the
 * snapshot compiles), else none, and the request is routed directly. With no config in play this
 * costs one header read: the benchmark's hot path.
 */
import { GatewayError } from '../core/errors.ts'
import { header, type RequestHeaders } from '../core/headers.ts'
import type { SnapshotConfig } from '../snapshot/schema.ts'
import { configPath, validateConfig, type ConfigIssue } from '../snapshot/config-schema.ts'
import { planConfig, type PlanNode, type ProviderRef } from './plan.ts'

export const CONFIG_HEADER = 'x-gateway-config'

/** The config a request runs under: its plan, and the saved config's id (null for an inline config). */
export interface SelectedConfig {
  readonly plan: PlanNode<ProviderRef>
  readonly configId: string | null
}

export interface CompiledConfig extends SelectedConfig {
  readonly record: SnapshotConfig
}

/** Validates and plans a saved config; its problems carry snapshot-style paths (`targets.1.retry`). */
export function compileSavedConfig(record: SnapshotConfig): { ok: true; config: CompiledConfig } | { ok: false; issues: ConfigIssue[] } {
  const validation = validateConfig(record.config)
  if (!validation.ok) return { ok: false, issues: validation.issues }
  return { ok: true, config: { record, plan: planConfig(validation.config), configId: record.id } }
}

/** Where saved configs are found: by id, and by slug per workspace (`*` for organisation-wide). */
export interface ConfigLookup {
  readonly configs: ReadonlyMap<string, CompiledConfig>
}

export function configVisibleTo(config: SnapshotConfig, workspaceId: string | null): boolean {
  return config.workspaceId === null || config.workspaceId === workspaceId
}

export function findSavedConfig(lookup: ConfigLookup, workspaceId: string | null, idOrSlug: string): CompiledConfig | undefined {
  const candidate =
    lookup.configs.get(`id:${idOrSlug}`) ??
    (workspaceId !== null ? lookup.configs.get(`slug:${workspaceId}/${idOrSlug}`) : undefined) ??
    lookup.configs.get(`slug:*/${idOrSlug}`)
  return candidate && configVisibleTo(candidate.record, workspaceId) ? candidate : undefined
}

function invalidConfig(issue: ConfigIssue): GatewayError {
  const path = configPath(issue.path)
  return new GatewayError('invalid_config', `Invalid config: ${path}: ${issue.message}`, { param: path })
}

/**
 * Clients send the same inline config with every request, so plans are kept by their text. A plan
 * depends on nothing but that text (providers are bound per request), so sharing it is safe.
 */
const INLINE_CACHE_ENTRIES = 256
const inlineCache = new Map<string, SelectedConfig>()

function planInline(raw: string): SelectedConfig {
  const cached = inlineCache.get(raw)
  if (cached) return cached
  const plan: SelectedConfig = { plan: parseInline(raw), configId: null }
  inlineCache.set(raw, plan)
  if (inlineCache.size > INLINE_CACHE_ENTRIES) inlineCache.delete(inlineCache.keys().next().value!)
  return plan
}

function parseInline(raw: string): PlanNode<ProviderRef> {
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    throw new GatewayError('invalid_config', `'${CONFIG_HEADER}' is neither valid JSON nor a saved config id`, { param: CONFIG_HEADER })
  }
  const validation = validateConfig(value)
  if (!validation.ok) throw invalidConfig(validation.issues[0]!)
  return planConfig(validation.config)
}

/**
 * The plan for this request, or null for direct routing. `fallback` is the key's (or workspace's)
 * default config, resolved at snapshot compile time.
 */
export function selectConfig(lookup: ConfigLookup, workspaceId: string | null, headers: RequestHeaders, fallback: CompiledConfig | null): SelectedConfig | null {
  const raw = header(headers, CONFIG_HEADER)
  if (raw === undefined) return fallback
  const value = raw.trim()
  if (value.startsWith('{')) return planInline(value)
  const saved = value === '' ? undefined : findSavedConfig(lookup, workspaceId, value)
  if (!saved) throw new GatewayError('config_not_found', `No config '${value}' is available to this workspace`, { param: CONFIG_HEADER })
  return saved
}
