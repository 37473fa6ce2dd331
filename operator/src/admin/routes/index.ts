/**
 * The registry of admin route modules. Each module is one concern with its own file; adding a
 * resource (providers, configs, deployments, ...) means writing a module and listing it here.
 * A module may be mounted under several prefixes (workspaces are served at both
 * /v1/admin/workspaces and /v1/workspaces).
 */
import type { FastifyInstance } from 'fastify'
import type { AdminContext } from '../context.ts'
import { apiKeyRoutes } from './api-keys.ts'
import { auditLogRoutes } from './audit-logs.ts'
import { inviteRoutes } from './invites.ts'
import { memberRoutes } from './members.ts'
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
]
