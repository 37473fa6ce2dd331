/**
 * The organisation's guardrails (the spec's Org Guardrails): GET/PUT /v1/organisation/guardrails.
 * Organisation-level guardrails (no workspace) listed here run on every workspace's requests, as
 * input guardrails (before the request) or output guardrails (on the answer), together with the
 * workspace's defaults and the config's, each guardrail once. PUT replaces the lists given.
 *
 * Exemptions (the spec's `organisation_exclusions.{list,update}` scopes): GET/PUT
 * /v1/organisation/guardrails/exclusions lists or replaces the workspaces whose requests never meet
 * the organisation's guardrails (their own defaults and their configs' guardrails still run).
 */
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { enforcementView } from '../../enforcement.ts'
import { invalid } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import type { OrganisationGuardrails } from '../../store/index.ts'
import type { AdminContext } from '../context.ts'
import { audit, parse, principalOf } from '../http.ts'
import { requireScope } from './resource-access.ts'

const references = z.array(z.string().min(1).max(255)).max(50)
const updateSchema = z.strictObject({ input_guardrails: references.optional(), output_guardrails: references.optional() })
const exclusionsSchema = z.strictObject({ workspaces: z.array(z.string().min(1).max(255)).max(1000) })

export function organisationGuardrailRoutes(app: FastifyInstance, ctx: AdminContext): void {
  async function view(principal: Principal): Promise<Record<string, unknown>> {
    const lists = await ctx.store.organisationGuardrails.get(principal.organizationId)
    const summary = async (id: string) => {
      const guardrail = await ctx.store.guardrails.get(principal.organizationId, id)
      return guardrail ? { id: guardrail.id, slug: guardrail.slug, name: guardrail.name, status: guardrail.status } : { id }
    }
    return {
      input_guardrails: await Promise.all(lists.input.map(summary)),
      output_guardrails: await Promise.all(lists.output.map(summary)),
      enforcement: enforcementView('Guardrail'),
      object: 'organisation-guardrails',
    }
  }

  /** Ids of organisation-level guardrails, in order, once each; a reference to anything else is a 400 naming it. */
  async function resolve(principal: Principal, field: string, given: readonly string[]): Promise<string[]> {
    const ids: string[] = []
    for (const [index, reference] of given.entries()) {
      const guardrail = await ctx.store.guardrails.get(principal.organizationId, reference)
      if (!guardrail || guardrail.status !== 'active') throw invalid(`${field}[${index}]`, `${field}[${index}]: no active guardrail "${reference}"`)
      if (guardrail.workspaceId !== null) throw invalid(`${field}[${index}]`, `${field}[${index}]: "${reference}" belongs to a workspace; organisation guardrails are guardrails created without a workspace`)
      if (!ids.includes(guardrail.id)) ids.push(guardrail.id)
    }
    return ids
  }

  app.get('/', async (request) => {
    const principal = principalOf(request)
    requireScope(principal, 'organisation_guardrails.read', null, 'organisation guardrails')
    return view(principal)
  })

  app.put('/', async (request) => {
    const principal = principalOf(request)
    requireScope(principal, 'organisation_guardrails.update', null, 'organisation guardrails')
    const body = parse(updateSchema, request.body)
    const current = await ctx.store.organisationGuardrails.get(principal.organizationId)
    const next: OrganisationGuardrails = {
      input: body.input_guardrails === undefined ? current.input : await resolve(principal, 'input_guardrails', body.input_guardrails),
      output: body.output_guardrails === undefined ? current.output : await resolve(principal, 'output_guardrails', body.output_guardrails),
    }
    await ctx.store.transaction((tx) => tx.organisationGuardrails.set(principal.organizationId, next))
    audit(request, { action: 'organisation_guardrails.update', resourceType: 'organisation', resourceId: principal.organizationId, details: { input: next.input.length, output: next.output.length } })
    return view(principal)
  })

  async function exclusionsView(principal: Principal): Promise<Record<string, unknown>> {
    const ids = await ctx.store.organisationGuardrails.exclusions(principal.organizationId)
    const workspaces = await Promise.all(ids.map(async (id) => {
      const workspace = await ctx.store.workspaces.get(principal.organizationId, id)
      return workspace ? { id: workspace.id, slug: workspace.slug, name: workspace.name } : { id }
    }))
    return { object: 'organisation-guardrail-exclusions', workspaces, total: workspaces.length, enforcement: enforcementView('Guardrail') }
  }

  app.get('/exclusions', async (request) => {
    const principal = principalOf(request)
    requireScope(principal, 'organisation_exclusions.list', null, 'organisation guardrail exclusions')
    return exclusionsView(principal)
  })

  app.put('/exclusions', async (request) => {
    const principal = principalOf(request)
    requireScope(principal, 'organisation_exclusions.update', null, 'organisation guardrail exclusions')
    const body = parse(exclusionsSchema, request.body)
    const ids: string[] = []
    for (const [index, reference] of body.workspaces.entries()) {
      const workspace = await ctx.store.workspaces.get(principal.organizationId, reference)
      if (!workspace) throw invalid(`workspaces[${index}]`, `workspaces[${index}]: no workspace "${reference}"`)
      if (!ids.includes(workspace.id)) ids.push(workspace.id)
    }
    const before = await ctx.store.organisationGuardrails.exclusions(principal.organizationId)
    await ctx.store.transaction((tx) => tx.organisationGuardrails.setExclusions(principal.organizationId, ids))
    audit(request, {
      action: 'organisation_exclusions.update',
      resourceType: 'organisation',
      resourceId: principal.organizationId,
      details: { added: ids.filter((id) => !before.includes(id)), removed: before.filter((id) => !ids.includes(id)) },
    })
    return exclusionsView(principal)
  })
}
