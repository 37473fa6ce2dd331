import { describe, expect, it } from 'vitest'
import { conditionsFor, mergeConditions, sameStatus } from './conditions.ts'

const T0 = '2026-11-22T08:00:00Z'
const T1 = '2026-11-22T08:05:00Z'

describe('conditionsFor', () => {
  it('is Ready only when accepted and programmed', () => {
    expect(conditionsFor({ accepted: true }, { programmed: true, generation: 7, gateways: 2 }).map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Accepted', 'True', 'Accepted'],
      ['Programmed', 'True', 'Programmed'],
      ['Ready', 'True', 'Ready'],
    ])
  })

  it('carries the rejection reason into Ready', () => {
    const conditions = conditionsFor(
      { accepted: false, reason: 'SecretNotFound', message: "spec.secretRef: no Secret 'openai'" },
      { programmed: false, reason: 'NotAccepted', message: 'not accepted' },
    )
    expect(conditions[0]).toMatchObject({ status: 'False', reason: 'SecretNotFound' })
    expect(conditions[2]).toMatchObject({ type: 'Ready', status: 'False', reason: 'SecretNotFound', message: "spec.secretRef: no Secret 'openai'" })
  })

  it('says NotEnforced, never Programmed, for a kind the gateway does not enforce', () => {
    const conditions = conditionsFor({ accepted: true }, { programmed: false, reason: 'NotEnforced', message: 'not enforced' })
    expect(conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Accepted', 'True', 'Accepted'],
      ['Programmed', 'False', 'NotEnforced'],
      ['Ready', 'False', 'NotEnforced'],
    ])
  })

  it('is not Ready while gateways have not applied the change', () => {
    const conditions = conditionsFor({ accepted: true }, { programmed: false, reason: 'Pending', message: 'waiting for 2 gateways' })
    expect(conditions[2]).toMatchObject({ type: 'Ready', status: 'False', reason: 'Pending' })
  })
})

describe('mergeConditions', () => {
  it('stamps observedGeneration and keeps lastTransitionTime while the status holds', () => {
    const first = mergeConditions(undefined, conditionsFor({ accepted: true }, { programmed: false, reason: 'Pending', message: 'm' }), 1, T0)
    expect(first.every((c) => c.observedGeneration === 1 && c.lastTransitionTime === T0)).toBe(true)

    const second = mergeConditions(first, conditionsFor({ accepted: true }, { programmed: true, generation: 9, gateways: 1 }), 2, T1)
    const byType = Object.fromEntries(second.map((c) => [c.type, c]))
    // Accepted stayed True: its transition time stays; Programmed and Ready flipped.
    expect(byType.Accepted).toMatchObject({ status: 'True', observedGeneration: 2, lastTransitionTime: T0 })
    expect(byType.Programmed).toMatchObject({ status: 'True', lastTransitionTime: T1 })
    expect(byType.Ready).toMatchObject({ status: 'True', lastTransitionTime: T1 })
  })

  it('keeps the transition time when only the reason changes, and keeps foreign condition types', () => {
    const previous = [
      { type: 'Accepted', status: 'False' as const, reason: 'InvalidSpec', message: 'a', observedGeneration: 1, lastTransitionTime: T0 },
      { type: 'Custom', status: 'True' as const, reason: 'Other', message: 'b', observedGeneration: 1, lastTransitionTime: T0 },
    ]
    const merged = mergeConditions(previous, [{ type: 'Accepted', status: 'False', reason: 'SecretNotFound', message: 'c' }], 2, T1)
    expect(merged).toEqual([
      { type: 'Accepted', status: 'False', reason: 'SecretNotFound', message: 'c', observedGeneration: 2, lastTransitionTime: T0 },
      previous[1],
    ])
  })
})

describe('sameStatus', () => {
  it('ignores key order and undefined fields', () => {
    expect(sameStatus({ a: 1, b: { c: 2, d: undefined } }, { b: { c: 2 }, a: 1 })).toBe(true)
    expect(sameStatus({ a: 1 }, { a: 2 })).toBe(false)
  })
})
