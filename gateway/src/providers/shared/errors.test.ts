import { describe, expect, it } from 'vitest'
import { errorInfo, retryAfterMsFromHeaders } from './errors.ts'

const NOW_MS = Date.parse('2026-11-23T12:00:00.000Z')

describe('retryAfterMsFromHeaders', () => {
  it('reads retry-after-ms as milliseconds', () => {
    expect(retryAfterMsFromHeaders({ 'retry-after-ms': '1500' }, NOW_MS)).toBe(1500)
    expect(retryAfterMsFromHeaders({ 'retry-after-ms': '0.5' }, NOW_MS)).toBe(0.5)
  })

  it('prefers retry-after-ms over retry-after', () => {
    expect(retryAfterMsFromHeaders({ 'retry-after-ms': '250', 'retry-after': '7' }, NOW_MS)).toBe(250)
  })

  it('falls back to retry-after when retry-after-ms is unusable', () => {
    expect(retryAfterMsFromHeaders({ 'retry-after-ms': 'soon', 'retry-after': '3' }, NOW_MS)).toBe(3000)
    expect(retryAfterMsFromHeaders({ 'retry-after-ms': '-5', 'retry-after': '2' }, NOW_MS)).toBe(2000)
  })

  it('reads retry-after in seconds', () => {
    expect(retryAfterMsFromHeaders({ 'retry-after': '12' }, NOW_MS)).toBe(12_000)
    expect(retryAfterMsFromHeaders({ 'retry-after': '0' }, NOW_MS)).toBe(0)
  })

  it('reads retry-after as an HTTP date against the clock it is given', () => {
    const inThirtySeconds = new Date(NOW_MS + 30_000).toUTCString()
    expect(retryAfterMsFromHeaders({ 'retry-after': inThirtySeconds }, NOW_MS)).toBe(30_000)
    const past = new Date(NOW_MS - 5_000).toUTCString()
    expect(retryAfterMsFromHeaders({ 'retry-after': past }, NOW_MS)).toBe(0)
  })

  it('measures an HTTP date against the wall clock when no clock is passed', () => {
    const date = new Date(Date.now() + 60_000).toUTCString()
    const waitMs = retryAfterMsFromHeaders({ 'retry-after': date })
    // toUTCString drops the milliseconds, so up to one second less.
    expect(waitMs).toBeGreaterThan(58_000)
    expect(waitMs).toBeLessThanOrEqual(60_000)
  })

  it('ignores what is neither a number nor a date', () => {
    expect(retryAfterMsFromHeaders({ 'retry-after': 'tomorrow-ish' }, NOW_MS)).toBeNull()
    expect(retryAfterMsFromHeaders({ 'retry-after': '-3' }, NOW_MS)).toBeNull()
    expect(retryAfterMsFromHeaders({}, NOW_MS)).toBeNull()
  })
})

describe('errorInfo', () => {
  // The break tried: errorInfo calling retryAfterMsFromHeaders(headers) without a clock, as before
  // this fix, made an HTTP-date retry-after null and this test fail.
  it('carries an HTTP-date retry-after into retryAfterMs', () => {
    const date = new Date(NOW_MS + 20_000).toUTCString()
    const info = errorInfo(429, { 'retry-after': date }, { message: 'slow down' }, NOW_MS)
    expect(info).toMatchObject({ status: 429, retryable: true, fault: 'upstream', retryAfterMs: 20_000 })
    const unpinned = errorInfo(503, { 'retry-after': new Date(Date.now() + 10_000).toUTCString() }, { message: 'busy' })
    expect(unpinned.retryAfterMs).toBeGreaterThan(8_000)
  })
})
