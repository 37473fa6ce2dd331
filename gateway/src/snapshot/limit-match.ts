/**
 * Which limits apply to a request, and which counter of each (its group). A limit applies when
 * its workspace (if any) is the request's and every condition matches: the request's field equals
 * one of the condition's values, `*` matching any value present. The group is the request's values
 * of the limit's `group_by` fields, in order (absent fields count as the empty string).
 */
import type { SnapshotLimit } from './policies.ts'

/** The request fields limits read. Provider and model are null until known. */
export interface LimitSubject {
  readonly organizationId: string
  readonly workspaceId: string | null
  readonly workspaceSlug: string | null
  readonly apiKeyId: string
  readonly userId: string | null
  readonly endpointType: string
  readonly model: string | null
  readonly providerId: string | null
  readonly providerSlug: string | null
  readonly metadata: Readonly<Record<string, unknown>>
}

export interface MatchedLimit {
  readonly limit: SnapshotLimit
  readonly group: readonly string[]
}

function metadataValue(value: unknown): string | null {
  if (value === undefined || value === null) return null
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** All the values a field has for this request (a workspace or provider answers to its id and slug). */
function fieldValues(subject: LimitSubject, field: string): string[] {
  switch (field) {
    case 'api_key': return [subject.apiKeyId]
    case 'workspace_id': return [subject.workspaceId, subject.workspaceSlug].filter((v): v is string => v !== null)
    case 'organisation_id':
    case 'organization_id': return [subject.organizationId]
    case 'user': return subject.userId === null ? [] : [subject.userId]
    case 'endpoint_type': return [subject.endpointType]
    case 'model': return subject.model === null ? [] : [subject.model]
    case 'provider': return [subject.providerId, subject.providerSlug, subject.providerSlug === null ? null : `@${subject.providerSlug}`].filter((v): v is string => v !== null)
    default: {
      if (!field.startsWith('metadata.')) return []
      const value = metadataValue(subject.metadata[field.slice('metadata.'.length)])
      return value === null ? [] : [value]
    }
  }
}

export function matchLimits(limits: readonly SnapshotLimit[], subject: LimitSubject): MatchedLimit[] {
  const matched: MatchedLimit[] = []
  for (const limit of limits) {
    if (limit.workspaceId !== null && limit.workspaceId !== subject.workspaceId) continue
    const applies = limit.conditions.every((condition) => {
      const values = fieldValues(subject, condition.key)
      return values.length > 0 && condition.values.some((wanted) => wanted === '*' || values.includes(wanted))
    })
    if (!applies) continue
    matched.push({ limit, group: limit.groupBy.map((field) => fieldValues(subject, field)[0] ?? '') })
  }
  return matched
}
