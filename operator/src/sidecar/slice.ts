/**
 * The snapshot a sidecar receives: its Deployment's snapshot narrowed to the one bound workspace,
 * with no API keys but one record standing for the pod (hash `sidecarKeyHash`, which no presented
 * key can match). Providers, configs, guardrails, limits and prices of other workspaces are left
 * out, so a pod holds only the credentials its own workspace may use.
 */
import { sidecarKeyHash, validateSnapshot, type GatewaySnapshot, type SidecarIdentity } from '@gatehouse/gateway/snapshot'
import { SnapshotCompileError } from '../compile/snapshot.ts'

/** Scopes of the pod's principal: it calls models, nothing else. */
export const SIDECAR_SCOPES = ['completions.write']

export function sidecarSlice(snapshot: GatewaySnapshot, identity: Omit<SidecarIdentity, 'workspaceId'>, workspaceSlug: string): { snapshot: GatewaySnapshot; workspaceId: string } {
  const workspace = snapshot.workspaces.find((w) => w.slug === workspaceSlug && w.status === 'active')
  if (!workspace) throw new SnapshotCompileError([{ path: 'sidecar.workspace', message: `the deployment does not serve an active workspace '${workspaceSlug}'` }])
  const ours = (workspaceId: string | null): boolean => workspaceId === null || workspaceId === workspace.id
  const input = {
    ...snapshot,
    workspaces: [workspace],
    apiKeys: [
      {
        id: `sidecar:${identity.namespace}/${identity.serviceAccount}`,
        hash: sidecarKeyHash(identity),
        type: 'workspace' as const,
        subtype: 'service' as const,
        workspaceId: workspace.id,
        userId: null,
        scopes: SIDECAR_SCOPES,
        status: 'active' as const,
        expiresAt: null,
        defaultConfigId: null,
      },
    ],
    providers: snapshot.providers
      .filter((p) => (p.workspaceId === null ? p.allowAllWorkspaces || p.allowedWorkspaceIds.includes(workspace.id) : p.workspaceId === workspace.id))
      .map((p) => (p.workspaceId === null ? { ...p, allowAllWorkspaces: false, allowedWorkspaceIds: [workspace.id] } : p)),
    configs: snapshot.configs.filter((c) => ours(c.workspaceId)),
    guardrails: snapshot.guardrails.filter((g) => ours(g.workspaceId)),
    limits: snapshot.limits.filter((l) => ours(l.workspaceId)),
    prices: snapshot.prices.filter((p) => ours(p.workspaceId)),
  }
  const result = validateSnapshot(input)
  if (!result.ok) throw new SnapshotCompileError(result.problems)
  return { snapshot: result.snapshot, workspaceId: workspace.id }
}
