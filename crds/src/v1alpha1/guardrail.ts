/** Guardrail: checks run on request and/or response hooks, with deny/async actions. */
import { z } from 'zod'
import { displayName, freeForm, rules, slug, workspaceRef } from './shared.ts'
import type { KindDefinition } from './kind.ts'

const feedback = (defaultValue: number) =>
  z
    .strictObject({
      feedback: z
        .strictObject({
          value: z.int().min(-10).max(10).describe(`Feedback score recorded on the log (-10 to 10, default ${defaultValue}).`),
          weight: z.number().min(0).max(1).optional().describe('Weight of the feedback (0 to 1, default 1).'),
          metadata: z.string().max(1024).optional().describe('Text stored with the feedback.'),
        })
        .describe('Feedback written to the request log.'),
    })

const actions = rules(
  z
    .strictObject({
      deny: z.boolean().default(false).describe('Block the request (HTTP 446) when a check fails; otherwise it passes with status 246.'),
      async: z.boolean().default(false).describe('Run the checks in the background without delaying or blocking the request.'),
      onSuccess: feedback(5).optional().describe('Recorded when every check passes.'),
      onFail: feedback(-5).optional().describe('Recorded when a check fails.'),
      holdBack: z
        .strictObject({
          mode: z.enum(['none', 'window', 'all']).describe('none: chunks go out as they arrive; window: the last windowChars characters wait; all: the whole answer waits.'),
          windowChars: z.int().min(1).max(1_000_000).optional().describe('Characters held back in window mode (default 256).'),
        })
        .optional()
        .describe('How much of a streamed answer is held back while output checks judge it; held text is never sent after a deny.'),
    })
    .describe('What happens with the verdict.'),
  [
    {
      rule: '!(self.deny && self.async)',
      message: 'deny and async are mutually exclusive: an async check cannot block the request',
      check: (a) => !(a.deny && a.async),
    },
  ],
)

export const guardrailSpec = z
  .strictObject({
    name: displayName('guardrail').optional(),
    slug: slug('guardrail').optional(),
    workspace: workspaceRef(),
    checks: z
      .array(
        z
          .strictObject({
            id: z
              .string()
              .min(1)
              .max(128)
              .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/)
              .describe('Check type, such as default.regexMatch, default.requiredMetadataKeyPairs or default.allowedRequestTypes.'),
            name: z.string().min(1).max(255).optional().describe('Label of this check in results.'),
            enabled: z.boolean().default(true).describe('Disabled checks are skipped.'),
            parameters: freeForm('Parameters of the check type (for example {rule, not} for default.regexMatch).').optional(),
          })
          .describe('One check.'),
      )
      .min(1)
      .max(32)
      .describe('Checks evaluated on each hook (at least one).'),
    hooks: z
      .array(z.enum(['beforeRequestHook', 'afterRequestHook']).describe('Hook point.'))
      .min(1)
      .max(2)
      .meta({ 'x-kubernetes-list-type': 'set' })
      .describe('Where the checks run: beforeRequestHook (on the request), afterRequestHook (on the response).'),
    actions,
  })
  .describe('Desired state of the Guardrail.')

export const guardrailKind: KindDefinition = {
  kind: 'Guardrail',
  plural: 'guardrails',
  shortNames: ['ghgr'],
  description: 'Guardrail is a list of checks run before the request (beforeRequestHook) and/or after the response (afterRequestHook); failing checks deny the request (446) or pass it flagged (246).',
  spec: guardrailSpec,
  printerColumns: [
    { name: 'Deny', type: 'boolean', jsonPath: '.spec.actions.deny', description: 'Failing checks block the request.' },
    { name: 'Async', type: 'boolean', jsonPath: '.spec.actions.async', description: 'Checks run in the background.' },
  ],
  selectableFields: ['.spec.workspace'],
}

export type GuardrailSpec = z.infer<typeof guardrailSpec>
