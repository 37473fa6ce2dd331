/**
 * Status conditions as Kubernetes API conventions want them: one entry per type, each with the
 * generation it was computed from, and a lastTransitionTime that moves only when the status flips
 * (not when the reason or message changes), so `kubectl wait` and dashboards see real transitions.
 * Pure functions: the reconciler decides, these shape the result.
 */
import type { Condition } from '@gatehouse/crds'

export type ConditionStatus = 'True' | 'False' | 'Unknown'

export interface ConditionInput {
  type: 'Accepted' | 'Programmed' | 'Ready'
  status: ConditionStatus
  reason: string
  message: string
}

/** What the reconciler found: accepted (stored) or refused with a reason. */
export type Acceptance = { accepted: true } | { accepted: false; reason: string; message: string }

/** Whether the gateways run a snapshot containing the object's latest change. */
export type Programming =
  | { programmed: true; generation: number; gateways: number }
  | { programmed: false; reason: 'Pending' | 'Rejected' | 'NoGateways' | 'NotAccepted' | 'NotEnforced'; message: string }

export function acceptedCondition(acceptance: Acceptance): ConditionInput {
  return acceptance.accepted
    ? { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'The resource is valid and stored in the admin store.' }
    : { type: 'Accepted', status: 'False', reason: acceptance.reason, message: acceptance.message }
}

export function programmedCondition(programming: Programming): ConditionInput {
  return programming.programmed
    ? {
        type: 'Programmed',
        status: 'True',
        reason: 'Programmed',
        message: `All ${programming.gateways} connected gateway(s) applied a snapshot with this change (generation ${programming.generation} or later).`,
      }
    : { type: 'Programmed', status: 'False', reason: programming.reason, message: programming.message }
}

/** Ready = Accepted and Programmed; its reason is the first one that is not. */
export function readyCondition(accepted: ConditionInput, programmed: ConditionInput): ConditionInput {
  if (accepted.status !== 'True') return { type: 'Ready', status: 'False', reason: accepted.reason, message: accepted.message }
  if (programmed.status !== 'True') return { type: 'Ready', status: programmed.status, reason: programmed.reason, message: programmed.message }
  return { type: 'Ready', status: 'True', reason: 'Ready', message: 'The resource is accepted and served by every connected gateway.' }
}

/** The three conditions for one observation. */
export function conditionsFor(acceptance: Acceptance, programming: Programming): ConditionInput[] {
  const accepted = acceptedCondition(acceptance)
  const programmed = programmedCondition(programming)
  return [accepted, programmed, readyCondition(accepted, programmed)]
}

/**
 * Merges fresh observations into the previous list: lastTransitionTime is kept while a type's
 * status is unchanged, conditions of other types (written by someone else) are kept as they are.
 */
export function mergeConditions(previous: readonly Condition[] | undefined, next: readonly ConditionInput[], observedGeneration: number, nowIso: string): Condition[] {
  const byType = new Map((previous ?? []).map((condition) => [condition.type, condition]))
  for (const input of next) {
    const before = byType.get(input.type)
    const lastTransitionTime = before && before.status === input.status ? before.lastTransitionTime : nowIso
    byType.set(input.type, { ...input, observedGeneration, lastTransitionTime })
  }
  return [...byType.values()]
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((condition) => condition.type === type)
}

/** Order-insensitive equality of two statuses, to skip writes that would change nothing. */
export function sameStatus(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b)
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item
    return Object.fromEntries(Object.entries(item as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
  })
}
