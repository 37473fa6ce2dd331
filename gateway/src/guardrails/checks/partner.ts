/**
 * External AI-security partner checks (`patronus.pii`, `panw-prisma-airs.intercept`, ...): one
 * module for every partner id, since they share one contract. The gateway POSTs `{policy_id, hook,
 * text, model}` to the partner `endpoint` (bearer `apiKey` when given) and expects `{verdict,
 * explanation?}` within `timeout` ms (default 10000), on either hook. Partners' own native APIs
 * are not spoken here: the endpoint is an adapter service that answers this contract.
 */
import { z } from 'zod'
import { PARTNER_CHECK_IDS } from '../../snapshot/policies.ts'
import { defineCheck, type CheckDefinition } from './check.ts'
import { postForVerdict } from './call-out.ts'

export const PARTNER_TIMEOUT_MS_DEFAULT = 10_000

const parameters = z.object({
  policyId: z.string().min(1).max(255),
  timeout: z.int().min(1).max(120_000).default(PARTNER_TIMEOUT_MS_DEFAULT),
  endpoint: z.url({ protocol: /^https?$/ }),
  apiKey: z.string().min(1).optional(),
  failOnError: z.boolean().default(false),
})

function partnerCheck(id: string): CheckDefinition<z.infer<typeof parameters>> {
  return defineCheck({
    id,
    parameters,
    compile({ policyId, timeout, endpoint, apiKey, failOnError }, { dispatcher }) {
      const headers: Record<string, string> = apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }
      return {
        timeoutMs: timeout,
        failOnError,
        mutates: false,
        failsEarly: false,
        run({ hook, text, model, signal }) {
          return postForVerdict(endpoint, JSON.stringify({ policy_id: policyId, check: id, hook, text, model }), headers, dispatcher, signal)
        },
      }
    },
  })
}

export const partnerChecks = PARTNER_CHECK_IDS.map(partnerCheck)
