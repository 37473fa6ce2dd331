import { describe, expect, it } from 'vitest'
import { knownSecretValues, REDACTED, scrubSecrets } from './scrub.ts'
import { secretBag } from './secret.ts'

describe('scrubSecrets', () => {
  it('removes every known secret value wherever it appears, escaped forms too', () => {
    const known = knownSecretValues(secretBag({ apiKey: 'plainpassword1', region: 'eu', json: '{"k":"v"}' }))
    expect(scrubSecrets('you sent plainpassword1 (plainpassword1)', known)).toBe(`you sent ${REDACTED} (${REDACTED})`)
    expect(scrubSecrets('echo: {\\"k\\":\\"v\\"} in eu', known)).toBe(`echo: ${REDACTED} in eu`)
  })

  it.each([
    ['Incorrect API key provided: sk-proj-abcdefghijklmnop1234.', 'Incorrect API key provided: [redacted].'],
    ['invalid x-api-key sk-ant-api03-AbCdEf0123456789', 'invalid x-api-key [redacted]'],
    ['header was Authorization: Bearer abc.def-ghi_123', 'header was Authorization: Bearer [redacted]'],
    ['The security token AKIAIOSFODNN7EXAMPLE is invalid', 'The security token [redacted] is invalid'],
    ['secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1 rejected', 'secret [redacted] rejected'],
    ['key ghk_ws_0123456789abcdefABCDEF', 'key [redacted]'],
    ['API key AIzaSyA1234567890abcdefghijklmnopqrstuv is invalid', 'API key [redacted] is invalid'],
    ['hash 0123456789abcdef0123456789abcdef', 'hash [redacted]'],
  ])('%s', (input, output) => {
    expect(scrubSecrets(input)).toBe(output)
  })

  it('leaves ordinary messages alone', () => {
    const message = "The model 'gpt-4o-mini-2024-07-18' does not exist or you do not have access to it (request req_123abc)."
    expect(scrubSecrets(message)).toBe(message)
  })

  it('stays linear on long runs that are not tokens', () => {
    const text = 'a'.repeat(64 * 1024) + '!' + 'f'.repeat(64 * 1024) + 'g'
    const started = performance.now()
    scrubSecrets(text)
    expect(performance.now() - started).toBeLessThan(500)
  })
})
