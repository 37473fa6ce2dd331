/**
 * Reads an MCP server the way a client does, with the official SDK client: `initialize` (server
 * name, title, version, description, icons, protocol version, capabilities, instructions), then the
 * lists of what it offers (tools, prompts, resources, resource templates, each paged through). The
 * connection goes through the gateway's SSRF-checked fetch with the integration's network setting,
 * and carries the credentials the gateway presents (static headers or an OAuth client-credentials
 * token). The outcome is a `McpSyncResult`: what was found, or why nothing could be read (never
 * with a credential in it).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { McpUpstreamAuth, ssrfSafeFetch, type FetchFunction } from '@gatehouse/gateway/outbound'
import type { SnapshotMcpAuth } from '@gatehouse/gateway/snapshot'
import type { McpCapability, McpSyncResult, McpTransport } from '../store/index.ts'

export const SYNC_TIMEOUT_MS = 15_000
/** A server listing more than this of one kind is cut here (a tool list is tens, not thousands). */
const MAX_ITEMS_PER_KIND = 2_000

export interface McpSyncTarget {
  url: string
  transport: McpTransport
  auth: SnapshotMcpAuth
  allowPrivateNetwork: boolean
}

export interface McpSyncOptions {
  auth?: McpUpstreamAuth
  timeoutMs?: number
  /** Replaces the SSRF-checked fetch (never outside tests of the fetch itself). */
  fetch?: FetchFunction
}

type Found = Omit<McpCapability, 'enabled' | 'created_at' | 'last_updated_at'>

const clientInfo = { name: 'gatehouse', version: '0.1.0' }

function describeFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  // SDK errors quote the HTTP status and the server's text; headers (credentials) never appear in them.
  return message.length > 500 ? `${message.slice(0, 500)}...` : message
}

async function pages<T>(list: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<T[]> {
  const out: T[] = []
  let cursor: string | undefined
  do {
    const page = await list(cursor)
    out.push(...page.items)
    cursor = page.nextCursor
  } while (cursor !== undefined && out.length < MAX_ITEMS_PER_KIND)
  return out.slice(0, MAX_ITEMS_PER_KIND)
}

async function readCapabilities(client: Client, timeoutMs: number): Promise<Found[]> {
  const offered = client.getServerCapabilities() ?? {}
  const options = { timeout: timeoutMs }
  const found: Found[] = []
  if (offered.tools) {
    const tools = await pages(async (cursor) => {
      const result = await client.listTools(cursor === undefined ? {} : { cursor }, options)
      return { items: result.tools, nextCursor: result.nextCursor }
    })
    for (const tool of tools) {
      found.push({ name: tool.name, type: 'tool', title: tool.title ?? tool.annotations?.title ?? null, description: tool.description ?? null, icons: tool.icons ?? null, input_schema: tool.inputSchema, output_schema: tool.outputSchema ?? null, annotations: tool.annotations ?? null })
    }
  }
  if (offered.prompts) {
    const prompts = await pages(async (cursor) => {
      const result = await client.listPrompts(cursor === undefined ? {} : { cursor }, options)
      return { items: result.prompts, nextCursor: result.nextCursor }
    })
    for (const prompt of prompts) found.push({ name: prompt.name, type: 'prompt', title: prompt.title ?? null, description: prompt.description ?? null, icons: prompt.icons ?? null })
  }
  if (offered.resources) {
    const resources = await pages(async (cursor) => {
      const result = await client.listResources(cursor === undefined ? {} : { cursor }, options)
      return { items: result.resources, nextCursor: result.nextCursor }
    })
    for (const resource of resources) found.push({ name: resource.name, type: 'resource', title: resource.title ?? null, description: resource.description ?? null, icons: resource.icons ?? null, uri: resource.uri, mime_type: resource.mimeType ?? null })
    const templates = await pages(async (cursor) => {
      const result = await client.listResourceTemplates(cursor === undefined ? {} : { cursor }, options)
      return { items: result.resourceTemplates, nextCursor: result.nextCursor }
    })
    for (const template of templates) found.push({ name: template.name, type: 'resource_template', title: template.title ?? null, description: template.description ?? null, uri_template: template.uriTemplate, mime_type: template.mimeType ?? null })
  }
  return found
}

/** Connects, reads, disconnects. Never throws: a server that cannot be read is a `{ok: false}` result. */
export async function syncMcpServer(target: McpSyncTarget, options: McpSyncOptions = {}): Promise<McpSyncResult> {
  const timeoutMs = options.timeoutMs ?? SYNC_TIMEOUT_MS
  const client = new Client(clientInfo)
  try {
    const headers = await (options.auth ?? new McpUpstreamAuth()).headers(target.auth, target.allowPrivateNetwork)
    const fetch = options.fetch ?? ssrfSafeFetch(target.allowPrivateNetwork)
    const url = new URL(target.url)
    const transport: Transport & { protocolVersion?: string } = target.transport === 'sse'
      // The SSE transport adds `requestInit.headers` to its event-stream GET and its POSTs alike.
      ? new SSEClientTransport(url, { fetch, requestInit: { headers } })
      : new StreamableHTTPClientTransport(url, { fetch, requestInit: { headers }, reconnectionOptions: { maxReconnectionDelay: 1000, initialReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1, maxRetries: 0 } })
    await client.connect(transport, { timeout: timeoutMs })
    const info = client.getServerVersion()
    const capabilities = await readCapabilities(client, timeoutMs)
    return {
      ok: true,
      serverInfo: {
        name: info?.name ?? null,
        version: info?.version ?? null,
        title: info?.title ?? null,
        description: (info as { description?: string } | undefined)?.description ?? null,
        icons: info?.icons ?? null,
        website_url: info?.websiteUrl ?? null,
        instructions: client.getInstructions() ?? null,
      },
      protocolVersion: transport.protocolVersion ?? null,
      capabilityFlags: { ...(client.getServerCapabilities() ?? {}) },
      capabilities,
    }
  } catch (error) {
    return { ok: false, error: describeFailure(error) }
  } finally {
    await client.close().catch(() => undefined)
  }
}
