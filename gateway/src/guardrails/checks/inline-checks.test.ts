/**
 * Every inline check with its parameters: a passing case, a failing case, and the defaults the
 * spec gives (or the catalogue's) when a parameter is left out.
 */
import { describe, expect, it } from 'vitest'
import { compileCheck, input, parametersOf, runCheck } from './testing.ts'

const verdict = async (id: string, parameters: Record<string, unknown>, overrides: Parameters<typeof runCheck>[2]) => (await runCheck(id, parameters, overrides)).verdict

describe('default.requiredMetadataKeyPairs', () => {
  const id = 'default.requiredMetadataKeyPairs'
  const metadataPairs = { team: 'search', env: 'prod' }
  it('defaults operator to all', () => {
    expect(parametersOf(id, { metadataPairs })).toEqual({ metadataPairs, operator: 'all' })
    expect(parametersOf(id, { metadataPairs: {} })).toMatch(/metadataPairs/)
  })
  it('all: every pair must be present with its value', async () => {
    expect(await verdict(id, { metadataPairs }, { metadata: { team: 'search', env: 'prod', x: '1' } })).toBe(true)
    expect(await verdict(id, { metadataPairs }, { metadata: { team: 'search', env: 'dev' } })).toBe(false)
  })
  it('any: one pair is enough', async () => {
    expect(await verdict(id, { metadataPairs, operator: 'any' }, { metadata: { env: 'prod' } })).toBe(true)
    expect(await verdict(id, { metadataPairs, operator: 'any' }, { metadata: { env: 'dev' } })).toBe(false)
  })
  it('none: no pair may be present', async () => {
    expect(await verdict(id, { metadataPairs, operator: 'none' }, { metadata: { team: 'ads' } })).toBe(true)
    expect(await verdict(id, { metadataPairs, operator: 'none' }, { metadata: { team: 'search' } })).toBe(false)
  })
})

describe('default.requiredMetadataKeys', () => {
  const id = 'default.requiredMetadataKeys'
  it('all (default), any, none', async () => {
    expect(parametersOf(id, { metadataKeys: ['a'] })).toEqual({ metadataKeys: ['a'], operator: 'all' })
    expect(await verdict(id, { metadataKeys: ['a', 'b'] }, { metadata: { a: 1, b: 2 } })).toBe(true)
    expect(await verdict(id, { metadataKeys: ['a', 'b'] }, { metadata: { a: 1 } })).toBe(false)
    expect(await verdict(id, { metadataKeys: ['a', 'b'], operator: 'any' }, { metadata: { a: 1 } })).toBe(true)
    expect(await verdict(id, { metadataKeys: ['a', 'b'], operator: 'none' }, { metadata: { a: 1 } })).toBe(false)
  })
})

describe('default.regexMatch', () => {
  const id = 'default.regexMatch'
  it('matches, and with not must not match; not defaults to false', async () => {
    expect(parametersOf(id, { rule: '\\d{3}' })).toEqual({ rule: '\\d{3}', not: false })
    expect(await verdict(id, { rule: '\\d{3}-\\d{4}' }, { text: 'call 555-1234' })).toBe(true)
    expect(await verdict(id, { rule: '\\d{3}-\\d{4}' }, { text: 'no number' })).toBe(false)
    expect(await verdict(id, { rule: '\\d{3}-\\d{4}', not: true }, { text: 'call 555-1234' })).toBe(false)
    expect(await verdict(id, { rule: '\\d{3}-\\d{4}', not: true }, { text: 'no number' })).toBe(true)
  })
  it('refuses what RE2 cannot run in linear time, and invalid rules', () => {
    expect(parametersOf(id, { rule: '(x)\\1' })).toMatch(/not a valid RE2 regular expression/)
    expect(parametersOf(id, { rule: '(?=x)y' })).toMatch(/not a valid RE2 regular expression/)
    expect(parametersOf(id, { rule: '[' })).toMatch(/not a valid RE2 regular expression/)
  })
  it('stays linear on adversarial patterns and text (a backtracking engine takes seconds here)', () => {
    for (const rule of ['a+b', '(a+)+$', '(a|aa)*b']) {
      const check = compileCheck(id, { rule })
      const started = performance.now()
      const outcome = check.run(input({ text: 'a'.repeat(50_000) + '!' }))
      expect(performance.now() - started, rule).toBeLessThan(500)
      expect(outcome, rule).toMatchObject({ verdict: false })
    }
    const check = compileCheck(id, { rule: 'a+b' })
    expect(check.failsEarly).toBe(false)
    expect(compileCheck(id, { rule: 'x', not: true }).failsEarly).toBe(true)
  })
})

