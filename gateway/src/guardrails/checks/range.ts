/** The count checks (words, sentences, characters) share one shape: a minimum, a maximum and `not`. */
import { z } from 'zod'
import { defineCheck, inline, outcome, type CheckDefinition, type CheckOutcome } from './check.ts'

export function inRange(what: string, count: number, min: number, max: number, not: boolean): CheckOutcome {
  const holds = count >= min && count <= max
  return outcome(holds, not, `${count} ${what}, within ${min} to ${max}`, `${count} ${what}, outside ${min} to ${max}`)
}

/**
 * A count check with parameters `min<Unit>` (default 0), `max<Unit>` (default `maxDefault`) and
 * `not`. A count past its maximum only grows, so with no minimum (and no `not`) a failure on a
 * prefix of a stream is final.
 */
export function defineCountCheck(id: string, unit: 'Words' | 'Sentences' | 'Characters', maxDefault: number, count: (text: string) => number): CheckDefinition<Record<string, number | boolean>> {
  const minKey = `min${unit}`
  const maxKey = `max${unit}`
  const what = unit.toLowerCase()
  const bound = z.int().min(0)
  return defineCheck({
    id,
    parameters: z.object({ [minKey]: bound.default(0), [maxKey]: bound.default(maxDefault), not: z.boolean().default(false) }) as unknown as z.ZodType<Record<string, number | boolean>>,
    compile(parameters) {
      const min = parameters[minKey] as number
      const max = parameters[maxKey] as number
      const not = parameters.not as boolean
      const check = inline(({ text }) => inRange(what, count(text), min, max, not))
      return { ...check, failsEarly: !not && min === 0 }
    },
  })
}
