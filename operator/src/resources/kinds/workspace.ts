/** Workspace resources: the tenancy unit everything else may refer to, applied first. */
import type { Workspace } from '@gatehouse/crds'
import { assertOwnable, type ResourceHandler } from '../resource.ts'

export const workspaceSlug = (workspace: Workspace): string => workspace.spec.slug ?? workspace.metadata.name

/** The admin API's names for the defaults a Workspace CR declares (guardrails by name = slug). */
function storedDefaults(defaults: Workspace['spec']['defaults']): Record<string, unknown> {
  if (!defaults) return {}
  const { inputGuardrails, outputGuardrails, ...rest } = defaults
  return {
    ...rest,
    ...(inputGuardrails === undefined ? {} : { input_guardrails: inputGuardrails }),
    ...(outputGuardrails === undefined ? {} : { output_guardrails: outputGuardrails }),
  }
}

export const workspaceHandler: ResourceHandler<'Workspace'> = {
  async apply(tx, context, _declared, item) {
    const workspace = item.resource
    const slug = workspaceSlug(workspace)
    const fields = {
      slug,
      name: workspace.spec.name ?? workspace.metadata.name,
      description: workspace.spec.description ?? null,
      defaults: storedDefaults(workspace.spec.defaults),
      usageLimits: workspace.spec.usageLimits ?? [],
      rateLimits: workspace.spec.rateLimits ?? [],
      managedBy: context.managedBy,
    }
    const existing = await tx.workspaces.get(context.organizationId, slug)
    assertOwnable(context, item, existing)
    if (!existing) {
      const created = await tx.workspaces.create({ organizationId: context.organizationId, ...fields })
      if (workspace.spec.archived) await tx.workspaces.update(context.organizationId, created.id, { status: 'archived' })
      return created.id
    }
    await tx.workspaces.update(context.organizationId, existing.id, { ...fields, status: workspace.spec.archived ? 'archived' : 'active' })
    return existing.id
  },
  find: (tx, context, item, _workspaces, adminId) => tx.workspaces.get(context.organizationId, adminId ?? workspaceSlug(item.resource)),
  delete: (tx, organizationId, id) => tx.workspaces.delete(organizationId, id),
  exists: async (store, organizationId, adminId) => (await store.workspaces.get(organizationId, adminId))?.id === adminId,
}
