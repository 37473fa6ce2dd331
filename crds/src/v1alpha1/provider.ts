/** Provider: a model provider account (kind, endpoint, credentials from a Secret). */
import { z } from 'zod'
import { KEYLESS_PROVIDER_KINDS, PROVIDER_KINDS } from '@gatehouse/gateway/snapshot'
import { displayName, immutable, rateLimitList, rules, secretKeyRef, slug, stringMap, usageLimit, workspaceRef } from './shared.ts'
import type { KindDefinition } from './kind.ts'

export { PROVIDER_KINDS }

const KEYLESS_KINDS: readonly string[] = KEYLESS_PROVIDER_KINDS

export const providerSpec = rules(
  z
    .strictObject({
      kind: immutable(z.enum(PROVIDER_KINDS), 'kind').describe(
        'Provider family; selects the request/response translation. Immutable.',
      ),
      name: displayName('provider').optional(),
      slug: slug('provider (clients address it as @<slug>/<model>)').optional(),
      baseUrl: z
        .string()
        .max(2048)
        .regex(/^https?:\/\/[^\s/?#]+[^\s]*$/)
        .optional()
        .describe('Base URL of the provider API (http or https). Defaults to the public endpoint of the kind; required for vllm.'),
      workspace: workspaceRef(),
      secretRef: secretKeyRef
        .optional()
        .describe(
          'Secret key holding the credential: the API key; for bedrock a JSON object {accessKeyId, secretAccessKey, sessionToken?} or an API key; for vertex-ai a service-account JSON key. Required except for ollama and vllm. Credentials are never written inline.',
        ),
      options: stringMap(
        'Provider-specific options, such as apiVersion, resourceName and deploymentName (azure-openai), region (bedrock, vertex-ai), projectId (vertex-ai), organization and project (openai).',
        32,
      ).optional(),
      models: z
        .array(z.string().min(1).max(255).describe('Model id.'))
        .max(256)
        .optional()
        .meta({ 'x-kubernetes-list-type': 'set' })
        .describe('Models this provider may serve; omitted or empty allows any model.'),
      tags: stringMap('Custom key-value pairs, filterable in admin API listings.', 32, 255).optional(),
      usageLimits: usageLimit.optional().describe('Budget of this provider; requests are refused once it is exhausted.'),
      rateLimits: rateLimitList('provider').optional(),
    })
    .describe('Desired state of the Provider.'),
  [
    {
      rule: `self.kind in [${KEYLESS_KINDS.map((kind) => `'${kind}'`).join(', ')}] || has(self.secretRef)`,
      message: 'secretRef is required for this provider kind',
      fieldPath: '.secretRef',
      check: (s) => KEYLESS_KINDS.includes(s.kind) || s.secretRef !== undefined,
    },
    {
      rule: "self.kind != 'vllm' || has(self.baseUrl)",
      message: 'baseUrl is required for vllm',
      fieldPath: '.baseUrl',
      check: (s) => s.kind !== 'vllm' || s.baseUrl !== undefined,
    },
    {
      rule: "self.kind != 'azure-openai' || (has(self.options) && 'resourceName' in self.options)",
      message: 'azure-openai needs options.resourceName',
      fieldPath: '.options',
      check: (s) => s.kind !== 'azure-openai' || s.options?.resourceName !== undefined,
    },
  ],
)

export const providerKind: KindDefinition = {
  kind: 'Provider',
  plural: 'providers',
  shortNames: ['ghprov'],
  description: 'Provider is an account at a model provider: its kind, endpoint and a Secret reference for the credential. Clients address it as @<slug>/<model> or through a Config.',
  spec: providerSpec,
  printerColumns: [
    { name: 'Kind', type: 'string', jsonPath: '.spec.kind', description: 'Provider family.' },
    { name: 'Workspace', type: 'string', jsonPath: '.spec.workspace', description: 'Owning workspace.' },
    { name: 'Base URL', type: 'string', jsonPath: '.spec.baseUrl', description: 'Endpoint override.', priority: 1 },
  ],
  selectableFields: ['.spec.kind', '.spec.workspace'],
}

export type ProviderSpec = z.infer<typeof providerSpec>
