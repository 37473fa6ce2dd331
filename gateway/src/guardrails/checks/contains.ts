/** `default.contains`: the text contains any, all or none of the words (case-insensitive). */
import { z } from 'zod'
import { defineCheck, inline } from './check.ts'
import { matchCount, operatorHolds, setOperator } from './operator.ts'

export const contains = defineCheck({
  id: 'default.contains',
  parameters: z.object({ words: z.array(z.string().min(1)).min(1), operator: setOperator.default('any') }),
  compile({ words, operator }) {
    const lowered = words.map((word) => word.toLowerCase())
    return inline(
      ({ text }) => {
        const haystack = text.toLowerCase()
        const found = words.filter((_word, index) => haystack.includes(lowered[index]!))
        return {
          verdict: operatorHolds(operator, matchCount(found.length, words.length)),
          explanation: found.length > 0 ? `found ${found.map((w) => `"${w}"`).join(', ')} (operator ${operator})` : `none of the words found (operator ${operator})`,
        }
      },
      // None of them: a banned word seen in a prefix is final.
      { failsEarly: operator === 'none' },
    )
  },
})
