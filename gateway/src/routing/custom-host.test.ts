import { describe, expect, it } from 'vitest'
import { customHostAllowed } from './custom-host.ts'

describe('customHostAllowed', () => {
  const list = 'https://llm.internal.example:8443, models.example.com *.corp.example'
  it.each([
    ['https://llm.internal.example:8443/v1', true],
    ['https://llm.internal.example/v1', false], // other port
    ['http://llm.internal.example:8443/v1', false], // other scheme
    ['https://models.example.com/v1', true],
    ['http://models.example.com:9000', true],
    ['https://models.example.com.attacker.example', false],
    ['https://eu.corp.example/v1', true],
    ['https://corp.example/v1', false], // the pattern names hosts below the domain
    ['https://evilcorp.example', false],
    ['https://attacker.example', false],
  ])('%s -> %s', (host, allowed) => {
    expect(customHostAllowed(new URL(host), list)).toBe(allowed)
  })

  it('allows nothing without a list', () => {
    expect(customHostAllowed(new URL('https://models.example.com'), undefined)).toBe(false)
    expect(customHostAllowed(new URL('https://models.example.com'), '')).toBe(false)
  })
})
