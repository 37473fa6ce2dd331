/** Guardrail resources: checks and actions, validated by the admin API's own catalogue. */
import type { Guardrail } from '@gatehouse/crds'
import { z } from 'zod'
import { actionsSchema, checkSchema } from '../../admin/routes/guardrail-checks.ts'
import { assertOwnable, changedFields, parseWith, workspaceIdFor, type ResourceHandler } from '../resource.ts'

const guardrailSlug = (guardrail: Guardrail): string => guardrail.spec.slug ?? guardrail.metadata.name
const guardrailChecks = z.array(checkSchema)

export const guardrailHandler: ResourceHandler<'Guardrail'> = {
  async apply(tx, context, declared, item) {
    const guardrail = item.resource
    const { spec } = guardrail
    const organizationId = context.organizationId
    // The admin API's catalogue checks and defaults the parameters, so both ways in store the same row.
    const checks = parseWith(guardrailChecks, spec.checks.map((check) => ({
      id: check.id, ...(check.name === undefined ? {} : { name: check.name }), is_enabled: check.enabled, parameters: check.parameters ?? {},
    })), 'spec.checks', item)
    const actions = parseWith(actionsSchema, {
      deny: spec.actions.deny,
      async: spec.actions.async,
      ...(spec.actions.onSuccess === undefined ? {} : { on_success: spec.actions.onSuccess }),
      ...(spec.actions.onFail === undefined ? {} : { on_fail: spec.actions.onFail }),
      ...(spec.actions.holdBack === undefined ? {} : { hold_back: { mode: spec.actions.holdBack.mode, ...(spec.actions.holdBack.windowChars === undefined ? {} : { window_chars: spec.actions.holdBack.windowChars }) } }),
    }, 'spec.actions', item)
    const workspaceId = await workspaceIdFor(tx, context, declared.workspaces, spec.workspace, item)
    const slug = guardrailSlug(guardrail)
    let existing = await tx.guardrails.get(organizationId, slug)
    assertOwnable(context, item, existing)
    // A guardrail does not move between workspaces (its permissions follow the workspace): replace it.
    if (existing && existing.workspaceId !== workspaceId) {
      await tx.guardrails.delete(organizationId, existing.id)
      existing = null
    }
    const fields = { name: spec.name ?? guardrail.metadata.name, checks, actions, hooks: [...spec.hooks], status: 'active' as const, managedBy: context.managedBy }
    if (!existing) return (await tx.guardrails.create({ organizationId, workspaceId, slug, ...fields })).id
    // Only what changed: a rewrite of unchanged checks would mint a new version.
    const patch = changedFields(existing, fields)
    if (Object.keys(patch).length > 0) await tx.guardrails.update(organizationId, existing.id, patch)
    return existing.id
  },
  find: (tx, context, item, _workspaces, adminId) => tx.guardrails.get(context.organizationId, adminId ?? guardrailSlug(item.resource)),
  delete: (tx, organizationId, id) => tx.guardrails.delete(organizationId, id),
  exists: async (store, organizationId, adminId) => (await store.guardrails.get(organizationId, adminId))?.id === adminId,
}
