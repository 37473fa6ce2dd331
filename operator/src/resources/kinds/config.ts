/** Config resources: routing configs; each write is a new version of the (workspace, slug). */
import type { Config } from '@gatehouse/crds'
import { assertOwnable, referencedWorkspaceId, workspaceIdFor, type ResourceHandler } from '../resource.ts'

export const configSlug = (config: Config): string => config.spec.slug ?? config.metadata.name

export const configHandler: ResourceHandler<'Config'> = {
  async apply(tx, context, declared, item) {
    const config = item.resource
    const workspaceId = await workspaceIdFor(tx, context, declared.workspaces, config.spec.workspace, item)
    const slug = configSlug(config)
    assertOwnable(context, item, await tx.configs.get(context.organizationId, slug, workspaceId))
    const record = await tx.configs.upsert({
      organizationId: context.organizationId,
      workspaceId,
      slug,
      name: config.spec.name ?? config.metadata.name,
      config: config.spec.config as Record<string, unknown>,
      isDefault: config.spec.isDefault ?? false,
      managedBy: context.managedBy,
    })
    return record.id
  },
  async find(tx, context, item, workspaces, adminId) {
    const organizationId = context.organizationId
    if (adminId !== null) return tx.configs.get(organizationId, adminId)
    const workspaceId = await referencedWorkspaceId(tx, organizationId, workspaces, item.resource.spec.workspace)
    return workspaceId === undefined ? null : tx.configs.get(organizationId, configSlug(item.resource), workspaceId)
  },
  delete: (tx, organizationId, id) => tx.configs.delete(organizationId, id),
  exists: async (store, organizationId, adminId) => (await store.configs.get(organizationId, adminId))?.id === adminId,
}
