/**
 * The admin store: one interface over PostgreSQL (`pg`) and embedded PGlite.
 *
 *   openStore({ kind: 'pglite', dataDir: null })          // in memory (tests)
 *   openStore({ kind: 'pglite', dataDir: '.data/db' })    // embedded mode (created by a child process on a first start)
 *   openStore({ kind: 'postgres', url: 'postgres://…' })  // cluster mode
 *
 * Opening applies the migrations in ./migrations (one dialect for both). Repositories hang off the
 * store; `store.transaction(async (tx) => …)` gives the same repositories bound to one transaction
 * for changes that touch several rows. Every committed write that affects the gateway is published
 * on `store.changes` (`store.onChange(listener)`); on PostgreSQL it also goes out via NOTIFY so
 * other control-plane replicas hear it.
 *
 * Provider credentials are sealed with the keyring from `encryptionKey` (default: env
 * GATEHOUSE_ENCRYPTION_KEY, see crypto/envelope.ts); without one, writing credentials fails.
 */
import { parseKeyring, type Keyring } from '../crypto/envelope.ts'
import { ChangeFeed, type ChangeListener } from './change-feed.ts'
import { migrate } from './migrate.ts'
import { openPgliteDatabase } from './pglite-driver.ts'
import { ensurePgliteDataDir } from './pglite-first-start.ts'
import { openPostgresDatabase } from './postgres-driver.ts'
import { ApiKeyRepository } from './repos/api-keys.ts'
import { AuditRepository } from './repos/audit.ts'
import { ConfigRepository } from './repos/configs.ts'
import { DeploymentRepository } from './repos/deployments.ts'
import { FeedbackRepository } from './repos/feedback.ts'
import { GuardrailRepository } from './repos/guardrails.ts'
import { IntegrationRepository } from './repos/integrations.ts'
import { InviteRepository } from './repos/invites.ts'
import { MemberRepository } from './repos/members.ts'
import { AGENT_INTEGRATIONS, McpIntegrationRepository } from './repos/mcp-integrations.ts'
import { AGENT_SERVERS, McpServerRepository } from './repos/mcp-servers.ts'
import { NotificationRepository } from './repos/notifications.ts'
import { OrganisationGuardrailRepository } from './repos/organisation-guardrails.ts'
import { ModelPriceRepository } from './repos/model-prices.ts'
import { OrganizationRepository } from './repos/organizations.ts'
import { PolicyRepository } from './repos/policies.ts'
import { PromptCollectionRepository } from './repos/prompt-collections.ts'
import { PromptLabelRepository } from './repos/prompt-labels.ts'
import { PromptPartialRepository } from './repos/prompt-partials.ts'
import { PromptRepository } from './repos/prompts.ts'
import { ProviderRepository } from './repos/providers.ts'
import { ScimRepository } from './repos/scim.ts'
import { SecretReferenceRepository } from './repos/secret-references.ts'
import { SessionRepository } from './repos/sessions.ts'
import { BufferedSink, type ChangeSink } from './repos/sink.ts'
import { CredentialResealer } from './repos/reseal.ts'
import { UsageLogRepository } from './repos/usage-logs.ts'
import { UserRepository } from './repos/users.ts'
import { WorkspaceRepository } from './repos/workspaces.ts'
import type { SqlDatabase, SqlExecutor } from './sql.ts'

export type StoreOptions =
  | { kind: 'pglite'; dataDir: string | null; encryptionKey?: string }
  | { kind: 'postgres'; url: string; encryptionKey?: string; maxConnections?: number }

