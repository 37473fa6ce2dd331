/**
 * `GET /v1/models` for a workspace key: the models the key can reach, written `@slug/model` so each
 * id routes by itself. Per provider the workspace may use:
 *   - a model allowlist: exactly those models (nothing else would be accepted);
 *   - no allowlist, and the provider serves OpenAI's `/models`: the provider's own list, fetched
 *     with the stored credential (bounded in time and size, cached for a minute per snapshot);
 *   - otherwise (Anthropic, Bedrock, Gemini... or a provider whose list failed): one `@slug/*`
 *     entry, saying that any model name is passed through to that provider. An honest wildcard
 *     beats an empty list (which reads as "nothing") or an invented one (which goes stale).
 */
import type { CompiledProvider, RuntimeConfig } from '../runtime/compile.ts'
import { providerVisibleTo } from '../runtime/compile.ts'
import { sendUpstreamBuffered } from '../upstream/transport.ts'

export interface ModelEntry {
  id: string
  object: 'model'
  created: number
  owned_by: string
}

const LIST_TIMEOUT_MS = 5_000
const LIST_MAX_BYTES = 4 * 1024 * 1024
const LIST_CACHE_MS = 60_000

/** Upstream lists by provider; a new snapshot compiles new providers, so entries never outlive their config. */
const cache = new WeakMap<CompiledProvider, { atMs: number; ids: Promise<string[] | null> }>()

async function fetchUpstreamIds(provider: CompiledProvider, signal: AbortSignal): Promise<string[] | null> {
  try {
    const response = await sendUpstreamBuffered(
      provider.endpoint,
      { method: 'GET', path: '/models', headers: { accept: 'application/json' } },
      { signal: AbortSignal.any([signal, AbortSignal.timeout(LIST_TIMEOUT_MS)]), maxResponseBytes: LIST_MAX_BYTES },
    )
    if (response.status !== 200) return null
    const body = JSON.parse(response.body.toString('utf8')) as { data?: unknown }
    if (!Array.isArray(body.data)) return null
    return body.data.flatMap((entry) => (typeof entry === 'object' && entry !== null && typeof (entry as { id?: unknown }).id === 'string' ? [(entry as { id: string }).id] : []))
  } catch {
    return null
  }
}

function upstreamIds(provider: CompiledProvider, signal: AbortSignal, nowMs: number): Promise<string[] | null> {
  const cached = cache.get(provider)
  if (cached && nowMs - cached.atMs < LIST_CACHE_MS) return cached.ids
  const ids = fetchUpstreamIds(provider, signal)
  // A failed list is not cached: the next call tries again.
  void ids.then((found) => (found === null ? cache.delete(provider) : undefined))
  cache.set(provider, { atMs: nowMs, ids })
  return ids
}

function entry(slug: string, model: string): ModelEntry {
  return { id: `@${slug}/${model}`, object: 'model', created: 0, owned_by: slug }
}

async function modelsOf(provider: CompiledProvider, signal: AbortSignal, nowMs: number): Promise<ModelEntry[]> {
  const { record, adapter } = provider
  if (record.models.length > 0) return record.models.map((model) => entry(record.slug, model))
  const ids = adapter.passthrough ? await upstreamIds(provider, signal, nowMs) : null
  return ids === null ? [entry(record.slug, '*')] : ids.map((id) => entry(record.slug, id))
}

/** `named`: only the provider with this slug or id (from `x-gateway-provider`), else all the workspace may use. */
export async function listReachableModels(runtime: RuntimeConfig, workspaceId: string | null, signal: AbortSignal, named: string | null = null, nowMs = Date.now()): Promise<ModelEntry[]> {
  const providers: CompiledProvider[] = []
  for (const provider of runtime.providers.all()) {
    const { record } = provider
    if (!providerVisibleTo(record, workspaceId)) continue
    if (named !== null && record.slug !== named && record.id !== named) continue
    providers.push(provider)
  }
  const lists = await Promise.all(providers.map((provider) => modelsOf(provider, signal, nowMs)))
  return lists.flat()
}
