/** Deployment resources: a config served to a set of workspaces (or, with `spec.sidecar`, to pods). */
import type { Deployment } from '@gatehouse/crds'
import { assertOwnable, changedFields, objectLabel, ResourceError, workspaceIdFor, type ResourceHandler } from '../resource.ts'

const deploymentSlug = (deployment: Deployment): string => deployment.spec.slug ?? deployment.metadata.name

export const deploymentHandler: ResourceHandler<'Deployment'> = {
  async apply(tx, context, declared, item) {
    const deployment = item.resource
    const { spec } = deployment
    const organizationId = context.organizationId
    const config = await tx.configs.get(organizationId, declared.configs.get(spec.config) ?? spec.config)
    if (!config) throw new ResourceError(item.source, objectLabel(deployment), 'spec.config', `no Config named '${spec.config}'`, 'RefNotFound')
    const allowedWorkspaceIds: string[] = []
    for (const [index, reference] of (spec.workspaces ?? []).entries()) {
      allowedWorkspaceIds.push((await workspaceIdFor(tx, context, declared.workspaces, reference, item, `spec.workspaces[${index}]`))!)
    }
    const fields = {
      name: spec.name ?? deployment.metadata.name,
      description: null,
      type: spec.type,
      configId: config.id,
      // As through the admin API: a workspace list narrows the deployment, no list serves every workspace.
      allowAllWorkspaces: allowedWorkspaceIds.length === 0 && (spec.allowAllWorkspaces ?? true),
      allowedWorkspaceIds,
      status: 'active' as const,
      managedBy: context.managedBy,
    }
    const slug = deploymentSlug(deployment)
    const existing = await tx.deployments.get(organizationId, slug)
    assertOwnable(context, item, existing)
    if (!existing) return (await tx.deployments.create({ organizationId, slug, ...fields })).id
    const patch = changedFields(existing, fields)
    if (Object.keys(patch).length > 0) await tx.deployments.update(organizationId, existing.id, patch)
    return existing.id
  },
  find: (tx, context, item, _workspaces, adminId) => tx.deployments.get(context.organizationId, adminId ?? deploymentSlug(item.resource)),
  delete: (tx, organizationId, id) => tx.deployments.delete(organizationId, id),
  exists: async (store, organizationId, adminId) => (await store.deployments.get(organizationId, adminId))?.id === adminId,
}