export interface Repositories {
  organizations: OrganizationRepository
  users: UserRepository
  workspaces: WorkspaceRepository
  members: MemberRepository
  invites: InviteRepository
  apiKeys: ApiKeyRepository
  audit: AuditRepository
  providers: ProviderRepository
  configs: ConfigRepository
  integrations: IntegrationRepository
  secretReferences: SecretReferenceRepository
  guardrails: GuardrailRepository
  organisationGuardrails: OrganisationGuardrailRepository
  deployments: DeploymentRepository
  policies: PolicyRepository
  modelPrices: ModelPriceRepository
  feedback: FeedbackRepository
  prompts: PromptRepository
  promptPartials: PromptPartialRepository
  promptLabels: PromptLabelRepository
  promptCollections: PromptCollectionRepository
  mcpIntegrations: McpIntegrationRepository
  mcpServers: McpServerRepository
  agentIntegrations: McpIntegrationRepository
  agentServers: McpServerRepository
  scim: ScimRepository
  sessions: SessionRepository
  /** E-mail notifications sent (or to send) and singleton worker leases. */
  notifications: NotificationRepository
  /** Re-seals credentials still under an old encryption key (key rotation). */
  credentials: CredentialResealer
}

export interface Store extends Repositories {
  readonly kind: 'pglite' | 'postgres'
  /** Usage records and their rollups (written in their own transactions, never inside `transaction`). */
  readonly usageLogs: UsageLogRepository
  readonly changes: ChangeFeed
  onChange(listener: ChangeListener): () => void
  /** Runs `fn` in one transaction; its changes are published only after commit. */
  transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T>
  /** Liveness of the database (for /readyz). */
  ping(): Promise<void>
  close(): Promise<void>
}

function repositories(db: SqlExecutor, sink: ChangeSink, keyring: Keyring | null): Repositories {
  return {
    organizations: new OrganizationRepository(db, sink),
    users: new UserRepository(db, sink),
    workspaces: new WorkspaceRepository(db, sink),
    members: new MemberRepository(db, sink),
    invites: new InviteRepository(db),
    apiKeys: new ApiKeyRepository(db, sink),
    audit: new AuditRepository(db),
    providers: new ProviderRepository(db, sink, keyring),
    configs: new ConfigRepository(db, sink),
    integrations: new IntegrationRepository(db, sink, keyring),
    secretReferences: new SecretReferenceRepository(db, sink),
    guardrails: new GuardrailRepository(db, sink),
    organisationGuardrails: new OrganisationGuardrailRepository(db, sink),
    deployments: new DeploymentRepository(db, sink),
    policies: new PolicyRepository(db, sink),
    modelPrices: new ModelPriceRepository(db, sink),
    feedback: new FeedbackRepository(db),
    prompts: new PromptRepository(db, sink),
    promptPartials: new PromptPartialRepository(db, sink),
    promptLabels: new PromptLabelRepository(db, sink),
    promptCollections: new PromptCollectionRepository(db),
    mcpIntegrations: new McpIntegrationRepository(db, sink, keyring),
    mcpServers: new McpServerRepository(db, sink),
    agentIntegrations: new McpIntegrationRepository(db, sink, keyring, AGENT_INTEGRATIONS),
    agentServers: new McpServerRepository(db, sink, AGENT_SERVERS),
    scim: new ScimRepository(db, sink),
    sessions: new SessionRepository(db),
    notifications: new NotificationRepository(db),
    credentials: new CredentialResealer(db, keyring),
  }
}

export async function openStore(options: StoreOptions): Promise<Store> {
  // A first start creates the database in a child process (its memory is not this process's).
  if (options.kind === 'pglite' && options.dataDir !== null) await ensurePgliteDataDir(options.dataDir)
  const db: SqlDatabase = options.kind === 'pglite'
    ? await openPgliteDatabase(options.dataDir)
    : await openPostgresDatabase(options.maxConnections === undefined ? { url: options.url } : { url: options.url, maxConnections: options.maxConnections })
  return storeOnDatabase(db, options)
}

/**
 * The store over an already opened database (migrates it first). `openStore` is the usual entry;
 * tests use this to keep a raw handle on the database they inspect.
 */
