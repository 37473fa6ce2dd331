/**
 * SCIM Users: the Gatehouse user as a SCIM resource, and what a POST, PUT or PATCH from an
 * identity provider changes on it. Updates are applied to a draft (the fields Gatehouse keeps:
 * userName, given and family name, one email, externalId, active), then saved at once.
 *
 * PATCH forms accepted, with `op` in any case (Entra sends "Replace"):
 *   {"op":"replace","value":{"active":false}}                   Okta, no path: an object of attributes
 *   {"op":"Replace","path":"active","value":"False"}            Entra, string booleans
 *   {"op":"replace","path":"name.givenName","value":"Ann"}      dotted sub-attributes
 *   {"op":"Add","path":"emails[type eq \"work\"].value","value":"a@x"}   Entra's filtered email path
 *   {"op":"remove","path":"externalId"}
 */
import type { UserRecord } from '../store/index.ts'
import { parsePatchPath, propertyOf, ScimFilterError } from './filter.ts'
import { SCHEMAS, scimBoolean, ScimError, scimInvalid, SCIM_OPERATIONS } from './protocol.ts'

export interface UserDraft {
  userName: string
  givenName: string | null
  familyName: string | null
  email: string
  externalId: string | null
  active: boolean
}

const EMAIL = /^[^\s@]+@[^\s@]+$/
const MAX_TEXT = 255

export function userResource(user: UserRecord, groups: Array<{ id: string; displayName: string }>, location: string): Record<string, unknown> {
  const name = [user.firstName, user.lastName].filter(Boolean).join(' ')
  return {
    schemas: [SCHEMAS.user],
    id: user.id,
    ...(user.scimExternalId !== null ? { externalId: user.scimExternalId } : {}),
    userName: user.scimUserName ?? user.email,
    name: { givenName: user.firstName ?? undefined, familyName: user.lastName ?? undefined, formatted: name || undefined },
    displayName: name || (user.scimUserName ?? user.email),
    emails: [{ value: user.email, type: 'work', primary: true }],
    active: user.status === 'active',
    groups: groups.map((group) => ({ value: group.id, display: group.displayName, $ref: location.replace(/\/Users\/[^/]+$/, `/Groups/${group.id}`) })),
    meta: { resourceType: 'User', created: user.createdAt, lastModified: user.updatedAt, location },
  }
}

export function draftOf(user: UserRecord): UserDraft {
  return {
    userName: user.scimUserName ?? user.email,
    givenName: user.firstName,
    familyName: user.lastName,
    email: user.email,
    externalId: user.scimExternalId,
    active: user.status === 'active',
  }
}

function text(value: unknown, attribute: string, { nullable = true } = {}): string | null {
  if (value === null || value === undefined) {
    if (nullable) return null
    throw scimInvalid(`${attribute} is required`)
  }
  if (typeof value !== 'string' || value.length > MAX_TEXT) throw scimInvalid(`${attribute} must be a string of at most ${MAX_TEXT} characters`)
  return value
}

/** The primary email, else the first one, else null. */
function emailFrom(emails: unknown): string | null {
  if (emails === undefined || emails === null) return null
  if (!Array.isArray(emails)) throw scimInvalid('emails must be an array')
  const chosen = emails.find((entry) => propertyOf(entry, 'primary') === true || propertyOf(entry, 'primary') === 'True') ?? emails[0]
  const value = propertyOf(chosen, 'value')
  return value === undefined ? null : text(value, 'emails.value')
}

function validEmail(value: string): string {
  if (!EMAIL.test(value) || value.length > 320) throw scimInvalid(`"${value}" is not an email address`)
  return value
}

/** A full User body (POST, PUT) as a draft; `current` supplies what a PUT leaves out of scope. */
export function draftFromBody(body: unknown, current: UserDraft | null): UserDraft {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw scimInvalid('the body must be a SCIM User object', 'invalidSyntax')
  const userName = text(propertyOf(body, 'username'), 'userName', { nullable: false })!
  if (userName.trim() === '') throw scimInvalid('userName must not be empty')
  const name = propertyOf(body, 'name')
  const email = emailFrom(propertyOf(body, 'emails')) ?? (EMAIL.test(userName) ? userName : current?.email ?? null)
  if (email === null) throw scimInvalid('an email is required (emails, or a userName that is an email address)')
  const active = propertyOf(body, 'active')
  return {
    userName,
    givenName: text(propertyOf(name, 'givenname'), 'name.givenName'),
    familyName: text(propertyOf(name, 'familyname'), 'name.familyName'),
    email: validEmail(email),
    externalId: text(propertyOf(body, 'externalid'), 'externalId'),
    // A PUT without `active` keeps the current state: reading its absence as false would suspend
    // users whose IdP omits it.
    active: active === undefined ? current?.active ?? true : scimBoolean(active, 'active'),
  }
}

