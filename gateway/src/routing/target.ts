/**
 * Picks the provider a request goes to. Any one of these names it (DESIGN decision): the
 * `x-gateway-virtual-key` header (a provider's slug or id, the older name of providers), the
 * `x-gateway-provider` header (`@slug`), or a model written `@slug/model`. None of them is a 400
 * naming the choices. Configs (strategies over several targets) build on `RouteTarget`.
 */
import { GatewayError } from '../core/errors.ts'
import { header, type RequestHeaders } from '../core/headers.ts'
import type { ProviderAdapter } from '../providers/adapter.ts'
import type { SnapshotProvider } from '../snapshot/schema.ts'
import type { UpstreamEndpoint } from '../upstream/transport.ts'

/** A provider of the snapshot, ready to call: its record, its adapter and its connection settings. */
export interface CompiledProvider {
  readonly record: SnapshotProvider
  readonly adapter: ProviderAdapter
  readonly endpoint: UpstreamEndpoint
}

/** Finds a provider by slug or id as a workspace may see it (the runtime implements it). */
export interface ProviderLookup {
  findProvider(workspaceId: string | null, slugOrId: string): CompiledProvider | undefined
}

export interface RouteTarget {
  readonly provider: CompiledProvider
  readonly upstreamModel: string
}

export interface ModelReference {
  /** Provider slug from an `@slug/model` model name, if the model was written that way. */
  slug: string | null
  model: string
}

export function parseModelReference(model: string): ModelReference {
  if (model.startsWith('@')) {
    const slash = model.indexOf('/')
    if (slash > 1 && slash < model.length - 1) return { slug: model.slice(1, slash), model: model.slice(slash + 1) }
  }
  return { slug: null, model }
}

export function providerFromHeaders(headers: RequestHeaders): string | null {
  const provider = header(headers, 'x-gateway-provider')
  if (provider) return provider.startsWith('@') ? provider.slice(1) : provider
  return header(headers, 'x-gateway-virtual-key') ?? null
}

export function resolveProvider(providers: ProviderLookup, workspaceId: string | null, slugOrId: string): CompiledProvider {
  const provider = providers.findProvider(workspaceId, slugOrId)
  if (!provider) throw new GatewayError('provider_not_found', `No provider '@${slugOrId}' is available to this workspace`, { param: 'x-gateway-provider' })
  return provider
}

export function checkModelAllowed(provider: CompiledProvider, model: string): void {
  const allowed = provider.record.models
  if (allowed.length > 0 && !allowed.includes(model)) {
    throw new GatewayError('model_not_found', `Model '${model}' is not enabled on provider '@${provider.record.slug}'`, { param: 'model' })
  }
}

/** The single-target route named by headers or the model; `model` may be absent (GET routes). */
export function resolveDirectTarget(providers: ProviderLookup, workspaceId: string | null, headers: RequestHeaders, model: string | undefined): RouteTarget {
  const reference = model === undefined ? null : parseModelReference(model)
  const slug = providerFromHeaders(headers) ?? reference?.slug ?? null
  if (slug === null) {
    throw new GatewayError(
      'route_not_specified',
      'Name a provider: the x-gateway-provider header (@slug), the x-gateway-virtual-key header, a model written @slug/model, or an x-gateway-config',
      { param: 'model' },
    )
  }
  const provider = resolveProvider(providers, workspaceId, slug)
  const upstreamModel = reference?.model ?? ''
  if (upstreamModel !== '') checkModelAllowed(provider, upstreamModel)
  return { provider, upstreamModel }
}
