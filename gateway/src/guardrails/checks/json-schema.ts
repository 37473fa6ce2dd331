/** `default.jsonSchema`: the answer's JSON validates against `schema` (JSON Schema 2020-12 subset Ajv supports). */
import type * as Ajv2020Module from 'ajv/dist/2020.js'
import type { Ajv2020 } from 'ajv/dist/2020.js'
import { z } from 'zod'
import { onDemand } from '../../core/on-demand.ts'
import { defineCheck, inline, outcome } from './check.ts'
import { extractJson } from './json-text.ts'

// Ajv is loaded with the first schema check: most gateways (and sidecars) have none.
const ajvModule = onDemand<typeof Ajv2020Module>('ajv/dist/2020.js')
let compiler: Ajv2020 | null = null

/** One validator compiler for every snapshot; compiled schemas are cached by Ajv per schema object. */
function ajv(): Ajv2020 {
  return (compiler ??= new (ajvModule().Ajv2020)({ allErrors: false, strict: false }))
}

export const jsonSchema = defineCheck({
  id: 'default.jsonSchema',
  parameters: z.object({
    schema: z.record(z.string(), z.unknown()).refine((schema) => {
      try {
        ajv().compile(schema)
        return true
      } catch {
        return false
      }
    }, 'not a valid JSON schema'),
    not: z.boolean().default(false),
  }),
  compile({ schema, not }) {
    const validate = ajv().compile(schema)
    return inline(({ text }) => {
      const json = extractJson(text)
      if (!json.ok) return outcome(false, not, '', 'the text holds no JSON value')
      const valid = validate(json.value)
      const problem = validate.errors?.[0]
      return outcome(valid, not, 'the JSON matches the schema', `the JSON does not match the schema${problem ? `: ${problem.instancePath || '(root)'} ${problem.message ?? ''}` : ''}`)
    })
  },
})
