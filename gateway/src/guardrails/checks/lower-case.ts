/** `default.isAllLowerCase`: the text has no upper-case letter (with `not`: it has one). */
import { z } from 'zod'
import { defineCheck, inline, outcome } from './check.ts'

export const isAllLowerCase = defineCheck({
  id: 'default.isAllLowerCase',
  parameters: z.object({ not: z.boolean().default(false) }),
  compile({ not }) {
    return inline(({ text }) => outcome(text === text.toLowerCase(), not, 'the text is all lower case', 'the text has upper-case letters'), { failsEarly: !not })
  },
})
