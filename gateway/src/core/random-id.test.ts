import { describe, expect, it } from 'vitest'
import { isTraceIdForm, randomSpanId, randomTraceId } from './random-id.ts'

describe('random ids', () => {
  it('are W3C-shaped and differ, across pool refills', () => {
    // The 64 KB pool holds 8,192 span ids: 6,000 of each kind take 144,000 bytes, across two refills.
    const spans = Array.from({ length: 6000 }, randomSpanId)
    const traces = Array.from({ length: 6000 }, randomTraceId)
    for (const id of spans) expect(id).toMatch(/^(?!0{16})[0-9a-f]{16}$/)
    for (const id of traces) expect(id).toMatch(/^(?!0{32})[0-9a-f]{32}$/)
    expect(new Set(spans).size).toBe(spans.length)
    expect(new Set(traces).size).toBe(traces.length)
  })

  it('spread over every hex digit in every position', () => {
    const seen = Array.from({ length: 32 }, () => new Set<string>())
    for (let round = 0; round < 2000; round++) [...randomTraceId()].forEach((digit, index) => seen[index]!.add(digit))
    for (const digits of seen) expect(digits.size).toBe(16)
  })
})

describe('isTraceIdForm', () => {
  it('accepts 32 lowercase hex digits that are not all zeros, and nothing else', () => {
    expect(isTraceIdForm('4bf92f3577b34da6a3ce929d0e0e4736')).toBe(true)
    expect(isTraceIdForm('4BF92F3577B34DA6A3CE929D0E0E4736')).toBe(false)
    expect(isTraceIdForm('0'.repeat(32))).toBe(false)
    expect(isTraceIdForm('0'.repeat(31) + '1')).toBe(true)
    expect(isTraceIdForm('4bf92f3577b34da6a3ce929d0e0e473')).toBe(false)
    expect(isTraceIdForm('4bf92f3577b34da6a3ce929d0e0e4736a')).toBe(false)
    expect(isTraceIdForm('4bf92f35-77b3-4da6-a3ce-929d0e0e')).toBe(false)
    expect(isTraceIdForm('4bf92f3577b34da6a3ce929d0e0e473g')).toBe(false)
  })
})
