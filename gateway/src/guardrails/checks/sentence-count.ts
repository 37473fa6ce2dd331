/** `default.sentenceCount`: the number of sentences (runs ending in . ! or ?) lies within minSentences..maxSentences. */
import { z } from 'zod'
import { defineCheck, inline, type CheckOutcome } from './check.ts'
import { countFailsEarly, inRange } from './range.ts'

const count = z.int().min(0)
const SENTENCE = /[^.!?]*[^.!?\s][^.!?]*[.!?]+/g

export function countSentences(text: string): number {
  return text.match(SENTENCE)?.length ?? 0
}

export const sentenceCount = defineCheck({
  id: 'default.sentenceCount',
  parameters: z.object({ minSentences: count.default(0), maxSentences: count.default(99_999), not: z.boolean().default(false) }),
  compile({ minSentences, maxSentences, not }) {
    const check = inline(({ text }): CheckOutcome => inRange('sentences', countSentences(text), minSentences, maxSentences, not))
    return { ...check, failsEarly: countFailsEarly(not) && minSentences === 0 }
  },
})
