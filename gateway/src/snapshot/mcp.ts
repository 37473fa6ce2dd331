/**
 * MCP servers in the snapshot: everything the gateway needs to serve `/v1/mcp/{server}/mcp`
 * without asking the control plane: where the upstream is, how Gatehouse authenticates to it (the
 * credentials travel like provider credentials: plain in memory, sealed when persisted), which
 * tools are enabled (the integration's and the server's switches, already combined), and who may
 * call it.
 */
import { z } from 'zod'

const id = z.string().min(1).max(255)

/** How Gatehouse authenticates to the upstream server; the client's own credential is never passed on. */
export const snapshotMcpAuth = z.discriminatedUnion('type', [
  z.object({ type: z.literal('none') }),
  /** Static headers (an API key, a bearer token), set on every upstream request. */
  z.object({ type: z.literal('headers'), headers: z.record(z.string().min(1).max(255), z.string().max(16_384)) }),
  /** OAuth 2.0 client credentials: a token fetched from `tokenUrl`, cached until shortly before it expires. */
  z.object({
    type: z.literal('oauth_client_credentials'),
    tokenUrl: z.url(),
    clientId: z.string().min(1).max(1024),
    clientSecret: z.string().min(1).max(16_384),
    scope: z.string().max(2048).nullable().default(null),
    audience: z.string().max(2048).nullable().default(null),
  }),
])

/** The fields of every server the gateway relays to (MCP and agent servers, agents.ts). */
export const snapshotServedServer = z.object({
  id,
  /** The name in the Gatehouse URL; unique per workspace. */
  slug: z.string().min(1).max(255),
  name: z.string().min(1).max(255),
  workspaceId: id,
  integrationId: id,
  network: z.enum(['public', 'private-allowed']).default('public'),
  auth: snapshotMcpAuth,
  /** Callers with no override below (and service keys, which belong to no user). */
  defaultUserAccess: z.enum(['allow', 'deny']).default('allow'),
  /** Per-user overrides: user id -> allowed. */
  userAccess: z.record(z.string(), z.boolean()).default({}),
  /** Disabled: archived, or cannot be served (the gateway answers 503). */
  status: z.enum(['active', 'disabled']).default('active'),
})

export const snapshotMcpServer = snapshotServedServer.extend({
  /** The upstream server's streamable HTTP endpoint. */
  url: z.url(),
  /** The tools clients may list and call: synced from the server, enabled by the integration and the server. */
  tools: z.array(z.string().min(1).max(512)).default([]),
})

export type SnapshotMcpServer = z.infer<typeof snapshotMcpServer>
export type SnapshotMcpAuth = z.infer<typeof snapshotMcpAuth>
