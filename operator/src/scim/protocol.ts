/**
 * SCIM 2.0 wire constants and the error answer (RFC 7644 §3.12): `status` is a string, `scimType`
 * names the kind of client error, the media type is application/scim+json.
 */
export const SCIM_MEDIA_TYPE = 'application/scim+json'
/** SCIM bearer tokens: `ghscim_` and 256 random bits (base64url); stored as a peppered HMAC. */
export const SCIM_TOKEN_PREFIX = 'ghscim_'

export const SCHEMAS = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  enterpriseUser: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  listResponse: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patchOp: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const

export type ScimType =
  | 'invalidFilter' | 'tooMany' | 'uniqueness' | 'mutability' | 'invalidSyntax' | 'invalidPath'
  | 'noTarget' | 'invalidValue' | 'invalidVers' | 'sensitive'

export class ScimError extends Error {
  override name = 'ScimError'
  readonly status: number
  readonly scimType: ScimType | null
  readonly headers: Record<string, string>

  constructor(status: number, detail: string, scimType: ScimType | null = null, headers: Record<string, string> = {}) {
    super(detail)
    this.status = status
    this.scimType = scimType
    this.headers = headers
  }

  toBody(): Record<string, unknown> {
    return { schemas: [SCHEMAS.error], status: String(this.status), ...(this.scimType ? { scimType: this.scimType } : {}), detail: this.message }
  }
}

export const scimInvalid = (detail: string, scimType: ScimType = 'invalidValue'): ScimError => new ScimError(400, detail, scimType)
export const scimNotFound = (what: string): ScimError => new ScimError(404, `${what} not found`)

/** A list answer (RFC 7644 §3.4.2). */
export function listResponse(totalResults: number, startIndex: number, resources: unknown[]): Record<string, unknown> {
  return { schemas: [SCHEMAS.listResponse], totalResults, startIndex, itemsPerPage: resources.length, Resources: resources }
}

export const DEFAULT_COUNT = 100
export const MAX_COUNT = 200

/** `startIndex` (1-based; below 1 reads as 1) and `count` (negative reads as 0, capped at MAX_COUNT). */
export function paging(query: Record<string, unknown>): { startIndex: number; count: number } {
  const number = (value: unknown, fallback: number): number => {
    if (value === undefined || value === '') return fallback
    const parsed = Number(value)
    if (!Number.isInteger(parsed)) throw scimInvalid('startIndex and count must be integers')
    return parsed
  }
  return {
    startIndex: Math.max(1, number(query.startIndex, 1)),
    count: Math.min(MAX_COUNT, Math.max(0, number(query.count, DEFAULT_COUNT))),
  }
}

/** Entra sends booleans as "True"/"False"; Okta and the RFC send JSON booleans. */
export function scimBoolean(value: unknown, attribute: string): boolean {
  if (typeof value === 'boolean') return value
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true'
  throw scimInvalid(`${attribute} must be a boolean`)
}

export const SCIM_OPERATIONS = new Set(['add', 'remove', 'replace'])
