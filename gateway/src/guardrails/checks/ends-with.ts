/** `default.endsWith`: the text (trailing white space ignored) ends with `suffix`. */
import { z } from 'zod'
import { defineCheck, inline, outcome } from './check.ts'

export const endsWith = defineCheck({
  id: 'default.endsWith',
  parameters: z.object({ suffix: z.string().min(1), not: z.boolean().default(false) }),
  compile({ suffix, not }) {
    return inline(({ text }) => outcome(text.trimEnd().endsWith(suffix), not, `the text ends with "${suffix}"`, `the text does not end with "${suffix}"`))
  },
})
