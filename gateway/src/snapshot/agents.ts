/**
 * Agent (A2A) servers in the snapshot: what the gateway needs to serve `/v1/agents/{server}`
 * without asking the control plane. Like MCP servers (mcp.ts): the upstream, Gatehouse's
 * credentials for it, the enabled skills (the integration's and the server's switches combined)
 * and user access; and the agent's card as last synced, which the gateway serves with its own URL
 * in place of the agent's.
 */
import { z } from 'zod'
import { snapshotServedServer } from './mcp.ts'

export const snapshotAgentServer = snapshotServedServer.extend({
  /** The agent's JSON-RPC endpoint, from its card (resolved against the integration's URL). */
  url: z.url(),
  /** The skill ids clients see in the card: synced from the agent, enabled by the integration and the server. */
  skills: z.array(z.string().min(1).max(512)).default([]),
  /** The agent card as last synced (rewritten per request, never served as is). */
  card: z.record(z.string(), z.unknown()),
})

export type SnapshotAgentServer = z.infer<typeof snapshotAgentServer>

/** The JSON-RPC binding's name in cards (v0.3 `preferredTransport`/`transport`, v1.0 `protocolBinding`). */
export const JSONRPC_BINDING = 'JSONRPC'

function isJsonRpc(binding: unknown): boolean {
  return typeof binding === 'string' && binding.toUpperCase() === JSONRPC_BINDING
}

function interfaces(card: Readonly<Record<string, unknown>>, field: string): Array<Record<string, unknown>> {
  const list = card[field]
  return Array.isArray(list) ? list.filter((entry): entry is Record<string, unknown> => typeof entry === 'object' && entry !== null) : []
}

/**
 * Where the agent takes JSON-RPC calls, by its card: the first JSON-RPC entry of `supportedInterfaces`
 * (A2A 1.0), else the card's `url` when its preferred transport is JSON-RPC (the v0.3 default), else
 * a JSON-RPC entry of `additionalInterfaces` (v0.3); resolved against `baseUrl` (the integration's
 * URL). Null when the card declares no JSON-RPC interface over http(s) (the relay speaks only it).
 */
export function agentJsonRpcEndpoint(card: Readonly<Record<string, unknown>>, baseUrl: string): string | null {
  const preferred = card.preferredTransport
  const candidates = [
    ...interfaces(card, 'supportedInterfaces').filter((entry) => isJsonRpc(entry.protocolBinding)).map((entry) => entry.url),
    ...(preferred === undefined || isJsonRpc(preferred) ? [card.url] : []),
    ...interfaces(card, 'additionalInterfaces').filter((entry) => isJsonRpc(entry.transport)).map((entry) => entry.url),
  ]
  for (const candidate of candidates) {
    if (typeof candidate !== 'string' || candidate.length === 0) continue
    try {
      const url = new URL(candidate, baseUrl)
      if (url.protocol === 'http:' || url.protocol === 'https:') return url.toString()
    } catch {
      // Not a URL: try the next one.
    }
  }
  return null
}

/**
 * The card a client of Gatehouse gets: the agent's card with Gatehouse's URL as its only (JSON-RPC)
 * interface, only the enabled skills, and nothing that would send the client around Gatehouse:
 * push notifications and the extended card are off (the relay refuses their methods), the agent's
 * security schemes (Gatehouse presents its own credentials upstream; clients present a Gatehouse
 * key) and its signatures (they sign the agent's card, which this no longer is) are dropped.
 */
export function servedAgentCard(card: Readonly<Record<string, unknown>>, endpointUrl: string, skills: ReadonlySet<string>): Record<string, unknown> {
  const served: Record<string, unknown> = { ...card }
  served.skills = interfaces(card, 'skills').filter((skill) => typeof skill.id === 'string' && skills.has(skill.id))
  if ('url' in card || !('supportedInterfaces' in card)) {
    served.url = endpointUrl
    served.preferredTransport = JSONRPC_BINDING
  }
  if ('additionalInterfaces' in card) served.additionalInterfaces = [{ url: endpointUrl, transport: JSONRPC_BINDING }]
  if ('supportedInterfaces' in card) {
    served.supportedInterfaces = interfaces(card, 'supportedInterfaces').filter((entry) => isJsonRpc(entry.protocolBinding)).map((entry) => ({ ...entry, url: endpointUrl }))
  }
  const capabilities = typeof card.capabilities === 'object' && card.capabilities !== null ? card.capabilities : {}
  served.capabilities = { ...capabilities, pushNotifications: false, ...('extendedAgentCard' in capabilities ? { extendedAgentCard: false } : {}) }
  if ('supportsAuthenticatedExtendedCard' in card) served.supportsAuthenticatedExtendedCard = false
  for (const field of ['securitySchemes', 'security', 'securityRequirements', 'signatures']) delete served[field]
  return served
}
