/** The registry of kinds: definitions for the CRDs, full-object schemas and types for parsing. */
import type { z } from 'zod'
import { resourceSchema, type KindDefinition } from './v1alpha1/kind.ts'
import { workspaceKind, workspaceSpec } from './v1alpha1/workspace.ts'
import { providerKind, providerSpec } from './v1alpha1/provider.ts'
import { configKind, configSpec } from './v1alpha1/config.ts'
import { rateLimitPolicyKind, rateLimitPolicySpec } from './v1alpha1/rate-limit-policy.ts'
import { usageLimitPolicyKind, usageLimitPolicySpec } from './v1alpha1/usage-limit-policy.ts'
import { deploymentKind, deploymentSpec } from './v1alpha1/deployment.ts'
import { guardrailKind, guardrailSpec } from './v1alpha1/guardrail.ts'

export const kindDefinitions: readonly KindDefinition[] = [
  workspaceKind,
  providerKind,
  configKind,
  rateLimitPolicyKind,
  usageLimitPolicyKind,
  deploymentKind,
  guardrailKind,
]

export const workspaceResource = resourceSchema('Workspace', workspaceSpec)
export const providerResource = resourceSchema('Provider', providerSpec)
export const configResource = resourceSchema('Config', configSpec)
export const rateLimitPolicyResource = resourceSchema('RateLimitPolicy', rateLimitPolicySpec)
export const usageLimitPolicyResource = resourceSchema('UsageLimitPolicy', usageLimitPolicySpec)
export const deploymentResource = resourceSchema('Deployment', deploymentSpec)
export const guardrailResource = resourceSchema('Guardrail', guardrailSpec)

export const resources = {
  Workspace: workspaceResource,
  Provider: providerResource,
  Config: configResource,
  RateLimitPolicy: rateLimitPolicyResource,
  UsageLimitPolicy: usageLimitPolicyResource,
  Deployment: deploymentResource,
  Guardrail: guardrailResource,
} as const

export type Workspace = z.infer<typeof workspaceResource>
export type Provider = z.infer<typeof providerResource>
export type Config = z.infer<typeof configResource>
export type RateLimitPolicy = z.infer<typeof rateLimitPolicyResource>
export type UsageLimitPolicy = z.infer<typeof usageLimitPolicyResource>
export type Deployment = z.infer<typeof deploymentResource>
export type Guardrail = z.infer<typeof guardrailResource>
export type GatehouseResource = Workspace | Provider | Config | RateLimitPolicy | UsageLimitPolicy | Deployment | Guardrail
export type GatehouseKind = GatehouseResource['kind']
