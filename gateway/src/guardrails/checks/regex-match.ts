/**
 * `default.regexMatch`: the text matches `rule` (or, with `not`, does not). Rules run on RE2
 * (re2js, a linear-time engine: no backtracking, so no pattern and no text can stall the event
 * loop); RE2 has no backreferences or lookarounds, and a rule using them is refused when the
 * guardrail is saved or compiled. Compiled once per snapshot.
 */
import type * as Re2js from 're2js'
import type { RE2JS } from 're2js'
import { z } from 'zod'
import { onDemand } from '../../core/on-demand.ts'
import { defineCheck, inline, outcome } from './check.ts'

/** Longest text a rule is run on: linear time, but still bounded per request. */
export const REGEX_MAX_TEXT_CHARS = 1_000_000

/** Loaded with the first regex rule: most gateways (and sidecars) have none. */
const re2js = onDemand<typeof Re2js>('re2js')

function compileRule(rule: string): RE2JS | string {
  try {
    return re2js().RE2JS.compile(rule)
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

export const regexMatch = defineCheck({
  id: 'default.regexMatch',
  parameters: z.object({
    rule: z
      .string()
      .min(1)
      .max(256)
      .superRefine((rule, context) => {
        const compiled = compileRule(rule)
        if (typeof compiled === 'string') context.addIssue({ code: 'custom', message: `not a valid RE2 regular expression (no backreferences or lookarounds): ${compiled}` })
      }),
    not: z.boolean().default(false),
  }),
  compile({ rule, not }) {
    const pattern = compileRule(rule) as RE2JS
    return inline(
      ({ text }) => {
        const matcher = pattern.matcher(text.length > REGEX_MAX_TEXT_CHARS ? text.slice(0, REGEX_MAX_TEXT_CHARS) : text)
        const matched = matcher.find()
        return outcome(matched, not, `the text matches /${rule}/${matched ? ` at "${String(matcher.group()).slice(0, 80)}"` : ''}`, `the text does not match /${rule}/`)
      },
      // Must not match: a match seen in a prefix stays a match.
      { failsEarly: not },
    )
  },
})
