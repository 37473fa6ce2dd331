/**
 * The registry of admin route modules. Each module is one concern with its own file; adding a
 * resource (providers, configs, deployments, ...) means writing a module and listing it here.
 * A module may be mounted under several prefixes (workspaces are served at both
 * /v1/admin/workspaces and /v1/workspaces).
 */
import type { FastifyInstance } from 'fastify'
import type { AdminContext } from '../context.ts'
import { agentIntegrationRoutes, agentServerRoutes } from './agents.ts'
import { analyticsRoutes } from './analytics.ts'
import { apiKeyRoutes } from './api-keys.ts'
import { auditLogRoutes } from './audit-logs.ts'
import { configRoutes } from './configs.ts'
import { deploymentRoutes } from './deployments.ts'
import { encryptionRoutes } from './encryption.ts'
import { feedbackRoutes } from './feedback.ts'
import { guardrailRoutes } from './guardrails.ts'
import { healthRoutes } from './health.ts'
import { integrationRoutes } from './integrations.ts'
import { inviteRoutes } from './invites.ts'
import { logRoutes } from './logs.ts'
import { mcpIntegrationRoutes } from './mcp-integrations.ts'
import { mcpServerRoutes } from './mcp-servers.ts'
import { memberRoutes } from './members.ts'
import { organisationGuardrailRoutes } from './organisation-guardrails.ts'
import { modelPricingRoutes } from './model-pricing.ts'
import { policyRoutes } from './policies.ts'
import { promptCollectionRoutes } from './prompt-collections.ts'
import { promptLabelRoutes } from './prompt-labels.ts'
import { promptPartialRoutes } from './prompt-partials.ts'
import { promptRoutes } from './prompts.ts'
import { providerRoutes } from './providers.ts'
import { publicPricingRoutes } from './public-pricing.ts'
import { scimRoutes } from './scim.ts'
import { scimGroupRoutes, scimTokenRoutes, scimWorkspaceRoutes } from './scim-admin.ts'
import { secretReferenceRoutes } from './secret-references.ts'
import { ssoRoutes } from './sso.ts'
import { settingsRoutes } from './settings.ts'
import { userRoutes } from './users.ts'
import { workspaceRoutes } from './workspaces.ts'

export interface AdminRouteModule {
  name: string
  prefixes: readonly string[]
  register(app: FastifyInstance, ctx: AdminContext): void
}

export const adminRouteModules: AdminRouteModule[] = [
  { name: 'workspaces', prefixes: ['/v1/admin/workspaces', '/v1/workspaces'], register: workspaceRoutes },
  { name: 'workspace-members', prefixes: ['/v1/admin/workspaces/:workspaceId/users', '/v1/workspaces/:workspaceId/users'], register: memberRoutes },
  { name: 'users', prefixes: ['/v1/admin/users'], register: userRoutes },
  { name: 'invites', prefixes: ['/v1/admin/users/invites'], register: inviteRoutes },
  { name: 'api-keys', prefixes: ['/v1/api-keys'], register: apiKeyRoutes },
  { name: 'organisation-settings', prefixes: ['/v1/organisation/settings', '/v1/admin/organisation/settings'], register: settingsRoutes },
  { name: 'audit-logs', prefixes: ['/v1/audit-logs'], register: auditLogRoutes },
  { name: 'providers', prefixes: ['/v1/providers'], register: providerRoutes('provider') },
  { name: 'virtual-keys', prefixes: ['/v1/virtual-keys'], register: providerRoutes('virtual-key') },
  { name: 'integrations', prefixes: ['/v1/integrations'], register: integrationRoutes },
  { name: 'secret-references', prefixes: ['/v1/secret-references'], register: secretReferenceRoutes },
  { name: 'configs', prefixes: ['/v1/configs'], register: configRoutes },
  { name: 'guardrails', prefixes: ['/v1/guardrails'], register: guardrailRoutes },
  { name: 'organisation-guardrails', prefixes: ['/v1/organisation/guardrails', '/v1/admin/organisation/guardrails'], register: organisationGuardrailRoutes },
  { name: 'deployments', prefixes: ['/v1/deployments'], register: deploymentRoutes },
  { name: 'rate-limit-policies', prefixes: ['/v1/policies/rate-limits'], register: policyRoutes('rate_limits') },
  { name: 'usage-limit-policies', prefixes: ['/v1/policies/usage-limits'], register: policyRoutes('usage_limits') },
  { name: 'health', prefixes: ['/v1/health'], register: healthRoutes },
  { name: 'encryption', prefixes: ['/v1/admin/encryption'], register: encryptionRoutes },
  { name: 'logs', prefixes: ['/v1/logs'], register: logRoutes },
  { name: 'analytics', prefixes: ['/v1/analytics'], register: analyticsRoutes },
  { name: 'feedback', prefixes: ['/v1/feedback'], register: feedbackRoutes },
  { name: 'model-pricing', prefixes: ['/v1/model-pricing'], register: modelPricingRoutes },
  { name: 'prompts', prefixes: ['/v1/prompts'], register: promptRoutes },
  { name: 'prompt-partials', prefixes: ['/v1/prompts/partials'], register: promptPartialRoutes },
  { name: 'prompt-labels', prefixes: ['/v1/labels'], register: promptLabelRoutes },
  { name: 'prompt-collections', prefixes: ['/v1/collections'], register: promptCollectionRoutes },
  { name: 'mcp-integrations', prefixes: ['/v1/mcp-integrations'], register: mcpIntegrationRoutes },
  { name: 'mcp-servers', prefixes: ['/v1/mcp-servers'], register: mcpServerRoutes },
  { name: 'agent-integrations', prefixes: ['/v1/agent-integrations'], register: agentIntegrationRoutes },
  { name: 'agent-servers', prefixes: ['/v1/agent-servers'], register: agentServerRoutes },
  { name: 'public-pricing', prefixes: [''], register: publicPricingRoutes },
  { name: 'scim-tokens', prefixes: ['/v1/admin/scim/tokens'], register: scimTokenRoutes },
  { name: 'scim-workspaces', prefixes: ['/v1/scim/workspaces'], register: scimWorkspaceRoutes },
  { name: 'scim-groups', prefixes: ['/v1/scim/groups'], register: scimGroupRoutes },
  { name: 'scim', prefixes: ['/v1/scim/:organisationId'], register: scimRoutes },
  { name: 'sso', prefixes: ['/v1/auth/sso'], register: ssoRoutes },
]
