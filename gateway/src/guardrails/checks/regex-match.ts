/**
 * `default.regexMatch`: the text matches `rule` (or, with `not`, does not). The pattern is compiled
 * once per snapshot; patterns that can backtrack exponentially (nested quantifiers, backreferences)
 * are refused at compile time, and the text searched is bounded, so a request cannot stall the
 * event loop.
 */
import { z } from 'zod'
import { backtracksBadly } from '../../routing/config-schema.ts'
import { defineCheck, inline, outcome } from './check.ts'

/** Longest text a rule is run on: enough for any answer a guardrail should judge, bounded so a match is quick. */
export const REGEX_MAX_TEXT_CHARS = 1_000_000

export const regexMatch = defineCheck({
  id: 'default.regexMatch',
  parameters: z.object({
    rule: z
      .string()
      .min(1)
      .max(256)
      .refine((rule) => !backtracksBadly(rule), 'nested quantifiers and backreferences are not allowed (they can take exponential time)')
      .refine((rule) => {
        try {
          new RegExp(rule)
          return true
        } catch {
          return false
        }
      }, 'not a valid regular expression'),
    not: z.boolean().default(false),
  }),
  compile({ rule, not }) {
    const pattern = new RegExp(rule)
    return inline(
      ({ text }) => {
        const matched = pattern.exec(text.length > REGEX_MAX_TEXT_CHARS ? text.slice(0, REGEX_MAX_TEXT_CHARS) : text)
        return outcome(matched !== null, not, `the text matches /${rule}/${matched ? ` at "${matched[0].slice(0, 80)}"` : ''}`, `the text does not match /${rule}/`)
      },
      // Must not match: a match seen in a prefix stays a match.
      { failsEarly: not },
    )
  },
})