export async function storeOnDatabase(db: SqlDatabase, options: { encryptionKey?: string } = {}): Promise<Store> {
  const keyringSpec = options.encryptionKey ?? process.env.GATEHOUSE_ENCRYPTION_KEY
  const keyring = keyringSpec ? parseKeyring(keyringSpec) : null
  try {
    await migrate(db)
  } catch (error) {
    await db.close()
    throw error
  }
  const changes = new ChangeFeed(db)
  await changes.start()
  // Outside a transaction each statement commits on its own, so its change is published at once.
  const immediate: ChangeSink = { add: (change) => void changes.publish([change]) }
  return {
    kind: db.kind,
    changes,
    ...repositories(db, immediate, keyring),
    usageLogs: new UsageLogRepository(db),
    onChange: (listener) => changes.onChange(listener),
    async transaction(fn) {
      const sink = new BufferedSink()
      const result = await db.transaction((tx) => fn(repositories(tx, sink, keyring)))
      await changes.publish(sink.changes)
      return result
    },
    async ping() {
      await db.query('SELECT 1')
    },
    async close() {
      await changes.stop()
      await db.close()
    },
  }
}

export { StoreUnavailableError } from './errors.ts'
export type { ChangeEvent, ChangeListener, StoreChange } from './change-feed.ts'
export type { ApiKeyRecord, ApiKeyStatus, ApiKeySubtype, ApiKeyType, RotationPolicy } from './repos/api-keys.ts'
export type { AuditEntry, AuditRecord } from './repos/audit.ts'
export type { ConfigRecord, ConfigVersionRecord } from './repos/configs.ts'
export type { DeploymentRecord, DeploymentType } from './repos/deployments.ts'
export type { GuardrailRecord } from './repos/guardrails.ts'
export type { OrganisationGuardrails } from './repos/organisation-guardrails.ts'
export type { GlobalWorkspaceAccess, IntegrationModel, IntegrationRecord, WorkspaceAccess } from './repos/integrations.ts'
export type { PolicyKind, PolicyRecord } from './repos/policies.ts'
export type { FeedbackRecord } from './repos/feedback.ts'
export type { ModelPriceFields, ModelPriceKey, ModelPriceRecord } from './repos/model-prices.ts'
export type { ResealReport } from './repos/reseal.ts'
export type { NotificationKind, NotificationRecord } from './repos/notifications.ts'
export { DEFAULT_RETENTION, type IngestOutcome, type RetentionPolicy } from './repos/usage-logs.ts'
export type { SecretManagerType, SecretReferenceRecord } from './repos/secret-references.ts'
export type { InviteRecord } from './repos/invites.ts'
export type { MemberRecord, WorkspaceRole } from './repos/members.ts'
export type { McpAuthType, McpCapability, McpCapabilityType, McpConfigurations, McpCredentials, McpIntegrationRecord, McpServerInfo, McpSyncResult, McpTransport } from './repos/mcp-integrations.ts'
export type { McpCapabilityOverride, McpDefaultUserAccess, McpServerRecord, McpUserAccess } from './repos/mcp-servers.ts'
export type { OrganizationRecord } from './repos/organizations.ts'
export type { PromptRecord, PromptVersionContent, PromptVersionRecord } from './repos/prompts.ts'
export type { PromptPartialRecord, PromptPartialVersionRecord } from './repos/prompt-partials.ts'
export type { PromptLabelRecord } from './repos/prompt-labels.ts'
export type { PromptCollectionRecord } from './repos/prompt-collections.ts'
export type { ProviderRecord, SecretMapping } from './repos/providers.ts'
export type { OrgRole, UserPatch, UserRecord, UserStatus } from './repos/users.ts'
export type { ScimGroupRecord, ScimMappingRecord, ScimTokenRecord } from './repos/scim.ts'
export type { SessionRecord, SsoLogin } from './repos/sessions.ts'
export type { WorkspaceRecord, WorkspaceStatus } from './repos/workspaces.ts'