describe('default.contains', () => {
  const id = 'default.contains'
  const words = ['apple', 'Banana']
  it('any (default), all, none; case-insensitive', async () => {
    expect(parametersOf(id, { words })).toEqual({ words, operator: 'any' })
    expect(await verdict(id, { words }, { text: 'an APPLE a day' })).toBe(true)
    expect(await verdict(id, { words }, { text: 'a pear' })).toBe(false)
    expect(await verdict(id, { words, operator: 'all' }, { text: 'apple and banana' })).toBe(true)
    expect(await verdict(id, { words, operator: 'all' }, { text: 'apple only' })).toBe(false)
    expect(await verdict(id, { words, operator: 'none' }, { text: 'a pear' })).toBe(true)
    expect(await verdict(id, { words, operator: 'none' }, { text: 'banana split' })).toBe(false)
    expect(compileCheck(id, { words, operator: 'none' }).failsEarly).toBe(true)
    expect(compileCheck(id, { words, operator: 'all' }).failsEarly).toBe(false)
  })
})

describe('counts', () => {
  it('default.wordCount with min/max/not and defaults 0..99999', async () => {
    expect(parametersOf('default.wordCount', {})).toEqual({ minWords: 0, maxWords: 99_999, not: false })
    expect(await verdict('default.wordCount', { minWords: 2, maxWords: 3 }, { text: 'one two three' })).toBe(true)
    expect(await verdict('default.wordCount', { minWords: 2, maxWords: 3 }, { text: 'one two three four' })).toBe(false)
    expect(await verdict('default.wordCount', { minWords: 2, maxWords: 3 }, { text: '  ' })).toBe(false)
    expect(await verdict('default.wordCount', { minWords: 2, maxWords: 3, not: true }, { text: 'one' })).toBe(true)
  })
  it('default.sentenceCount with defaults 0..99999', async () => {
    expect(parametersOf('default.sentenceCount', {})).toEqual({ minSentences: 0, maxSentences: 99_999, not: false })
    expect(await verdict('default.sentenceCount', { maxSentences: 2 }, { text: 'One. Two!' })).toBe(true)
    expect(await verdict('default.sentenceCount', { maxSentences: 2 }, { text: 'One. Two! Three?' })).toBe(false)
    expect(await verdict('default.sentenceCount', { minSentences: 1 }, { text: 'no end' })).toBe(false)
    expect(await verdict('default.sentenceCount', { minSentences: 2, maxSentences: 2 }, { text: 'Wait... what?! ' })).toBe(true)
    const started = performance.now()
    expect(await verdict('default.sentenceCount', { minSentences: 1 }, { text: 'word '.repeat(200_000) })).toBe(false)
    expect(performance.now() - started).toBeLessThan(500)
  })
  it('default.characterCount counts code points; defaults 0..9999999', async () => {
    expect(parametersOf('default.characterCount', {})).toEqual({ minCharacters: 0, maxCharacters: 9_999_999, not: false })
    expect(await verdict('default.characterCount', { maxCharacters: 2 }, { text: '😀😀' })).toBe(true)
    expect(await verdict('default.characterCount', { maxCharacters: 2 }, { text: 'abc' })).toBe(false)
    expect(await verdict('default.characterCount', { minCharacters: 4 }, { text: 'abc' })).toBe(false)
    // A failure on a prefix is final only for a maximum.
    expect(compileCheck('default.characterCount', { maxCharacters: 5 }).failsEarly).toBe(true)
    expect(compileCheck('default.characterCount', { minCharacters: 5 }).failsEarly).toBe(false)
  })
})

