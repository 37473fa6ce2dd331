/** `default.wordCount`: the number of words lies within minWords..maxWords. */
import { z } from 'zod'
import { defineCheck, inline, type CheckOutcome } from './check.ts'
import { countFailsEarly, inRange } from './range.ts'

const count = z.int().min(0)

export function countWords(text: string): number {
  const words = text.trim().split(/\s+/)
  return words[0] === '' ? 0 : words.length
}

export const wordCount = defineCheck({
  id: 'default.wordCount',
  parameters: z.object({ minWords: count.default(0), maxWords: count.default(99_999), not: z.boolean().default(false) }),
  compile({ minWords, maxWords, not }) {
    const check = inline(({ text }): CheckOutcome => inRange('words', countWords(text), minWords, maxWords, not))
    return { ...check, failsEarly: countFailsEarly(not) && minWords === 0 }
  },
})
