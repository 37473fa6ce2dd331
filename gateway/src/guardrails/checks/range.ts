/** The min/max/not shape the count checks share. */
import { outcome, type CheckOutcome } from './check.ts'

export function inRange(what: string, count: number, min: number, max: number, not: boolean): CheckOutcome {
  const holds = count >= min && count <= max
  return outcome(holds, not, `${count} ${what}, within ${min} to ${max}`, `${count} ${what}, outside ${min} to ${max}`)
}

/** A count past its maximum only grows: final on a prefix (unless `not` flips the check). */
export function countFailsEarly(not: boolean): boolean {
  return !not
}
