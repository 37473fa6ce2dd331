/**
 * Shared by the resource route modules (providers, integrations, configs, guardrails, deployments,
 * policies, secret references): which workspace a request targets, who may see a row, the
 * refusal of rows managed elsewhere, tag filters, and the common field schemas.
 *
 * Targeting follows the admin key model: an organisation-level principal (admin key, owner,
 * admin) names a workspace with `workspace_id` (id or slug) or, without one, acts
 * organisation-wide; a workspace-confined principal acts in its own workspace and may not name
 * another one.
 */
import { randomBytes } from 'node:crypto'
import { z } from 'zod'
import { conflict, forbidden, invalid, notFound } from '../../errors.ts'
import type { Principal } from '../../identity/principal.ts'
import type { AdminContext } from '../context.ts'

export const NAME_MAX = 255
export const nameSchema = z.string().trim().min(1).max(NAME_MAX)
export const slugSchema = z.string().min(1).max(NAME_MAX).regex(/^[a-z0-9][a-z0-9_.-]*$/, 'slug may contain lowercase letters, digits, ".", "-" and "_" and must start with a letter or digit')
export const descriptionSchema = z.string().max(2000).nullable()
/**
 * Names that are properties of every JavaScript object: as a tag key (stored or filtered on) they
 * would be dropped or turn into a prototype change when copied into an object, so they are refused.
 */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype'])
const tagKeySchema = z.string().min(1).max(255).refine((key) => !PROTOTYPE_KEYS.has(key), { message: 'tag keys __proto__, constructor and prototype are reserved', abort: true })
/** Custom key-value pairs on integrations and providers (filterable in lists). */
export const tagsSchema = z.record(tagKeySchema, z.string().max(255)).refine((tags) => Object.keys(tags).length <= 32, 'at most 32 tags')
export const workspaceRefSchema = z.string().min(1).max(NAME_MAX)

/** `<prefix>-<name, 6 chars>-<6 hex>`, the API surface's generated slug form. */
export function generatedSlug(prefix: string, name: string): string {
  const base = name.toLowerCase().replace(/[^a-z0-9]+/g, '').slice(0, 6) || 'x'
  return `${prefix}-${base}-${randomBytes(3).toString('hex')}`
}

/** A slug from a name: lowercase words joined by dashes. */
export function slugFromName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 200) || 'item'
}

/** Resolves a workspace reference the principal may act in. */
export async function workspaceFor(ctx: AdminContext, principal: Principal, reference: string | null | undefined, param = 'workspace_id'): Promise<string> {
  const workspace = reference ? await ctx.store.workspaces.get(principal.organizationId, reference) : null
  if (!workspace) throw invalid(param, `${param}: workspace not found`)
  const visible = principal.visibleWorkspaceIds()
  if (visible !== null && !visible.includes(workspace.id)) throw forbidden('this credential may not act in that workspace')
  return workspace.id
}

/**
 * The workspace a write targets: the named one, or for a workspace-confined principal its own;
 * null (organisation-wide) for an organisation-level principal naming none.
 */
export async function targetWorkspace(ctx: AdminContext, principal: Principal, reference: string | null | undefined, param = 'workspace_id'): Promise<string | null> {
  if (reference) return workspaceFor(ctx, principal, reference, param)
  const visible = principal.visibleWorkspaceIds()
  if (visible === null) return null
  if (visible.length === 1) return visible[0]!
  throw invalid(param, `${param} is required`)
}

/**
 * The workspaces a listing covers: the named one, or for a workspace-confined principal the
 * workspaces it sees; undefined = everything, organisation-wide rows included (organisation level).
 */
export async function listWorkspaces(ctx: AdminContext, principal: Principal, reference: string | undefined): Promise<string[] | undefined> {
  if (reference) return [await workspaceFor(ctx, principal, reference)]
  return principal.visibleWorkspaceIds() ?? undefined
}

