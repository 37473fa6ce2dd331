/**
 * Whether the gateways this control plane serves enforce a kind of policy object, read from the
 * gateway's own list (`ENFORCED_POLICY_KINDS`, snapshot/enforcement.ts). A kind the gateway does
 * not enforce yet is stored and compiled, but its custom resource never says `Programmed` and its
 * admin answer carries `enforcement: {enforced: false, reason: 'NotEnforced'}`: nobody is told a
 * limit protects them when no request ever meets it.
 */
import { isEnforced, type PolicyKind } from '@gatehouse/gateway/snapshot'

export type Enforcement = { enforced: true } | { enforced: false; reason: 'NotEnforced'; message: string }

/** The gatehouse.dev kinds (and admin objects) that are policies the gateway may or may not enforce. */
export const POLICY_KINDS: ReadonlySet<string> = new Set<PolicyKind>(['Guardrail', 'RateLimitPolicy', 'UsageLimitPolicy'])

export function isPolicyKind(kind: string): kind is PolicyKind {
  return POLICY_KINDS.has(kind)
}

/** `enforced`: which kinds the gateways enforce (the gateway's own list; tests hand in another). */
export function enforcementOf(kind: PolicyKind, enforced: (kind: PolicyKind) => boolean = isEnforced): Enforcement {
  if (enforced(kind)) return { enforced: true }
  return { enforced: false, reason: 'NotEnforced', message: `This gateway release does not enforce ${kind} objects yet: the object is stored but no request is checked against it.` }
}

/** The admin answer's `enforcement` field. */
export function enforcementView(kind: PolicyKind): Record<string, unknown> {
  const enforcement = enforcementOf(kind)
  return enforcement.enforced ? { enforced: true } : { enforced: false, reason: enforcement.reason, message: enforcement.message }
}
