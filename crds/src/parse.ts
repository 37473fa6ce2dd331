/**
 * Validates one object of a gatehouse.dev kind (as read from a YAML file in embedded mode) with the
 * same schemas the CRDs are generated from.
 */
import type { z } from 'zod'
import { API_VERSION } from './v1alpha1/shared.ts'
import { resources, type GatehouseResource } from './resources.ts'

export interface Problem {
  /** Dotted path with [index] for list items, e.g. `spec.config.targets[0].weight`. */
  path: string
  message: string
}

export type ParseResult = { ok: true; resource: GatehouseResource } | { ok: false; problems: Problem[] }

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = ''
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`
    else out += out === '' ? String(segment) : `.${String(segment)}`
  }
  return out
}

function fromIssues(issues: z.core.$ZodIssue[]): Problem[] {
  return issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }))
}

/** Returns the typed resource, or every problem found with its field path. */
export function parseResource(obj: unknown): ParseResult {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    return { ok: false, problems: [{ path: '', message: 'a resource must be an object' }] }
  }
  const { apiVersion, kind } = obj as { apiVersion?: unknown; kind?: unknown }
  if (apiVersion !== API_VERSION) {
    return { ok: false, problems: [{ path: 'apiVersion', message: `expected "${API_VERSION}", got ${JSON.stringify(apiVersion)}` }] }
  }
  const schema = typeof kind === 'string' ? resources[kind as keyof typeof resources] : undefined
  if (schema === undefined) {
    const kinds = Object.keys(resources).join(', ')
    return { ok: false, problems: [{ path: 'kind', message: `unknown kind ${JSON.stringify(kind)}; expected one of ${kinds}` }] }
  }
  const result = schema.safeParse(obj)
  if (!result.success) return { ok: false, problems: fromIssues(result.error.issues) }
  return { ok: true, resource: result.data as GatehouseResource }
}
