/**
 * SCIM Groups: the resource view and how a PATCH changes name and members. Member changes are
 * returned as a plan (`replace` the whole list, or `add`/`remove` some) for the route to apply
 * in one transaction.
 *
 * PATCH forms accepted, `op` in any case:
 *   {"op":"add","path":"members","value":[{"value":"<user id>"}]}           Okta and Entra
 *   {"op":"remove","path":"members[value eq \"<user id>\"]"}                  Okta (RFC form)
 *   {"op":"Remove","path":"members","value":[{"value":"<user id>"}]}          Entra
 *   {"op":"remove","path":"members"}                                          remove all
 *   {"op":"replace","path":"members","value":[…]}                              replace all
 *   {"op":"replace","value":{"id":"…","displayName":"…","members":[…]}}       Okta, no path
 *   {"op":"Replace","path":"displayName","value":"…"}                          Entra rename
 */
import type { ScimGroupRecord } from '../store/index.ts'
import { matches, parsePatchPath, propertyOf, ScimFilterError } from './filter.ts'
import { SCHEMAS, scimInvalid, SCIM_OPERATIONS } from './protocol.ts'

export interface GroupPlan {
  displayName?: string
  externalId?: string | null
  /** The whole member list, when an operation replaced it. */
  replace: string[] | null
  add: string[]
  remove: string[]
}

export function groupResource(group: ScimGroupRecord, location: string, options: { members: boolean; display: ReadonlyMap<string, string> }): Record<string, unknown> {
  const base = location.replace(/\/Groups\/[^/]+$/, '')
  return {
    schemas: [SCHEMAS.group],
    id: group.id,
    ...(group.externalId !== null ? { externalId: group.externalId } : {}),
    displayName: group.displayName,
    ...(options.members
      ? { members: group.memberIds.map((id) => ({ value: id, $ref: `${base}/Users/${id}`, ...(options.display.has(id) ? { display: options.display.get(id) } : {}) })) }
      : {}),
    meta: { resourceType: 'Group', created: group.createdAt, lastModified: group.updatedAt, location },
  }
}

/** User ids from a `members` value: `[{"value":"id"}]` (a single object is accepted too). */
export function memberIds(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]
  return list.map((entry, index) => {
    const id = propertyOf(entry, 'value')
    if (typeof id !== 'string' || id === '') throw scimInvalid(`members[${index}].value must be a user id`)
    return id
  })
}

export function displayNameOf(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 255) throw scimInvalid('displayName must be a string of 1 to 255 characters')
  return value
}

function externalIdOf(value: unknown): string | null {
  if (value === null || value === undefined) return null
  if (typeof value !== 'string' || value.length > 255) throw scimInvalid('externalId must be a string')
  return value
}

function applyAttributes(plan: GroupPlan, attributes: Record<string, unknown>, op: string): void {
  for (const [key, value] of Object.entries(attributes)) {
    const name = key.replace(/^urn:[a-z0-9:._-]+:/i, '').toLowerCase()
    if (name === 'displayname') plan.displayName = displayNameOf(value)
    else if (name === 'externalid') plan.externalId = externalIdOf(value)
    else if (name === 'members') {
      if (op === 'add') plan.add.push(...memberIds(value))
      else plan.replace = memberIds(value)
    }
    // `id` (Okta repeats it) and unknown attributes change nothing.
  }
}

/** Turns a PatchOp body into a plan; `current` resolves filtered member removals. */
export function planGroupPatch(body: unknown, current: ScimGroupRecord): GroupPlan {
  const operations = propertyOf(body, 'operations')
  if (!Array.isArray(operations) || operations.length === 0) throw scimInvalid('Operations must be a non-empty array', 'invalidSyntax')
  const plan: GroupPlan = { replace: null, add: [], remove: [] }
  for (const operation of operations) {
    const op = String(propertyOf(operation, 'op') ?? '').toLowerCase()
    if (!SCIM_OPERATIONS.has(op)) throw scimInvalid(`unknown PATCH op "${String(propertyOf(operation, 'op'))}"`, 'invalidSyntax')
    const rawPath = propertyOf(operation, 'path')
    const value = propertyOf(operation, 'value')
    if (rawPath === undefined || rawPath === null || rawPath === '') {
      if (op === 'remove') throw scimInvalid('remove needs a path', 'noTarget')
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw scimInvalid('without a path, value must be an object of attributes', 'invalidSyntax')
      applyAttributes(plan, value as Record<string, unknown>, op)
      continue
    }
    if (typeof rawPath !== 'string') throw scimInvalid('path must be a string', 'invalidPath')
    let path
    try {
      path = parsePatchPath(rawPath)
    } catch (error) {
      if (error instanceof ScimFilterError) throw scimInvalid(error.message, 'invalidPath')
      throw error
    }
    const attribute = path.attribute.join('.')
    if (attribute !== 'members') {
      if (path.filter !== null) throw scimInvalid(`${rawPath}: only members takes a filter`, 'invalidPath')
      if (op === 'remove') {
        if (attribute === 'externalid') plan.externalId = null
        else if (attribute === 'displayname') throw scimInvalid('displayName cannot be removed', 'mutability')
        continue
      }
      applyAttributes(plan, { [attribute]: value }, op)
      continue
    }
    if (op === 'add') {
      plan.add.push(...memberIds(value))
    } else if (op === 'replace') {
      plan.replace = memberIds(value)
    } else if (path.filter !== null) {
      const filter = path.filter
      const known = [...(plan.replace ?? current.memberIds), ...plan.add]
      plan.remove.push(...known.filter((id) => matches(filter, { value: id })))
    } else if (value !== undefined && value !== null) {
      plan.remove.push(...memberIds(value))
    } else {
      plan.replace = []
      plan.add = []
    }
  }
  return plan
}
