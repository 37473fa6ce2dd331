import { describe, expect, it } from 'vitest'
import { generatedChars, inputTokenBound, relayedContentChars, statedOutputCap } from './estimate.ts'

describe('worst cases and stream metering', () => {
  it('bounds input by body bytes and reads the stated output cap', () => {
    expect(inputTokenBound({ messages: [{ role: 'user', content: 'héllo' }] })).toBe(Buffer.byteLength(JSON.stringify({ messages: [{ role: 'user', content: 'héllo' }] })))
    expect(statedOutputCap({ max_completion_tokens: 12 })).toBe(12)
    expect(statedOutputCap({ max_tokens: 'x' })).toBeNull()
  })

  it('counts generated characters in parsed and relayed chunks alike', () => {
    const chunk = { choices: [{ index: 0, delta: { content: 'Hello "you"' } }] }
    expect(generatedChars(chunk)).toBe(11)
    expect(generatedChars({ event: 'content_block_delta', data: { delta: { type: 'text_delta', text: 'abc' } } })).toBe(3)
    // Escapes count as their source characters: a bound, never less than the text.
    expect(relayedContentChars(JSON.stringify(chunk))).toBe(13)
    expect(relayedContentChars('{"choices":[{"delta":{"role":"assistant","content":""}}]}')).toBe(0)
  })
})
