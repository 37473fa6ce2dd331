/**
 * Conditional routing rules: a small query language over the request's metadata, model and
 * parameters (`{ "metadata.team": { "$eq": "search" } }`). Queries are compiled once into
 * predicates (regexes built once), then evaluated per request with no allocation.
 */
import type { ConditionQuery } from '../snapshot/config-schema.ts'

export interface ConditionInput {
  /** The `x-gateway-metadata` object. */
  readonly metadata: Readonly<Record<string, unknown>>
  /** The request body (`model` and the other parameters). */
  readonly params: Readonly<Record<string, unknown>>
}

export type Predicate = (input: ConditionInput) => boolean

type Scalar = string | number | boolean | null

function readField(input: ConditionInput, path: readonly string[]): unknown {
  let value: unknown = path[0] === 'metadata' ? input.metadata : input.params
  for (let index = 1; index < path.length; index++) {
    if (typeof value !== 'object' || value === null) return undefined
    value = (value as Record<string, unknown>)[path[index]!]
  }
  return value
}

function fieldPath(field: string): string[] {
  // `model` is shorthand for `params.model`, the field routing rules read most.
  return field === 'model' ? ['params', 'model'] : field.split('.')
}

/** Ordering only between two numbers or two strings; anything else never matches. */
function compare(value: unknown, operand: unknown): number | null {
  if (typeof value === 'number' && typeof operand === 'number') return value - operand
  if (typeof value === 'string' && typeof operand === 'string') return value < operand ? -1 : value > operand ? 1 : 0
  return null
}

function fieldPredicate(operator: string, operand: unknown): (value: unknown) => boolean {
  switch (operator) {
    case '$eq':
      return (value) => value === operand
    case '$ne':
      return (value) => value !== operand
    case '$in': {
      const set = new Set(operand as Scalar[])
      return (value) => set.has(value as Scalar)
    }
    case '$nin': {
      const set = new Set(operand as Scalar[])
      return (value) => !set.has(value as Scalar)
    }
    case '$gt':
      return (value) => {
        const order = compare(value, operand)
        return order !== null && order > 0
      }
    case '$gte':
      return (value) => {
        const order = compare(value, operand)
        return order !== null && order >= 0
      }
    case '$lt':
      return (value) => {
        const order = compare(value, operand)
        return order !== null && order < 0
      }
    case '$lte':
      return (value) => {
        const order = compare(value, operand)
        return order !== null && order <= 0
      }
    case '$regex': {
      const pattern = new RegExp(operand as string)
      return (value) => typeof value === 'string' && pattern.test(value)
    }
    default:
      // The schema admits only the operators above.
      throw new Error(`unknown condition operator ${operator}`)
  }
}

/** Compiles a query validated by `conditionQuery`; every field and operator must hold (AND). */
export function compileQuery(query: ConditionQuery): Predicate {
  const parts: Predicate[] = []
  for (const [key, value] of Object.entries(query)) {
    if (key === '$and') {
      const all = (value as ConditionQuery[]).map(compileQuery)
      parts.push((input) => all.every((predicate) => predicate(input)))
      continue
    }
    if (key === '$or') {
      const any = (value as ConditionQuery[]).map(compileQuery)
      parts.push((input) => any.some((predicate) => predicate(input)))
      continue
    }
    const path = fieldPath(key)
    const operators = typeof value === 'object' && value !== null ? Object.entries(value) : [['$eq', value] as const]
    for (const [operator, operand] of operators) {
      const test = fieldPredicate(operator, operand)
      parts.push((input) => test(readField(input, path)))
    }
  }
  return (input) => parts.every((predicate) => predicate(input))
}
