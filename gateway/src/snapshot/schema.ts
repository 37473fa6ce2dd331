/**
 * The GatewaySnapshot: the one contract between the control plane and the data plane. The
 * operator (or the embedded control plane, or a plain file) produces it; the gateway validates it
 * fully before swapping it in. Policy lives here and changes without restarts; boot settings
 * (ports, URLs) are environment variables.
 */
import { z } from 'zod'
import { snapshotGuardrail, snapshotGuardrailDefaults, snapshotLimit, snapshotPrice } from './policies.ts'
import { snapshotPrompt, snapshotPromptPartial } from './prompts.ts'
import { logLevel } from './usage-record.ts'
import { snapshotMcpServer } from './mcp.ts'
import { snapshotAgentServer } from './agents.ts'

export const SNAPSHOT_SCHEMA_VERSION = 1

const id = z.string().min(1).max(255)
const isoTime = z.iso.datetime({ offset: true })

export const snapshotWorkspace = z.object({
  id,
  slug: z.string().min(1).max(255),
  name: z.string().min(1).max(255),
  status: z.enum(['active', 'archived']),
  /** Config applied when a request names none. */
  defaultConfigId: id.nullable().default(null),
  /** What usage records keep: counts only (`off`), plus metadata, or the (redacted) bodies too. */
  logLevel: logLevel.default('full'),
})

export const snapshotApiKey = z.object({
  id,
  /** HMAC-SHA256(pepper, raw key), hex. The raw key never leaves the request that created it. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  type: z.enum(['admin', 'workspace']),
  subtype: z.enum(['service', 'user']),
  workspaceId: id.nullable(),
  userId: id.nullable().default(null),
  scopes: z.array(z.string()),
  status: z.enum(['active', 'expired', 'revoked']),
  /** After this instant the key is refused even before the expiry worker marks it. */
  expiresAt: isoTime.nullable().default(null),
  defaultConfigId: id.nullable().default(null),
})

/** Credentials in memory are plain; the persisted form of a snapshot is encrypted. */
export const snapshotCredentials = z.record(z.string(), z.string())

export const snapshotProvider = z.object({
  id,
  /** The `@slug` clients name; unique per workspace (or organisation-wide when workspaceId is null). */
  slug: z.string().min(1).max(255),
  name: z.string().min(1).max(255),
  /** Adapter kind: `openai`, `anthropic`, a table row such as `groq`, ... */
  kind: z.string().min(1).max(64),
  baseUrl: z.url().nullable().default(null),
  credentials: snapshotCredentials.default({}),
  /** Provider options (api version, deployment, region, project...). */
  options: z.record(z.string(), z.string()).default({}),
  workspaceId: id.nullable().default(null),
  /** When workspaceId is null: which workspaces may use it. */
  allowAllWorkspaces: z.boolean().default(true),
  allowedWorkspaceIds: z.array(id).default([]),
  status: z.enum(['active', 'disabled']).default('active'),
  /** Optional model allowlist; empty means any model. */
  models: z.array(z.string()).default([]),
  /**
   * Which addresses the provider's base URL and custom hosts may reach. `public`: never loopback,
   * private, link-local or CGNAT ranges (upstream/ssrf.ts). `private-allowed`: those too, for
   * providers an operator declared (file or Kubernetes resources) or where an organisation setting
   * allows it; never something a workspace principal can choose. Cloud metadata is never reachable.
   */
  network: z.enum(['public', 'private-allowed']).default('public'),
  /** The integration it draws its account from (usage records and integration prices name it). */
  integrationId: id.nullable().default(null),
})

export const snapshotConfig = z.object({
  id,
  slug: z.string().min(1).max(255),
  workspaceId: id.nullable().default(null),
  version: z.number().int().min(1).default(1),
  /** The routing config object; validated by the gateway's config schema at compile time. */
  config: z.record(z.string(), z.unknown()),
})

/**
 * The gateway deployment a snapshot was compiled for (gateways that name their deployment get a
 * snapshot restricted to the workspaces it serves). Its config applies when neither the request,
 * the key nor the workspace names one.
 */
export const snapshotDeployment = z.object({
  id,
  slug: z.string().min(1).max(255),
  type: z.enum(['production', 'non-production']),
  configId: id.nullable().default(null),
})

export const gatewaySnapshot = z.object({
  schemaVersion: z.literal(SNAPSHOT_SCHEMA_VERSION),
  /** Monotonic; gateways ACK or NACK by generation. */
  generation: z.number().int().min(0),
  producedAt: isoTime,
  producedBy: z.object({ component: z.string(), version: z.string() }),
  organizationId: id,
  workspaces: z.array(snapshotWorkspace),
  apiKeys: z.array(snapshotApiKey),
  providers: z.array(snapshotProvider),
  configs: z.array(snapshotConfig).default([]),
  /** Null: the organisation-wide snapshot (every workspace). */
  deployment: snapshotDeployment.nullable().default(null),
  /** Guardrails by id; configs, workspaces and the organisation attach them. */
  guardrails: z.array(snapshotGuardrail).default([]),
  /** The organisation's and the workspaces' default guardrails. */
  guardrailDefaults: z.array(snapshotGuardrailDefaults).default([]),
  /** Every rate limit and budget that applies, in one enforceable form (see policies.ts). */
  limits: z.array(snapshotLimit).default([]),
  /** Price overrides on top of the shipped pricing table. */
  prices: z.array(snapshotPrice).default([]),
  /** Saved prompts (their published and labelled versions) and partials, rendered by the gateway. */
  prompts: z.array(snapshotPrompt).default([]),
  promptPartials: z.array(snapshotPromptPartial).default([]),
  /** MCP servers served at /v1/mcp/{slug}/mcp (mcp.ts). */
  mcpServers: z.array(snapshotMcpServer).default([]),
  /** Agent (A2A) servers served at /v1/agents/{slug} (agents.ts). */
  agentServers: z.array(snapshotAgentServer).default([]),
  /**
   * Deactivated users, by user id and by their identity provider's `sub`: JWTs naming one are
   * refused (their user keys are already compiled as revoked).
   */
  revokedSubjects: z.array(z.string().min(1).max(1024)).default([]),
})

export type GatewaySnapshot = z.infer<typeof gatewaySnapshot>
export type GatewaySnapshotInput = z.input<typeof gatewaySnapshot>
export type SnapshotWorkspace = z.infer<typeof snapshotWorkspace>
export type SnapshotApiKey = z.infer<typeof snapshotApiKey>
export type SnapshotProvider = z.infer<typeof snapshotProvider>
export type ProviderNetwork = SnapshotProvider['network']
export type SnapshotConfig = z.infer<typeof snapshotConfig>
export type SnapshotDeployment = z.infer<typeof snapshotDeployment>

/**
 * The routing config schema is part of the contract: the control plane validates saved configs
 * with the same rules the gateway applies to `x-gateway-config`.
 */
export {
  CONFIG_LIMITS,
  configPath,
  isForwardableHeader,
  UNFORWARDABLE_HEADERS,
  validateConfig,
  type ConfigIssue,
  type ConfigValidation,
} from './config-schema.ts'