describe('JSON output', () => {
  const schema = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }
  it('default.jsonSchema reads JSON from the text, a fence, or braces; not defaults to false', async () => {
    expect(parametersOf('default.jsonSchema', { schema })).toEqual({ schema, not: false })
    expect(parametersOf('default.jsonSchema', { schema: { type: 'nonsense' } })).toMatch(/not a valid JSON schema/)
    expect(await verdict('default.jsonSchema', { schema }, { text: '{"name":"x"}' })).toBe(true)
    expect(await verdict('default.jsonSchema', { schema }, { text: 'Here:\n```json\n{"name":"x"}\n```' })).toBe(true)
    expect(await verdict('default.jsonSchema', { schema }, { text: 'Sure! {"name": "x"} done' })).toBe(true)
    expect(await verdict('default.jsonSchema', { schema }, { text: '{"name":1}' })).toBe(false)
    expect(await verdict('default.jsonSchema', { schema }, { text: 'no json' })).toBe(false)
    expect(await verdict('default.jsonSchema', { schema, not: true }, { text: '{"name":1}' })).toBe(true)
  })
  it('default.jsonKeys with all (default), any, none', async () => {
    expect(parametersOf('default.jsonKeys', { keys: ['a'] })).toEqual({ keys: ['a'], operator: 'all' })
    expect(await verdict('default.jsonKeys', { keys: ['a', 'b'] }, { text: '{"a":1,"b":2}' })).toBe(true)
    expect(await verdict('default.jsonKeys', { keys: ['a', 'b'] }, { text: '{"a":1}' })).toBe(false)
    expect(await verdict('default.jsonKeys', { keys: ['a', 'b'], operator: 'any' }, { text: '{"a":1}' })).toBe(true)
    expect(await verdict('default.jsonKeys', { keys: ['a', 'b'], operator: 'none' }, { text: '{"a":1}' })).toBe(false)
    expect(await verdict('default.jsonKeys', { keys: ['a'] }, { text: '[1,2]' })).toBe(false)
  })
})

describe('default.validUrls', () => {
  it('every URL well formed; no URL passes; not flips', async () => {
    expect(parametersOf('default.validUrls', {})).toEqual({ onlyDNS: false, not: false, timeoutMs: 3000 })
    expect(await verdict('default.validUrls', {}, { text: 'see https://example.com/a.' })).toBe(true)
    expect(await verdict('default.validUrls', {}, { text: 'no links' })).toBe(true)
    expect(await verdict('default.validUrls', {}, { text: 'see http://nodot and https://example.com' })).toBe(false)
    expect(await verdict('default.validUrls', { not: true }, { text: 'see http://nodot' })).toBe(true)
  })
  it('onlyDNS resolves hosts (localhost resolves; .invalid never does)', async () => {
    expect(await verdict('default.validUrls', { onlyDNS: true }, { text: 'http://localhost/x' })).toBe(true)
    expect(await verdict('default.validUrls', { onlyDNS: true }, { text: 'http://host.invalid/x' })).toBe(false)
  })
})

describe('default.modelWhitelist', () => {
  it('allows the listed models, @slug/model included; not flips', async () => {
    expect(parametersOf('default.modelWhitelist', { models: ['gpt-4o'] })).toEqual({ models: ['gpt-4o'], not: false })
    expect(await verdict('default.modelWhitelist', { models: ['gpt-4o'] }, { model: 'gpt-4o' })).toBe(true)
    expect(await verdict('default.modelWhitelist', { models: ['gpt-4o'] }, { model: '@openai/gpt-4o' })).toBe(true)
    expect(await verdict('default.modelWhitelist', { models: ['gpt-4o'] }, { model: 'gpt-3.5' })).toBe(false)
    expect(await verdict('default.modelWhitelist', { models: ['gpt-4o'] }, { model: null })).toBe(false)
    expect(await verdict('default.modelWhitelist', { models: ['gpt-4o'], not: true }, { model: 'gpt-3.5' })).toBe(true)
  })
})

describe('default.allowedRequestTypes', () => {
  it('allowlist or blocklist of request types, exactly one of them', async () => {
    expect(parametersOf('default.allowedRequestTypes', {})).toMatch(/one of them/)
    expect(parametersOf('default.allowedRequestTypes', { allowedTypes: ['embed'], blockedTypes: ['embed'] })).toMatch(/one of them/)
    expect(await verdict('default.allowedRequestTypes', { allowedTypes: ['chatComplete'] }, { endpointType: 'chatComplete' })).toBe(true)
    expect(await verdict('default.allowedRequestTypes', { allowedTypes: ['chatComplete'] }, { endpointType: 'messages' })).toBe(false)
    expect(await verdict('default.allowedRequestTypes', { blockedTypes: ['complete'] }, { endpointType: 'complete' })).toBe(false)
    expect(await verdict('default.allowedRequestTypes', { blockedTypes: ['complete'] }, { endpointType: 'chatComplete' })).toBe(true)
    expect(await verdict('default.allowedRequestTypes', { allowedTypes: ['createModelResponse'] }, { endpointType: 'responses' })).toBe(true)
  })
})

