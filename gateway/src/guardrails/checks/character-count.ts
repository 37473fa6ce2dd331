/** `default.characterCount`: the number of characters (Unicode code points) lies within minCharacters..maxCharacters. */
import { z } from 'zod'
import { defineCheck, inline, type CheckOutcome } from './check.ts'
import { countFailsEarly, inRange } from './range.ts'

const count = z.int().min(0)

function codePoints(text: string): number {
  let count = 0
  // Iterating a string walks code points: a surrogate pair is one character.
  for (const _character of text) count++
  return count
}

export const characterCount = defineCheck({
  id: 'default.characterCount',
  parameters: z.object({ minCharacters: count.default(0), maxCharacters: count.default(9_999_999), not: z.boolean().default(false) }),
  compile({ minCharacters, maxCharacters, not }) {
    const check = inline(({ text }): CheckOutcome => inRange('characters', codePoints(text), minCharacters, maxCharacters, not))
    return { ...check, failsEarly: countFailsEarly(not) && minCharacters === 0 }
  },
})
