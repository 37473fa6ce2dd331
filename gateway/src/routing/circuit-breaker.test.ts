import { describe, expect, it } from 'vitest'
import { BREAKER_WINDOW, CircuitBreaker, defaultBreakerSettings, type BreakerSettings } from './circuit-breaker.ts'

const settings: BreakerSettings = { ...defaultBreakerSettings, failureThreshold: 3, cooldownMs: 1000 }

function fail(breaker: CircuitBreaker, times: number, now = 0, using = settings): void {
  for (let index = 0; index < times; index++) breaker.record(true, using, now, breaker.begin(now))
}

describe('circuit breaker', () => {
  it('opens after consecutive failures and stays open for the cool-down', () => {
    const breaker = new CircuitBreaker()
    fail(breaker, 2)
    expect(breaker.state(0)).toBe('closed')
    fail(breaker, 1)
    expect(breaker.state(0)).toBe('open')
    expect(breaker.available(999)).toBe(false)
    expect(breaker.state(1000)).toBe('half-open')
  })

  it('a success resets the consecutive count', () => {
    const breaker = new CircuitBreaker()
    fail(breaker, 2)
    breaker.record(false, settings, 0, false)
    fail(breaker, 2)
    expect(breaker.state(0)).toBe('closed')
  })

  it('opens on the failure rate over the window once enough requests were seen', () => {
    const rate = { ...settings, failureThreshold: 100, failureRateThreshold: 0.5, minimumRequests: 10 }
    const breaker = new CircuitBreaker()
    // Alternating: never 2 in a row, but half of all outcomes fail.
    for (let index = 0; index < 8; index++) breaker.record(index % 2 === 0, rate, 0, false)
    expect(breaker.state(0)).toBe('closed')
    breaker.record(false, rate, 0, false)
    breaker.record(true, rate, 0, false)
    expect(breaker.state(0)).toBe('open')
  })

  it('counts the rate over the last outcomes only', () => {
    const rate = { ...settings, failureThreshold: 100, failureRateThreshold: 0.5, minimumRequests: 10 }
    const breaker = new CircuitBreaker()
    for (let index = 0; index < 9; index++) breaker.record(true, { ...rate, minimumRequests: 20, failureRateThreshold: 1 }, 0, false)
    for (let index = 0; index < BREAKER_WINDOW; index++) breaker.record(false, rate, 0, false)
    // The early failures have left the window: 1 failure in 20 stays closed.
    breaker.record(true, rate, 0, false)
    expect(breaker.state(0)).toBe('closed')
  })

  it('lets exactly one probe through when half-open; success closes it', () => {
    const breaker = new CircuitBreaker()
    fail(breaker, 3)
    expect(breaker.available(1000)).toBe(true)
    const probe = breaker.begin(1000)
    expect(probe).toBe(true)
    expect(breaker.available(1000)).toBe(false)
    expect(breaker.begin(1000)).toBe(false)
    breaker.record(false, settings, 1010, probe)
    expect(breaker.state(1010)).toBe('closed')
  })

  it('a failed probe reopens it for longer each time', () => {
    const breaker = new CircuitBreaker()
    fail(breaker, 3, 0)
    breaker.record(true, settings, 1000, breaker.begin(1000))
    expect(breaker.state(2999)).toBe('open')
    expect(breaker.state(3000)).toBe('half-open')
    breaker.record(true, settings, 3000, breaker.begin(3000))
    expect(breaker.state(5999)).toBe('open')
    expect(breaker.state(6000)).toBe('half-open')
  })

  it('an abandoned probe frees the slot', () => {
    const breaker = new CircuitBreaker()
    fail(breaker, 3)
    const probe = breaker.begin(1000)
    breaker.abandon(probe)
    expect(breaker.available(1000)).toBe(true)
  })

  it('outcomes of attempts forced while open change nothing', () => {
    const breaker = new CircuitBreaker()
    fail(breaker, 3)
    breaker.record(false, settings, 10, false)
    expect(breaker.state(10)).toBe('open')
  })
})
