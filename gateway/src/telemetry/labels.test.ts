import { describe, expect, it } from 'vitest'
import { CappedLabel, errorCodeLabel, statusClass } from './labels.ts'

describe('bounded labels', () => {
  it('admits known values up to the cap, then reads other', () => {
    const label = new CappedLabel(2)
    const known = (model: string) => model.startsWith('gpt-')
    expect(label.label('gpt-4o', known)).toBe('gpt-4o')
    expect(label.label('made-up', known)).toBe('other')
    expect(label.label('gpt-4o-mini', known)).toBe('gpt-4o-mini')
    expect(label.label('gpt-5', known)).toBe('other')
    // Admitted values stay admitted.
    expect(label.label('gpt-4o', known)).toBe('gpt-4o')
    expect(label.size).toBe(2)
    expect(label.label(null, known)).toBe('none')
    expect(label.label('', known)).toBe('none')
  })

  it('stays bounded under many distinct values', () => {
    const label = new CappedLabel(10)
    const values = new Set(Array.from({ length: 10_000 }, (_, index) => label.label(`model-${index}`)))
    expect(values.size).toBe(11)
  })

  it('maps statuses to classes and unknown error codes to other', () => {
    expect([200, 201, 302, 404, 429, 499, 500, 503, 0].map(statusClass)).toEqual(['2xx', '2xx', '3xx', '4xx', '4xx', 'cancelled', '5xx', '5xx', 'other'])
    expect(errorCodeLabel('rate_limited')).toBe('rate_limited')
    expect(errorCodeLabel('something the provider said')).toBe('other')
    expect(errorCodeLabel('toString')).toBe('other')
    expect(errorCodeLabel(null)).toBe('none')
  })
})
