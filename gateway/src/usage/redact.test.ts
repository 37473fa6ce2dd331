import { describe, expect, it } from 'vitest'
import { RawJson, rememberRawJson } from '../core/raw-json.ts'
import { loggableJson, MAX_BODY_CHARS, REDACTED, redactValue } from './redact.ts'

describe('redactValue', () => {
  it('masks credential fields whatever their case, and key-shaped strings at any depth', () => {
    const body = {
      model: 'gpt-4o',
      Authorization: 'Bearer abc',
      nested: { API_KEY: { any: 'shape' }, list: ['plain', 'my key is sk-abcdefghijklmnopqrstuvwx, keep it', { token: 42 }] },
      empty: { password: null },
    }
    expect(redactValue(body)).toEqual({
      model: 'gpt-4o',
      Authorization: REDACTED,
      nested: { API_KEY: REDACTED, list: ['plain', `my key is ${REDACTED}, keep it`, { token: REDACTED }] },
      empty: { password: null },
    })
  })

  it('leaves the body it was given as it was, and returns a clean body itself (nothing copied)', () => {
    const dirty = { messages: [{ role: 'user', content: 'hello' }, { role: 'user', content: 'Bearer abcdefghijklmnopqrstuvwxyz' }], secret: 's' }
    const before = JSON.stringify(dirty)
    const redacted = redactValue(dirty) as typeof dirty
    expect(JSON.stringify(dirty)).toBe(before)
    // The untouched first message is shared; the changed parts are copies.
    expect(redacted.messages[0]).toBe(dirty.messages[0])
    expect(redacted.messages[1]).not.toBe(dirty.messages[1])
    const clean = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }], n: 2 }
    expect(redactValue(clean)).toBe(clean)
  })

  it('masks the shortest key-shaped string, and leaves shorter text alone', () => {
    expect(redactValue('sk-abcdefghijklmnop')).toBe(REDACTED)
    expect(redactValue('sk-abcdefghijklmno')).toBe('sk-abcdefghijklmno')
    expect(redactValue({ note: 'AKIAABCDEFGHIJKLMNOP' })).toEqual({ note: REDACTED })
  })

  it('cuts a body deeper than it walks', () => {
    let deep: unknown = 'sk-abcdefghijklmnopqrstuvwx'
    for (let level = 0; level < 100; level++) deep = { inner: deep }
    expect(JSON.stringify(redactValue(deep))).not.toContain('sk-abcdefghijklmnopqrstuvwx')
  })
})

describe('loggableJson', () => {
  it('is the redacted body as JSON text, a size note past the cap, null without a body', () => {
    expect(loggableJson({ api_key: 'k', prompt: 'hi' })).toBe(`{"api_key":"${REDACTED}","prompt":"hi"}`)
    expect(loggableJson('text')).toBe('"text"')
    expect(loggableJson(null)).toBeNull()
    expect(loggableJson(undefined)).toBeNull()
    const huge = { data: 'x'.repeat(MAX_BODY_CHARS) }
    expect(JSON.parse(loggableJson(huge)!)).toEqual({ truncated: true, chars: MAX_BODY_CHARS + 11 })
  })
  it('takes a relayed answer\'s own text when nothing is masked, on one line only', () => {
    const text = '{ "id": "chatcmpl-1", "choices": [] }'
    const answer = JSON.parse(text) as unknown
    rememberRawJson(answer, text)
    expect(loggableJson(answer)).toBe(text)
    const pretty = '{\n  "id": "chatcmpl-2"\n}'
    const prettyAnswer = JSON.parse(pretty) as unknown
    rememberRawJson(prettyAnswer, pretty)
    expect(loggableJson(prettyAnswer)).toBe('{"id":"chatcmpl-2"}')
    const secret = '{"note":"my key is sk-abcdefghijklmnopqrstuvwx"}'
    const secretAnswer = JSON.parse(secret) as unknown
    rememberRawJson(secretAnswer, secret)
    expect(loggableJson(secretAnswer)).toBe(`{"note":"my key is ${REDACTED}"}`)
  })
  it('reads an answer kept as its text (a cache hit) as the JSON it holds, masked like any other', () => {
    const clean = '{"id":"chatcmpl-3","choices":[]}'
    expect(loggableJson(new RawJson(clean))).toBe(clean)
    expect(loggableJson(new RawJson('{"note":"my key is sk-abcdefghijklmnopqrstuvwx","api_key":"k"}'))).toBe(`{"note":"my key is ${REDACTED}","api_key":"${REDACTED}"}`)
    // Not JSON after all: logged as the text it is, masked.
    expect(loggableJson(new RawJson('not json sk-abcdefghijklmnopqrstuvwx'))).toBe(`"not json ${REDACTED}"`)
  })
})
