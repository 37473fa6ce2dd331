/** `default.modelWhitelist`: the request names one of `models` (or, with `not`, none of them). */
import { z } from 'zod'
import { defineCheck, inline, outcome } from './check.ts'

export const modelWhitelist = defineCheck({
  id: 'default.modelWhitelist',
  parameters: z.object({ models: z.array(z.string().min(1)).min(1), not: z.boolean().default(false) }),
  compile({ models, not }) {
    const allowed = new Set(models)
    return inline(({ model }) => {
      // `@slug/model` names a provider too; the list names models.
      const name = model === null ? null : model.startsWith('@') && model.includes('/') ? model.slice(model.indexOf('/') + 1) : model
      return outcome(name !== null && (allowed.has(name) || (model !== null && allowed.has(model))), not, `model "${model}" is in the list`, `model "${model ?? '(none)'}" is not in the list`)
    })
  },
})
