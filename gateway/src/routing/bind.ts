/**
 * Binds a planned config to one request: each leaf's provider name becomes the provider the
 * caller's workspace sees, with the model it will ask for, its custom host (through the SSRF-safe
 * dispatcher) and the client headers it forwards. Everything is checked before the first upstream
 * call, so a config naming a missing provider or a host its admin did not allow is a clear 4xx
 * naming the field, not a failure half-way through a fallback.
 */
import { GatewayError } from '../core/errors.ts'
import { header, type RequestHeaders } from '../core/headers.ts'
import { checkModelAllowed, parseModelReference, resolveDirectTarget, type CompiledProvider, type ProviderLookup, type RouteTarget } from './target.ts'
import { ssrfSafeDispatcher } from '../upstream/ssrf.ts'
import { ALLOWED_CUSTOM_HOSTS_OPTION, customHostAllowed } from './custom-host.ts'
import type { ExecutableTarget } from './execute.ts'
import { mapTargets, type PlanLeaf, type PlanNode, type ProviderRef } from './plan.ts'

/** Provider options an admin sets to let configs use `custom_host` and `forward_headers`. */
export const PROVIDER_OPTIONS = {
  allowedCustomHosts: ALLOWED_CUSTOM_HOSTS_OPTION,
  allowForwardHeaders: 'allowForwardHeaders',
} as const

export interface BoundTarget extends ExecutableTarget {
  readonly route: RouteTarget
  /** Client headers copied onto the upstream request; null when none. */
  readonly forwardedHeaders: Readonly<Record<string, string>> | null
}

export interface BindRequest {
  providers: ProviderLookup
  workspaceId: string | null
  /** The model the client asked for; `@slug/` is dropped since the config picks the provider. */
  model: string | undefined
  headers: RequestHeaders
}

function optionOn(provider: CompiledProvider, name: string): boolean {
  return provider.record.options[name] === 'true'
}

function withCustomHost(provider: CompiledProvider, host: URL, path: string): CompiledProvider {
  // The custom host receives the provider's stored credential: only hosts its owner listed may.
  if (!customHostAllowed(host, provider.record.options[ALLOWED_CUSTOM_HOSTS_OPTION])) {
    throw new GatewayError(
      'custom_host_not_allowed',
      `Provider '@${provider.record.slug}' does not allow the custom_host '${host.origin}'; its admin can list it in option ${ALLOWED_CUSTOM_HOSTS_OPTION}`,
      { param: `${path}.custom_host` },
    )
  }
  const dispatcher = ssrfSafeDispatcher(provider.record.network === 'private-allowed')
  return { ...provider, endpoint: { ...provider.endpoint, baseUrl: host, dispatcher } }
}

function forwardedHeaders(provider: CompiledProvider, names: readonly string[], headers: RequestHeaders, path: string): Record<string, string> | null {
  if (names.length === 0) return null
  if (!optionOn(provider, PROVIDER_OPTIONS.allowForwardHeaders)) {
    throw new GatewayError('forward_headers_not_allowed', `Provider '@${provider.record.slug}' does not allow forward_headers; its admin can set option ${PROVIDER_OPTIONS.allowForwardHeaders}`, {
      param: `${path}.forward_headers`,
    })
  }
  const out: Record<string, string> = {}
  for (const name of names) {
    const value = header(headers, name)
    if (value !== undefined) out[name] = value
  }
  return out
}

/** The provider and model of a leaf: the one it names, or for a config naming none the request's. */
function leafRoute(leaf: PlanLeaf<ProviderRef>, request: BindRequest): RouteTarget {
  const pinned = leaf.settings.overrideParams?.model
  const named = typeof pinned === 'string' ? pinned : request.model
  const { name, field } = leaf.target
  if (field === 'request') return resolveDirectTarget(request.providers, request.workspaceId, request.headers, named)
  const found = request.providers.findProvider(request.workspaceId, name)
  if (!found) {
    throw new GatewayError('provider_not_found', `No provider '@${name}' is available to this workspace (${leaf.path}.${field})`, { param: `${leaf.path}.${field}` })
  }
  const model = named === undefined ? '' : parseModelReference(named).model
  if (model !== '') checkModelAllowed(found, model)
  return { provider: found, upstreamModel: model }
}

function bindLeaf(leaf: PlanLeaf<ProviderRef>, request: BindRequest): BoundTarget {
  const { settings } = leaf
  const { provider: found, upstreamModel: model } = leafRoute(leaf, request)
  const provider = settings.customHost ? withCustomHost(found, settings.customHost, leaf.path) : found
  return {
    // A custom host is a different upstream: its failures must not open the provider's own circuit.
    healthKey: settings.customHost ? `${found.record.id} ${settings.customHost.origin}` : found.record.id,
    route: { provider, upstreamModel: model },
    forwardedHeaders: forwardedHeaders(found, settings.forwardHeaders, request.headers, leaf.path),
  }
}

export function bindPlan(plan: PlanNode<ProviderRef>, request: BindRequest): PlanNode<BoundTarget> {
  return mapTargets(plan, (leaf) => bindLeaf(leaf, request))
}
