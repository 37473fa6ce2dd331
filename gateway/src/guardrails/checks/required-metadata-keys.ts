/** `default.requiredMetadataKeys`: the request's metadata has the given keys (all, any or none of them). */
import { z } from 'zod'
import { defineCheck, inline } from './check.ts'
import { matchCount, operatorHolds, setOperator } from './operator.ts'

export const requiredMetadataKeys = defineCheck({
  id: 'default.requiredMetadataKeys',
  parameters: z.object({ metadataKeys: z.array(z.string().min(1)).min(1), operator: setOperator.default('all') }),
  compile({ metadataKeys, operator }) {
    return inline(({ metadata }) => {
      const present = metadataKeys.filter((key) => Object.hasOwn(metadata, key))
      return { verdict: operatorHolds(operator, matchCount(present.length, metadataKeys.length)), explanation: `${present.length} of ${metadataKeys.length} metadata keys present (operator ${operator})` }
    })
  },
})