/** Whether the principal may see a row of `workspaceId` (null = organisation-wide: org level only). */
export function canSee(principal: Principal, workspaceId: string | null): boolean {
  const visible = principal.visibleWorkspaceIds()
  if (visible === null) return true
  return workspaceId !== null && visible.includes(workspaceId)
}

/** The row if visible, else AB08 (a row out of reach is reported as absent, never as forbidden). */
export function visibleOr404<T extends { workspaceId: string | null }>(principal: Principal, row: T | null, what: string): T {
  if (!row || !canSee(principal, row.workspaceId)) throw notFound(what)
  return row
}

/** A scope checked in a workspace, or organisation-wide (organisation-level principals only) for null. */
export function requireScope(principal: Principal, scope: string, workspaceId: string | null, what: string): void {
  const allowed = workspaceId === null ? principal.isOrganisationLevel && principal.has(scope, null) : principal.has(scope, workspaceId)
  if (!allowed) throw forbidden(`this credential may not ${scope.split(/[.:]/)[1] ?? 'use'} ${what}${workspaceId ? ' in this workspace' : ' at organisation level'}`)
}

/**
 * Rows created from Kubernetes custom resources or resource files are owned there; the admin API
 * refuses to change them (409) and says where to change them instead.
 */
export function refuseManaged(row: { managedBy: string | null }, what: string, slug: string): void {
  if (row.managedBy === null) return
  const where = row.managedBy === 'kubernetes'
    ? 'by Kubernetes (a gatehouse.dev custom resource); change it with kubectl or in the GitOps repository that applies it'
    : 'by a resources file loaded by the control plane; change that file instead'
  throw conflict(`${what} "${slug}" is managed ${where}`)
}

/** `?tags[team]=search&tags[env]=prod` or `?tags={"team":"search"}`: every pair must match. */
export function tagFilter(query: unknown): Record<string, string> | undefined {
  // No prototype: a key can only ever be an own entry of the filter.
  const tags = Object.create(null) as Record<string, string>
  for (const [name, value] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    const match = /^tags\[(.{1,255})\]$/.exec(name)
    if (match && typeof value === 'string') {
      const key = match[1]!
      if (PROTOTYPE_KEYS.has(key)) throw invalid(name, `${name}: the tag key ${key} is reserved`)
      tags[key] = value
    } else if (name === 'tags' && typeof value === 'string') {
      let parsed: unknown
      try {
        parsed = JSON.parse(value)
      } catch {
        throw invalid('tags', 'tags must be a JSON object of strings, or use tags[key]=value')
      }
      // JSON.parse keeps "__proto__" as an own key, which schema parsing would quietly drop.
      const reserved = parsed !== null && typeof parsed === 'object' ? Object.keys(parsed).find((key) => PROTOTYPE_KEYS.has(key)) : undefined
      if (reserved) throw invalid('tags', `tags: the tag key ${reserved} is reserved`)
      const checked = tagsSchema.safeParse(parsed)
      if (!checked.success) throw invalid('tags', `tags must be a JSON object of strings, or use tags[key]=value (${checked.error.issues[0]!.message})`)
      for (const [key, tag] of Object.entries(checked.data)) tags[key] = tag
    }
  }
  return Object.keys(tags).length > 0 ? tags : undefined
}

/** Resolves workspace references (ids or slugs) to ids; unknown ones are a 400 naming the item. */
export async function workspaceIds(ctx: AdminContext, organizationId: string, references: readonly string[], param: string): Promise<string[]> {
  const ids: string[] = []
  for (const [index, reference] of references.entries()) {
    const workspace = await ctx.store.workspaces.get(organizationId, reference)
    if (!workspace) throw invalid(`${param}[${index}]`, `${param}[${index}]: workspace not found`)
    ids.push(workspace.id)
  }
  return [...new Set(ids)]
}

/** Query flags for listings that carry workspace filters and extra keys such as tags[...]. */
export const scopedListQuery = z.object({ workspace_id: workspaceRefSchema.optional() }).loose()
