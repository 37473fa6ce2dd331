/**
 * Agent cards (A2A): an agent publishes who it is and what it can do at
 * `/.well-known/agent-card.json` (or the path its integration names). Gatehouse reads the card
 * through the gateway's SSRF-checked fetch, with the integration's credentials, bounded in time and
 * size, and turns it into a sync result: the card as the server info, its skills as capabilities of
 * type `skill`. Only the fields Gatehouse uses are checked; the rest of the card is kept as sent.
 */
import { McpUpstreamAuth, ssrfSafeFetch, type FetchFunction } from '@gatehouse/gateway/outbound'
import type { SnapshotMcpAuth } from '@gatehouse/gateway/snapshot'
import { z } from 'zod'
import type { McpSyncResult } from '../store/index.ts'
import type { IntegrationEndpoint } from '../mcp/sync-integration.ts'

export const DEFAULT_CARD_PATH = '/.well-known/agent-card.json'
export const CARD_TIMEOUT_MS = 10_000
/** Cards are a few kilobytes; anything near this is not one. */
export const MAX_CARD_BYTES = 1024 * 1024

const skillSchema = z.looseObject({
  id: z.string().min(1).max(512),
  name: z.string().max(512).optional(),
  description: z.string().max(16_384).optional(),
  tags: z.array(z.string().max(255)).max(100).optional(),
  examples: z.array(z.string().max(4096)).max(100).optional(),
})

export const agentCardSchema = z.looseObject({
  name: z.string().min(1).max(512),
  description: z.string().max(16_384).optional(),
  version: z.string().max(255).optional(),
  protocolVersion: z.string().max(64).optional(),
  url: z.string().max(2048).optional(),
  iconUrl: z.string().max(2048).optional(),
  provider: z.looseObject({ organization: z.string().max(512).optional(), url: z.string().max(2048).optional() }).optional(),
  capabilities: z.record(z.string(), z.unknown()).optional(),
  skills: z.array(skillSchema).max(2000).default([]),
})

export type AgentCard = z.infer<typeof agentCardSchema>

export interface CardTarget {
  url: string
  cardPath?: string | undefined
  auth: SnapshotMcpAuth
  allowPrivateNetwork: boolean
}

export interface CardFetchOptions {
  auth?: McpUpstreamAuth
  fetch?: FetchFunction
  timeoutMs?: number
}

/** The card's address: `cardPath` resolved against the agent's URL (an absolute path replaces the URL's path). */
export function cardUrl(url: string, cardPath: string | undefined): URL {
  return new URL(cardPath ?? DEFAULT_CARD_PATH, url)
}

async function boundedText(response: Response): Promise<string> {
  const reader = response.body?.getReader()
  if (!reader) return ''
  const parts: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_CARD_BYTES) {
      await reader.cancel()
      throw new Error(`the agent card is larger than ${MAX_CARD_BYTES} bytes`)
    }
    parts.push(value)
  }
  return Buffer.concat(parts).toString('utf8')
}

/** Reads and checks one agent card; never throws (a card that cannot be read is `{ok: false}`, never with a credential). */
export async function readAgentCard(target: CardTarget, options: CardFetchOptions = {}): Promise<{ ok: true; card: AgentCard } | { ok: false; error: string }> {
  try {
    const headers = await (options.auth ?? new McpUpstreamAuth()).headers(target.auth, target.allowPrivateNetwork)
    const fetch = options.fetch ?? ssrfSafeFetch(target.allowPrivateNetwork)
    const response = await fetch(cardUrl(target.url, target.cardPath), { headers: { accept: 'application/json', ...headers }, signal: AbortSignal.timeout(options.timeoutMs ?? CARD_TIMEOUT_MS) })
    if (!response.ok) {
      await response.body?.cancel()
      return { ok: false, error: `the agent card answered HTTP ${response.status}` }
    }
    let json: unknown
    try {
      json = JSON.parse(await boundedText(response))
    } catch (error) {
      return { ok: false, error: error instanceof SyntaxError ? 'the agent card is not JSON' : (error as Error).message }
    }
    const parsed = agentCardSchema.safeParse(json)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!
      return { ok: false, error: `the agent card is not valid: ${issue.path.join('.') || '(card)'}: ${issue.message}` }
    }
    return { ok: true, card: parsed.data }
  } catch (error) {
    return { ok: false, error: `the agent card could not be read: ${error instanceof Error ? error.message : String(error)}` }
  }
}

/** A card as a sync result: the card is the server info, its skills the capabilities. */
export function cardSyncResult(card: AgentCard): McpSyncResult {
  return {
    ok: true,
    serverInfo: {
      name: card.name,
      version: card.version ?? null,
      title: card.name,
      description: card.description ?? null,
      icons: card.iconUrl ? [{ src: card.iconUrl }] : null,
      website_url: card.provider?.url ?? null,
      instructions: null,
      card,
    },
    protocolVersion: card.protocolVersion ?? null,
    capabilityFlags: { ...(card.capabilities ?? {}) },
    capabilities: card.skills.map((skill) => ({
      name: skill.id,
      type: 'skill' as const,
      title: skill.name ?? null,
      description: skill.description ?? null,
      annotations: { tags: skill.tags ?? [], examples: skill.examples ?? [] },
    })),
  }
}

/** The sync reader for agent integrations. */
export async function fetchAgentCard(endpoint: IntegrationEndpoint): Promise<McpSyncResult> {
  const read = await readAgentCard({ url: endpoint.integration.url, cardPath: endpoint.integration.configurations.card_path, auth: endpoint.auth, allowPrivateNetwork: endpoint.allowPrivateNetwork })
  return read.ok ? cardSyncResult(read.card) : read
}
