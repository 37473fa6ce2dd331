/** UsageLimitPolicy: a budget (cost or tokens) for the requests matching its conditions. */
import { z } from 'zod'
import { displayName, limitEnforcementFields, policyConditions, policyGroupBy, rules, usageLimitFields, usageLimitRules, workspaceRef } from './shared.ts'
import type { KindDefinition } from './kind.ts'

export const usageLimitPolicySpec = rules(
  z
    .strictObject({
      name: displayName('policy').optional(),
      workspace: workspaceRef(),
      conditions: policyConditions,
      groupBy: policyGroupBy,
      ...usageLimitFields,
      ...limitEnforcementFields,
    })
    .describe('Desired state of the UsageLimitPolicy.'),
  usageLimitRules,
)

export const usageLimitPolicyKind: KindDefinition = {
  kind: 'UsageLimitPolicy',
  plural: 'usagelimitpolicies',
  shortNames: ['ghulp'],
  description: 'UsageLimitPolicy is a budget in cost or tokens for the requests matching its conditions, counted per groupBy key, optionally reset weekly, monthly or every N days.',
  spec: usageLimitPolicySpec,
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'Budgeted quantity.' },
    { name: 'Limit', type: 'integer', jsonPath: '.spec.creditLimit', description: 'Budget per period.' },
    { name: 'Reset', type: 'string', jsonPath: '.spec.periodicReset', description: 'Calendar reset period.' },
  ],
  selectableFields: ['.spec.workspace'],
}

export type UsageLimitPolicySpec = z.infer<typeof usageLimitPolicySpec>
