import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { rawIntegerText } from '../core/exact-integer.ts'
import { jsonDepthExceeds, MAX_JSON_DEPTH, parseJsonBody, registerJsonBodyParser, scanJsonText } from './json-body.ts'
import { renderError } from './error-handler.ts'
import { checkNumber, optionalSeed } from '../validation/checks.ts'

describe('jsonDepthExceeds', () => {
  it('counts nesting without recursion, ignoring brackets inside strings', () => {
    expect(jsonDepthExceeds('[[[]]]', 3)).toBe(false)
    expect(jsonDepthExceeds('[[[[]]]]', 3)).toBe(true)
    expect(jsonDepthExceeds('{"a":"[[[[[[\\"[[[["}', 1)).toBe(false)
    expect(jsonDepthExceeds('{"a\\\\":[[[1]]]}', 3)).toBe(true)
    expect(jsonDepthExceeds('['.repeat(1_000_000), MAX_JSON_DEPTH)).toBe(true)
  })
})

describe('scanJsonText', () => {
  it('finds runs of 16+ digits in numbers only, not in strings, in the same scan as the depth', () => {
    expect(scanJsonText('{"seed":9223372036854775807}', 8)).toEqual({ tooDeep: false, longDigitRun: true })
    expect(scanJsonText('[-1234567890123456]', 8).longDigitRun).toBe(true)
    expect(scanJsonText('[1e1234567890123456]', 8).longDigitRun).toBe(true)
    expect(scanJsonText('[123456789012345, 1.5]', 8).longDigitRun).toBe(false)
    expect(scanJsonText('{"s":"12345678901234567890","k\\":"1"}', 8).longDigitRun).toBe(false)
    expect(scanJsonText('{"1234567890123456789":1}', 8).longDigitRun).toBe(false)
    expect(scanJsonText('[[[1234567890123456789]]]', 2)).toEqual({ tooDeep: true, longDigitRun: false })
  })
})

describe('parseJsonBody', () => {
  it('refuses a body nested deeper than the limit with a 400, however deep', () => {
    for (const depth of [MAX_JSON_DEPTH + 1, 100_000]) {
      const text = `{"messages":${'['.repeat(depth)}${']'.repeat(depth)}}`
      expect(() => parseJsonBody(text)).toThrow(expect.objectContaining({ code: 'invalid_json', status: 400 }))
    }
    expect(parseJsonBody(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)).toBeInstanceOf(Array)
  })

  it('keeps integers beyond a double exactly, and only those', () => {
    const body = parseJsonBody('{"seed":9223372036854775807,"small":12,"safe":9007199254740991,"float":1.5,"s":"12345678901234567890"}') as Record<string, unknown>
    expect(rawIntegerText(body.seed)).toBe('9223372036854775807')
    expect(body.small).toBe(12)
    expect(body.safe).toBe(9007199254740991)
    expect(body.float).toBe(1.5)
    expect(body.s).toBe('12345678901234567890')
    expect(JSON.stringify(body)).toBe('{"seed":9223372036854775807,"small":12,"safe":9007199254740991,"float":1.5,"s":"12345678901234567890"}')
  })

  it('refuses prototype poisoning as fastify does', () => {
    expect(() => parseJsonBody('{"__proto__":{"admin":true}}')).toThrow(expect.objectContaining({ code: 'invalid_json' }))
  })

  it('validation takes raw integers where an integer is expected, with exact bounds', () => {
    const body = parseJsonBody('{"seed":9223372036854775807,"big":9223372036854775808,"n":12345678901234567890}') as Record<string, unknown>
    expect(() => optionalSeed({ seed: body.seed })).not.toThrow()
    expect(() => optionalSeed({ seed: body.big })).toThrow(expect.objectContaining({ param: 'seed' }))
    expect(() => checkNumber(body.n, 'n', { integer: true, min: 1, max: 128 })).toThrow(expect.objectContaining({ param: 'n' }))
    expect(() => checkNumber(body.n, 'max_tokens', { integer: true, min: 1 })).not.toThrow()
  })
})

describe('registerJsonBodyParser', () => {
  it('answers 400 in the error envelope for a deep body, before the handler runs', async () => {
    const app = Fastify()
    registerJsonBodyParser(app)
    app.setErrorHandler((error, request, reply) => renderError(error, request, reply))
    let handled = 0
    app.post('/', async () => ++handled)
    const response = await app.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, payload: '['.repeat(100_000) + ']'.repeat(100_000) })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ error: { code: 'invalid_json', type: 'invalid_request_error' } })
    expect(handled).toBe(0)
    await app.close()
  })
})
