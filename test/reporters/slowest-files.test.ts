import { describe, expect, it } from 'vitest'
import { slowestFilesReport } from './slowest-files.ts'

describe('slowestFilesReport', () => {
  it('lists the slowest files first, at most the count asked for', () => {
    const report = slowestFilesReport(
      [
        { path: 'a.test.ts', durationMs: 1_000 },
        { path: 'b.test.ts', durationMs: 30_500 },
        { path: 'c.test.ts', durationMs: 12_340 },
      ],
      2,
    )
    expect(report).toBe('\nSlowest 2 test files:\n     30.5 s  b.test.ts\n     12.3 s  c.test.ts\n')
  })

  it('prints nothing for an empty run', () => {
    expect(slowestFilesReport([], 5)).toBe('')
  })
})
