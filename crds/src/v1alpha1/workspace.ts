/** Workspace: the tenant boundary; owns budgets, rate limits and request defaults. */
import { z } from 'zod'
import { displayName, objectName, rateLimitList, slug, stringMap, usageLimit } from './shared.ts'
import type { KindDefinition } from './kind.ts'

const guardrailNames = (hook: string) =>
  z
    .array(objectName('Name of a Guardrail in this namespace.'))
    .max(32)
    .optional()
    .describe(`Guardrails (by name, in order) run on ${hook} for every request of the workspace.`)

export const workspaceSpec = z
  .strictObject({
    name: displayName('workspace').optional(),
    slug: slug('workspace').optional(),
    description: z.string().max(1024).optional().describe('Free text describing the workspace.'),
    archived: z
      .boolean()
      .optional()
      .describe('Archived workspaces refuse new requests and are hidden from default listings.'),
    usageLimits: z
      .array(usageLimit)
      .max(4)
      .optional()
      .describe('Budgets of the workspace; requests are refused with 412 once one is exhausted.'),
    rateLimits: rateLimitList('workspace').optional(),
    defaults: z
      .strictObject({
        config: objectName('Name of the Config applied when a request names none.').optional(),
        metadata: stringMap('Metadata attached to every request of the workspace (request metadata wins).', 32).optional(),
        inputGuardrails: guardrailNames('beforeRequestHook'),
        outputGuardrails: guardrailNames('afterRequestHook'),
      })
      .optional()
      .describe('Defaults applied to requests made with keys of this workspace.'),
  })
  .describe('Desired state of the Workspace.')

export const workspaceKind: KindDefinition = {
  kind: 'Workspace',
  plural: 'workspaces',
  shortNames: ['ws'],
  description: 'Workspace is a tenant of Gatehouse: API keys, providers and configs belong to one, and it carries budgets, rate limits and request defaults.',
  spec: workspaceSpec,
  printerColumns: [
    { name: 'Display', type: 'string', jsonPath: '.spec.name', description: 'Display name.' },
    { name: 'Archived', type: 'boolean', jsonPath: '.spec.archived', description: 'Whether the workspace is archived.' },
  ],
}

export type WorkspaceSpec = z.infer<typeof workspaceSpec>
