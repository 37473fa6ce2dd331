/** `default.allowedRequestTypes`: the request's type (endpoint) is in `allowedTypes`, or not in `blockedTypes`. */
import { z } from 'zod'
import type { EndpointType } from '../../core/exchange-types.ts'
import { defineCheck, inline } from './check.ts'

/** The guardrail vocabulary names some endpoints differently from the usage record's `endpoint_type`. */
const REQUEST_TYPE_OF: Partial<Record<EndpointType, string>> = { responses: 'createModelResponse' }

export function requestType(endpointType: EndpointType): string {
  return REQUEST_TYPE_OF[endpointType] ?? endpointType
}

export const allowedRequestTypes = defineCheck({
  id: 'default.allowedRequestTypes',
  parameters: z
    .object({ allowedTypes: z.array(z.string().min(1)).min(1).optional(), blockedTypes: z.array(z.string().min(1)).min(1).optional() })
    .refine((p) => (p.allowedTypes === undefined) !== (p.blockedTypes === undefined), 'give allowedTypes or blockedTypes (one of them)'),
  compile({ allowedTypes, blockedTypes }) {
    const allowed = allowedTypes ? new Set(allowedTypes) : null
    const blocked = new Set(blockedTypes ?? [])
    return inline(({ endpointType }) => {
      const type = requestType(endpointType)
      const verdict = allowed ? allowed.has(type) : !blocked.has(type)
      return { verdict, explanation: verdict ? `request type ${type} is allowed` : `request type ${type} is not allowed` }
    })
  },
})
