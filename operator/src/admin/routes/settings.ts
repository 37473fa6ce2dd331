/**
 * Organisation settings: GET/PUT /v1/organisation/settings (session, security and user-key
 * settings; see identity/settings.ts). PUT merges the given sections into the stored document.
 */
import type { FastifyInstance } from 'fastify'
import { requireCapability } from '../../identity/capabilities.ts'
import { effectiveSettings, mergeSettings, normaliseSettings, organisationSettingsSchema } from '../../identity/settings.ts'
import { notFound } from '../../errors.ts'
import type { AdminContext } from '../context.ts'
import { audit, parse, principalOf } from '../http.ts'

export function settingsRoutes(app: FastifyInstance, ctx: AdminContext): void {
  app.get('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'organisation_settings', 'read')
    const organisation = await ctx.store.organizations.get(principal.organizationId)
    if (!organisation) throw notFound('organisation')
    return { ...effectiveSettings(organisation.settings), object: 'organisation-settings' }
  })

  app.put('/', async (request) => {
    const principal = principalOf(request)
    requireCapability(principal, 'organisation_settings', 'update')
    const body = parse(organisationSettingsSchema, request.body)
    const organisation = await ctx.store.organizations.get(principal.organizationId)
    if (!organisation) throw notFound('organisation')
    const merged = mergeSettings(normaliseSettings(organisation.settings), body)
    // The merged document is validated again: a partial update cannot leave it inconsistent.
    parse(organisationSettingsSchema, merged)
    const updated = await ctx.store.organizations.updateSettings(organisation.id, merged)
    audit(request, { action: 'organisation_settings.update', resourceType: 'organisation', resourceId: organisation.id, details: { sections: Object.keys(body) } })
    return { ...effectiveSettings(updated!.settings), object: 'organisation-settings' }
  })
}
