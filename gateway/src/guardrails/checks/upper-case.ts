/** `default.alluppercase`: the text has no lower-case letter (with `not`: it has one). */
import { z } from 'zod'
import { defineCheck, inline, outcome } from './check.ts'

export const allUpperCase = defineCheck({
  id: 'default.alluppercase',
  parameters: z.object({ not: z.boolean().default(false) }),
  compile({ not }) {
    return inline(({ text }) => outcome(text === text.toUpperCase(), not, 'the text is all upper case', 'the text has lower-case letters'), { failsEarly: !not })
  },
})
