/** `default.jsonKeys`: the answer's JSON object has any, all or none of the keys (top level). */
import { z } from 'zod'
import { defineCheck, inline } from './check.ts'
import { extractJson } from './json-text.ts'
import { matchCount, operatorHolds, setOperator } from './operator.ts'

export const jsonKeys = defineCheck({
  id: 'default.jsonKeys',
  parameters: z.object({ keys: z.array(z.string().min(1)).min(1), operator: setOperator.default('all') }),
  compile({ keys, operator }) {
    return inline(({ text }) => {
      const json = extractJson(text)
      if (!json.ok || typeof json.value !== 'object' || json.value === null || Array.isArray(json.value)) {
        return { verdict: false, explanation: 'the text holds no JSON object' }
      }
      const object = json.value as Record<string, unknown>
      const present = keys.filter((key) => Object.hasOwn(object, key))
      return { verdict: operatorHolds(operator, matchCount(present.length, keys.length)), explanation: `${present.length} of ${keys.length} keys present (operator ${operator})` }
    })
  },
})
