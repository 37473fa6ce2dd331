/**
 * What a logs or analytics request reads: the caller's reach (access.ts) narrowed to the named
 * workspace (`workspace_slug` or `workspace_id`, id or slug; ignored for workspace keys, which read
 * their own), and the parsed filters.
 */
import type { FastifyRequest } from 'fastify'
import { invalid } from '../../errors.ts'
import { readableScope, type WorkspaceReach } from '../../usage/access.ts'
import { parseFilters, type ParsedFilters } from '../../usage/filters.ts'
import type { AdminContext } from '../context.ts'
import { parse, principalOf } from '../http.ts'

export interface UsageScope {
  organizationId: string
  reach: WorkspaceReach[] | null
  filters: ParsedFilters
}

export async function usageScope(ctx: AdminContext, request: FastifyRequest, kind: 'logs' | 'analytics', scope: string | readonly string[]): Promise<UsageScope> {
  const principal = principalOf(request)
  const filters = parseFilters(request.query, parse)
  const reference = principal.keyType === 'workspace' ? undefined : (filters.query.workspace_slug ?? filters.query.workspace_id)
  let named: string[] | null = null
  if (reference !== undefined) {
    const workspace = await ctx.store.workspaces.get(principal.organizationId, reference)
    if (!workspace) throw invalid('workspace_slug', 'workspace_slug: workspace not found')
    named = [workspace.id]
  }
  const reach = await readableScope(ctx.store, principal, kind, scope, named)
  return { organizationId: principal.organizationId, reach, filters }
}
