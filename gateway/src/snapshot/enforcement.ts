/**
 * Which kinds of policy object this gateway release enforces on the request path. The control
 * plane reads it (through the snapshot subpath) to tell the truth on a resource's status: an object
 * of a kind no gateway enforces is never `Programmed`; its condition says `NotEnforced`. A kind is
 * added here in the same change that makes the gateway enforce it.
 */
export type PolicyKind = 'Guardrail' | 'RateLimitPolicy' | 'UsageLimitPolicy'

export const ENFORCED_POLICY_KINDS: ReadonlySet<PolicyKind> = new Set<PolicyKind>(['Guardrail', 'RateLimitPolicy', 'UsageLimitPolicy'])

export function isEnforced(kind: string): boolean {
  return ENFORCED_POLICY_KINDS.has(kind as PolicyKind)
}
