/**
 * SCIM discovery (RFC 7644 §4): what this service supports, its resource types and their schemas
 * (RFC 7643 §5–7). Describes what the routes really do: PATCH yes, bulk, sort, ETags and password
 * changes no; filters up to MAX_COUNT results.
 */
import type { FastifyInstance, FastifyRequest, RouteShorthandOptions } from 'fastify'
import { listResponse, MAX_COUNT, SCHEMAS } from './protocol.ts'

interface Attribute {
  name: string
  type: 'string' | 'boolean' | 'complex' | 'reference' | 'dateTime'
  multiValued?: boolean
  required?: boolean
  caseExact?: boolean
  mutability?: 'readOnly' | 'readWrite' | 'immutable'
  uniqueness?: 'none' | 'server'
  subAttributes?: Attribute[]
}

function attribute(spec: Attribute): Record<string, unknown> {
  return {
    name: spec.name,
    type: spec.type,
    multiValued: spec.multiValued ?? false,
    required: spec.required ?? false,
    caseExact: spec.caseExact ?? false,
    mutability: spec.mutability ?? 'readWrite',
    returned: 'default',
    uniqueness: spec.uniqueness ?? 'none',
    ...(spec.subAttributes ? { subAttributes: spec.subAttributes.map(attribute) } : {}),
  }
}

const USER_ATTRIBUTES: Attribute[] = [
  { name: 'userName', type: 'string', required: true, uniqueness: 'server' },
  { name: 'name', type: 'complex', subAttributes: [{ name: 'givenName', type: 'string' }, { name: 'familyName', type: 'string' }, { name: 'formatted', type: 'string', mutability: 'readOnly' }] },
  { name: 'displayName', type: 'string', mutability: 'readOnly' },
  { name: 'emails', type: 'complex', multiValued: true, subAttributes: [{ name: 'value', type: 'string' }, { name: 'type', type: 'string' }, { name: 'primary', type: 'boolean' }] },
  { name: 'active', type: 'boolean' },
  { name: 'externalId', type: 'string', caseExact: true },
  { name: 'groups', type: 'complex', multiValued: true, mutability: 'readOnly', subAttributes: [{ name: 'value', type: 'string', mutability: 'readOnly' }, { name: 'display', type: 'string', mutability: 'readOnly' }] },
]

const GROUP_ATTRIBUTES: Attribute[] = [
  { name: 'displayName', type: 'string', required: true, uniqueness: 'server' },
  { name: 'externalId', type: 'string', caseExact: true },
  { name: 'members', type: 'complex', multiValued: true, subAttributes: [{ name: 'value', type: 'string', caseExact: true, mutability: 'immutable' }, { name: 'display', type: 'string', mutability: 'readOnly' }] },
]

export function discoveryRoutes(app: FastifyInstance, opts: RouteShorthandOptions, base: (request: FastifyRequest) => string): void {
  app.get('/ServiceProviderConfig', opts, async (request) => ({
    schemas: [SCHEMAS.serviceProviderConfig],
    documentationUri: 'https://github.com/gatehouse/gatehouse/blob/main/docs/sso-scim.md',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_COUNT },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [{ type: 'oauthbearertoken', name: 'OAuth Bearer Token', description: 'A SCIM token minted at /v1/admin/scim/tokens', primary: true }],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base(request)}/ServiceProviderConfig` },
  }))

  const resourceTypes = (request: FastifyRequest): Array<Record<string, unknown>> => [
    { schemas: [SCHEMAS.resourceType], id: 'User', name: 'User', endpoint: '/Users', schema: SCHEMAS.user, meta: { resourceType: 'ResourceType', location: `${base(request)}/ResourceTypes/User` } },
    { schemas: [SCHEMAS.resourceType], id: 'Group', name: 'Group', endpoint: '/Groups', schema: SCHEMAS.group, meta: { resourceType: 'ResourceType', location: `${base(request)}/ResourceTypes/Group` } },
  ]
  const schemas = (request: FastifyRequest): Array<Record<string, unknown>> => [
    { schemas: [SCHEMAS.schema], id: SCHEMAS.user, name: 'User', description: 'User account', attributes: USER_ATTRIBUTES.map(attribute), meta: { resourceType: 'Schema', location: `${base(request)}/Schemas/${SCHEMAS.user}` } },
    { schemas: [SCHEMAS.schema], id: SCHEMAS.group, name: 'Group', description: 'Group', attributes: GROUP_ATTRIBUTES.map(attribute), meta: { resourceType: 'Schema', location: `${base(request)}/Schemas/${SCHEMAS.group}` } },
  ]

  app.get('/ResourceTypes', opts, async (request) => {
    const all = resourceTypes(request)
    return listResponse(all.length, 1, all)
  })
  app.get('/Schemas', opts, async (request) => {
    const all = schemas(request)
    return listResponse(all.length, 1, all)
  })
}