describe('default.requestParamsCheck', () => {
  const id = 'default.requestParamsCheck'
  const tool = (type: string, name: string) => ({ type, function: { name } })
  it('needs tools or params', () => {
    expect(parametersOf(id, {})).toMatch(/give tools or params/)
  })
  it('tools: blocked and allowed types and function names', async () => {
    const body = { model: 'm', messages: [], tools: [tool('function', 'search'), tool('function', 'delete_all')] }
    expect(await verdict(id, { tools: { blockedFunctionNames: ['delete_all'] } }, { body })).toBe(false)
    expect(await verdict(id, { tools: { allowedFunctionNames: ['search', 'delete_all'] } }, { body })).toBe(true)
    expect(await verdict(id, { tools: { allowedFunctionNames: ['search'] } }, { body })).toBe(false)
    expect(await verdict(id, { tools: { blockedTypes: ['web_search'] } }, { body })).toBe(true)
    expect(await verdict(id, { tools: { allowedTypes: ['web_search'] } }, { body })).toBe(false)
  })
  it('params: blocked and allowed keys, per-key blocked and allowed values', async () => {
    const body = { model: 'm', messages: [], temperature: 1.5, logit_bias: {} }
    expect(await verdict(id, { params: { blockedKeys: ['logit_bias'] } }, { body })).toBe(false)
    expect(await verdict(id, { params: { allowedKeys: ['temperature'] } }, { body })).toBe(false)
    expect(await verdict(id, { params: { allowedKeys: ['temperature', 'logit_bias'] } }, { body })).toBe(true)
    expect(await verdict(id, { params: { values: { temperature: { allowedValues: [0, 1] } } } }, { body })).toBe(false)
    expect(await verdict(id, { params: { values: { temperature: { blockedValues: [2] } } } }, { body })).toBe(true)
    expect(await verdict(id, { params: { values: { temperature: { blockedValues: [1.5] } } } }, { body })).toBe(false)
  })
})

describe('default.addPrefix', () => {
  const id = 'default.addPrefix'
  const before = { hook: 'beforeRequestHook' as const }
  it('defaults to the user role, adding to what exists', () => {
    expect(parametersOf(id, { prefix: 'Be brief. ' })).toEqual({ prefix: 'Be brief. ', applyToRole: 'user', addToExisting: true })
  })
  it('prefixes the last user message, the prompt, or the system prompt (chat and Anthropic)', async () => {
    const chat = { messages: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'a' }, { role: 'user', content: [{ type: 'text', text: 'second' }] }] }
    const user = await runCheck(id, { prefix: 'P: ' }, { ...before, body: chat })
    expect(user.verdict).toBe(true)
    expect((user.body!.messages as Array<{ content: unknown }>)[2]!.content).toEqual([{ type: 'text', text: 'P: second' }])
    expect((user.body!.messages as Array<{ content: unknown }>)[0]!.content).toBe('first')
    expect((await runCheck(id, { prefix: 'P: ' }, { ...before, body: { prompt: 'hi' }, endpointType: 'complete' })).body).toEqual({ prompt: 'P: hi' })
    const system = await runCheck(id, { prefix: 'S. ', applyToRole: 'system' }, { ...before, body: { messages: [{ role: 'system', content: 'rules' }, { role: 'user', content: 'q' }] } })
    expect((system.body!.messages as Array<{ content: unknown }>)[0]!.content).toBe('S. rules')
    const separate = await runCheck(id, { prefix: 'S.', applyToRole: 'system', addToExisting: false }, { ...before, body: { messages: [{ role: 'system', content: 'rules' }] } })
    expect(separate.body!.messages).toEqual([{ role: 'system', content: 'S.' }, { role: 'system', content: 'rules' }])
    const anthropic = await runCheck(id, { prefix: 'S. ', applyToRole: 'system' }, { ...before, endpointType: 'messages', body: { system: 'rules', messages: [] } })
    expect(anthropic.body!.system).toBe('S. rules')
  })
  it('changes nothing on the answer', async () => {
    expect((await runCheck(id, { prefix: 'P' }, { body: { prompt: 'x' } })).body).toBeUndefined()
  })
})

describe('case and suffix', () => {
  it('default.isAllLowerCase, default.alluppercase, default.endsWith', async () => {
    expect(await verdict('default.isAllLowerCase', {}, { text: 'quiet' })).toBe(true)
    expect(await verdict('default.isAllLowerCase', {}, { text: 'Loud' })).toBe(false)
    expect(await verdict('default.alluppercase', {}, { text: 'LOUD' })).toBe(true)
    expect(await verdict('default.alluppercase', { not: true }, { text: 'LOUD' })).toBe(false)
    expect(await verdict('default.endsWith', { suffix: 'Thanks.' }, { text: 'Done. Thanks.\n' })).toBe(true)
    expect(await verdict('default.endsWith', { suffix: 'Thanks.' }, { text: 'Done.' })).toBe(false)
  })
})