/** Sets one attribute (`path` lower-cased, as parsed) on the draft. */
function assign(draft: UserDraft, path: string, value: unknown): void {
  switch (path) {
    case 'active': draft.active = scimBoolean(value, 'active'); return
    case 'username': draft.userName = text(value, 'userName', { nullable: false })!; return
    case 'externalid': draft.externalId = text(value, 'externalId'); return
    case 'name.givenname': draft.givenName = text(value, 'name.givenName'); return
    case 'name.familyname': draft.familyName = text(value, 'name.familyName'); return
    case 'name': {
      if (typeof value !== 'object' || value === null) throw scimInvalid('name must be an object')
      for (const [key, inner] of Object.entries(value)) if (key.toLowerCase() !== 'formatted') assign(draft, `name.${key.toLowerCase()}`, inner)
      return
    }
    case 'emails': {
      const email = emailFrom(Array.isArray(value) ? value : [value])
      if (email !== null) draft.email = validEmail(email)
      return
    }
    case 'emails.value': draft.email = validEmail(text(value, 'emails.value', { nullable: false })!); return
    // Attributes Gatehouse does not keep (displayName, title, phoneNumbers, the enterprise
    // extension...) are accepted and ignored, as IdPs send whatever their mapping holds.
    default: return
  }
}

function clear(draft: UserDraft, path: string): void {
  switch (path) {
    case 'externalid': draft.externalId = null; return
    case 'name.givenname': draft.givenName = null; return
    case 'name.familyname': draft.familyName = null; return
    case 'name': draft.givenName = null; draft.familyName = null; return
    case 'username':
    case 'emails':
    case 'emails.value':
    case 'active':
      throw new ScimError(400, `${path} cannot be removed`, 'mutability')
    default: return
  }
}

/** Applies a PatchOp body's operations to a copy of `draft`. */
export function applyUserPatch(draft: UserDraft, body: unknown): UserDraft {
  const operations = propertyOf(body, 'operations')
  if (!Array.isArray(operations) || operations.length === 0) throw scimInvalid('Operations must be a non-empty array', 'invalidSyntax')
  const next = { ...draft }
  for (const operation of operations) {
    const op = String(propertyOf(operation, 'op') ?? '').toLowerCase()
    if (!SCIM_OPERATIONS.has(op)) throw scimInvalid(`unknown PATCH op "${String(propertyOf(operation, 'op'))}"`, 'invalidSyntax')
    const rawPath = propertyOf(operation, 'path')
    const value = propertyOf(operation, 'value')
    if (rawPath === undefined || rawPath === null || rawPath === '') {
      if (op === 'remove') throw scimInvalid('remove needs a path', 'noTarget')
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw scimInvalid('without a path, value must be an object of attributes', 'invalidSyntax')
      // Okta's form; keys may themselves be dotted (`name.givenName`) or carry the schema URN.
      for (const [key, inner] of Object.entries(value)) assign(next, pathOf(key), inner)
      continue
    }
    if (typeof rawPath !== 'string') throw scimInvalid('path must be a string', 'invalidPath')
    const path = pathOf(rawPath)
    if (op === 'remove') clear(next, path)
    else assign(next, path, value)
  }
  return next
}

/** A PATCH path as `attr` or `attr.sub`, lower-cased; `emails[type eq "work"].value` → `emails.value`. */
function pathOf(raw: string): string {
  try {
    const parsed = parsePatchPath(raw)
    return [...parsed.attribute, ...(parsed.subAttribute ? [parsed.subAttribute] : [])].join('.')
  } catch (error) {
    if (error instanceof ScimFilterError) throw scimInvalid(error.message, 'invalidPath')
    throw error
  }
}
