/** `default.requiredMetadataKeyPairs`: the request's metadata carries the given key-value pairs (all, any or none of them). */
import { z } from 'zod'
import { defineCheck, inline } from './check.ts'
import { matchCount, operatorHolds, setOperator } from './operator.ts'

export const requiredMetadataKeyPairs = defineCheck({
  id: 'default.requiredMetadataKeyPairs',
  parameters: z.object({
    metadataPairs: z.record(z.string().min(1), z.string()).refine((pairs) => Object.keys(pairs).length > 0, 'at least one pair'),
    operator: setOperator.default('all'),
  }),
  compile({ metadataPairs, operator }) {
    const pairs = Object.entries(metadataPairs)
    return inline(({ metadata }) => {
      const present = pairs.filter(([key, value]) => metadata[key] === value).map(([key]) => key)
      const verdict = operatorHolds(operator, matchCount(present.length, pairs.length))
      return { verdict, explanation: `${present.length} of ${pairs.length} required metadata pairs present (operator ${operator})${present.length > 0 ? `: ${present.join(', ')}` : ''}` }
    })
  },
})
