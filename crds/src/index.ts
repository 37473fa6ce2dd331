/**
 * @gatehouse/crds: the one schema source for the gatehouse.dev/v1alpha1 kinds. It yields the CRD
 * manifests (crdManifests(), written to crds/generated/ by `make crds`), the TypeScript types and
 * parseResource() for resources read from YAML files in embedded mode.
 */
import { crdManifest, type CrdManifest } from './manifest.ts'
import { kindDefinitions } from './resources.ts'

export { API_VERSION, GROUP, VERSION, PERIODIC_RESETS, RATE_LIMIT_UNITS, commonStatus, condition } from './v1alpha1/shared.ts'
export type { ResourceStatus, Condition } from './v1alpha1/shared.ts'
export { CATEGORY, type CrdManifest } from './manifest.ts'
export { parseResource, formatPath, type ParseResult, type Problem } from './parse.ts'
export * from './resources.ts'
export { workspaceSpec, type WorkspaceSpec } from './v1alpha1/workspace.ts'
export { providerSpec, PROVIDER_KINDS, type ProviderSpec } from './v1alpha1/provider.ts'
export { configSpec, routingConfig, MAX_TARGET_DEPTH, type ConfigSpec, type ConfigNode, type RoutingConfig } from './v1alpha1/config.ts'
export { rateLimitPolicySpec, type RateLimitPolicySpec } from './v1alpha1/rate-limit-policy.ts'
export { usageLimitPolicySpec, type UsageLimitPolicySpec } from './v1alpha1/usage-limit-policy.ts'
export { deploymentSpec, sidecarBinding, type DeploymentSpec, type SidecarBinding } from './v1alpha1/deployment.ts'
export { guardrailSpec, type GuardrailSpec } from './v1alpha1/guardrail.ts'
export type { KindDefinition, PrinterColumn } from './v1alpha1/kind.ts'

/** One CustomResourceDefinition per kind, in a stable order. */
export function crdManifests(): CrdManifest[] {
  return kindDefinitions.map(crdManifest)
}
