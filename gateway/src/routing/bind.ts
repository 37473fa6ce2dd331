/**
 * Binds a planned config to one request: each leaf's provider name becomes the provider the
 * caller's workspace sees, with the model it will ask for, its custom host (through the SSRF-safe
 * dispatcher) and the client headers it forwards. Everything is checked before the first upstream
 * call, so a config naming a missing provider or a host its admin did not allow is a clear 4xx
 * naming the field, not a failure half-way through a fallback.
 */
import { GatewayError } from '../core/errors.ts'
import { header, type RequestHeaders } from '../core/headers.ts'
import { checkModelAllowed, parseModelReference, type CompiledProvider, type ProviderLookup, type RouteTarget } from './target.ts'
import { ssrfSafeDispatcher } from '../upstream/ssrf.ts'
import type { ExecutableTarget } from './execute.ts'
import { mapTargets, type PlanLeaf, type PlanNode, type ProviderRef } from './plan.ts'

/** Provider options an admin sets to let configs use `custom_host`, private addresses, `forward_headers`. */
export const PROVIDER_OPTIONS = {
  allowCustomHost: 'allowCustomHost',
  allowPrivateNetwork: 'allowPrivateNetwork',
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
  if (!optionOn(provider, PROVIDER_OPTIONS.allowCustomHost)) {
    throw new GatewayError('custom_host_not_allowed', `Provider '@${provider.record.slug}' does not allow a custom_host; its admin can set option ${PROVIDER_OPTIONS.allowCustomHost}`, {
      param: `${path}.custom_host`,
    })
  }
  const dispatcher = ssrfSafeDispatcher(optionOn(provider, PROVIDER_OPTIONS.allowPrivateNetwork))
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

function bindLeaf(leaf: PlanLeaf<ProviderRef>, request: BindRequest): BoundTarget {
  const { name, field } = leaf.target
  const found = request.providers.findProvider(request.workspaceId, name)
  if (!found) {
    throw new GatewayError('provider_not_found', `No provider '@${name}' is available to this workspace (${leaf.path}.${field})`, { param: `${leaf.path}.${field}` })
  }
  const { settings } = leaf
  const pinned = settings.overrideParams?.model
  const named = typeof pinned === 'string' ? pinned : request.model
  const model = named === undefined ? '' : parseModelReference(named).model
  if (model !== '') checkModelAllowed(found, model)
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
