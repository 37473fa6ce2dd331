/** The all/any/none operator several checks share (metadata pairs and keys, contains, JSON keys). */
import { z } from 'zod'

export const setOperator = z.enum(['all', 'any', 'none'])
export type SetOperator = z.infer<typeof setOperator>

export interface MatchCount {
  readonly found: number
  readonly of: number
}

export function matchCount(found: number, of: number): MatchCount {
  return { found, of }
}

export function operatorHolds(operator: SetOperator, count: MatchCount): boolean {
  if (operator === 'all') return count.found === count.of
  if (operator === 'any') return count.found > 0
  return count.found === 0
}
