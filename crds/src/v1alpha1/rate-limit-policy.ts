/** RateLimitPolicy: a rate limit applied to the requests matching its conditions. */
import { z } from 'zod'
import { RATE_LIMIT_UNITS, displayName, limitEnforcementFields, policyConditions, policyGroupBy, workspaceRef } from './shared.ts'
import type { KindDefinition } from './kind.ts'

export const rateLimitPolicySpec = z
  .strictObject({
    name: displayName('policy').optional(),
    workspace: workspaceRef(),
    conditions: policyConditions,
    groupBy: policyGroupBy,
    type: z.enum(['requests', 'tokens']).describe('What is counted: requests, or tokens (input plus output).'),
    unit: z
      .enum(RATE_LIMIT_UNITS)
      .describe('Window: rpm (per minute), rph (per hour), rpd (per day) or rpw (per week).'),
    value: z.int().min(0).max(1_000_000_000_000).describe('Maximum count per window for each group.'),
    ...limitEnforcementFields,
  })
  .describe('Desired state of the RateLimitPolicy.')

export const rateLimitPolicyKind: KindDefinition = {
  kind: 'RateLimitPolicy',
  plural: 'ratelimitpolicies',
  shortNames: ['ghrlp'],
  description: 'RateLimitPolicy limits the requests or tokens per minute, hour, day or week of the requests matching its conditions, counted per groupBy key.',
  spec: rateLimitPolicySpec,
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'Counted quantity.' },
    { name: 'Unit', type: 'string', jsonPath: '.spec.unit', description: 'Window.' },
    { name: 'Value', type: 'integer', jsonPath: '.spec.value', description: 'Limit per window.' },
  ],
  selectableFields: ['.spec.workspace'],
}

export type RateLimitPolicySpec = z.infer<typeof rateLimitPolicySpec>
