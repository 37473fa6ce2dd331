import { describe, expect, it } from 'vitest'
import { rememberRawJson, toJsonText } from './raw-json.ts'

describe('raw JSON pass-through', () => {
  it('sends the original text of a chunk passed through unchanged, and serialises anything else', () => {
    const passed = { a: 1 }
    rememberRawJson(passed, '{"a": 1}')
    expect(toJsonText(passed)).toBe('{"a": 1}')
    expect(toJsonText({ a: 1 })).toBe('{"a":1}')
    expect(toJsonText('text')).toBe('"text"')
  })
})
