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

type FieldReader = (subject: LimitSubject) => readonly string[]

const NONE: readonly string[] = []
const present = (values: ReadonlyArray<string | null>): string[] => values.filter((v): v is string => v !== null)

/** What a field reads: all the values it has for a request (a workspace or provider answers to its id and slug). */
function readerOf(field: string): FieldReader {
  switch (field) {
    case 'api_key': return (subject) => [subject.apiKeyId]
    case 'workspace_id': return (subject) => present([subject.workspaceId, subject.workspaceSlug])
    case 'organisation_id':
    case 'organization_id': return (subject) => [subject.organizationId]
    case 'user': return (subject) => (subject.userId === null ? NONE : [subject.userId])
    case 'endpoint_type': return (subject) => [subject.endpointType]
    case 'model': return (subject) => (subject.model === null ? NONE : [subject.model])
    case 'provider': return (subject) => present([subject.providerId, subject.providerSlug, subject.providerSlug === null ? null : `@${subject.providerSlug}`])
    default: {
      if (!field.startsWith('metadata.')) return () => NONE
      const name = field.slice('metadata.'.length)
      return (subject) => {
        const value = metadataValue(subject.metadata[name])
        return value === null ? NONE : [value]
      }
    }
  }
}

interface CompiledCondition {
  readonly read: FieldReader
  /** `*`: any value present. */
  readonly any: boolean
  readonly wanted: ReadonlySet<string>
}

/** A limit's conditions and group_by, compiled once: the field switch and value sets are not rebuilt per request. */
interface CompiledLimitMatch {
  readonly conditions: readonly CompiledCondition[]
  readonly groupBy: readonly FieldReader[]
}

const compiled = new WeakMap<SnapshotLimit, CompiledLimitMatch>()

function compile(limit: SnapshotLimit): CompiledLimitMatch {
  let match = compiled.get(limit)
  if (match === undefined) {
    match = {
      conditions: limit.conditions.map((condition) => ({ read: readerOf(condition.key), any: condition.values.includes('*'), wanted: new Set(condition.values) })),
      groupBy: limit.groupBy.map(readerOf),
    }
    compiled.set(limit, match)
  }
  return match
}

function conditionHolds(condition: CompiledCondition, subject: LimitSubject): boolean {
  const values = condition.read(subject)
  if (values.length === 0) return false
  if (condition.any) return true
  for (const value of values) if (condition.wanted.has(value)) return true
  return false
}

export function matchLimits(limits: readonly SnapshotLimit[], subject: LimitSubject): MatchedLimit[] {
  const matched: MatchedLimit[] = []
  for (const limit of limits) {
    if (limit.workspaceId !== null && limit.workspaceId !== subject.workspaceId) continue
    const match = compile(limit)
    if (!match.conditions.every((condition) => conditionHolds(condition, subject))) continue
    matched.push({ limit, group: match.groupBy.map((read) => read(subject)[0] ?? '') })
  }
  return matched
}
