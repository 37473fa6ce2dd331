/** NUL characters and unpaired surrogates anywhere in an admin request: 400 naming the field, nothing stored. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findUnstorableText } from './storable-text.ts'
import { createHarness, type Harness } from './testing.ts'

let h: Harness

beforeAll(async () => {
  h = await createHarness()
})
afterAll(() => h.close())

async function raw(method: 'POST' | 'PUT' | 'GET', url: string, json?: string) {
  return h.app.inject({ method, url, headers: { 'x-gateway-api-key': h.ownerKey, ...(json ? { 'content-type': 'application/json' } : {}) }, ...(json ? { payload: json } : {}) })
}

describe('text PostgreSQL cannot store', () => {
  it('answers 400 AB01 naming the field for NUL or a lone surrogate in the body, query or path', async () => {
    const before = (await h.store.workspaces.list(h.orgId, {}, 0, 100)).total
    const ws = await h.workspace('Text checks')
    const cases: Array<[Promise<{ statusCode: number; json: () => { error: { code: string; param: string } } }>, string]> = [
      [raw('POST', '/v1/admin/workspaces', '{"name":"bad\\u0000name"}'), 'name'],
      [raw('POST', '/v1/admin/workspaces', '{"name":"lone \\ud800 high"}'), 'name'],
      [raw('POST', '/v1/admin/workspaces', '{"name":"lone \\udc00 low"}'), 'name'],
      [raw('POST', '/v1/admin/workspaces', '{"name":"ok","defaults":{"metadata":{"team":"x\\u0000"}}}'), 'defaults.metadata.team'],
      [raw('POST', '/v1/admin/workspaces', '{"name":"ok","defaults":{"metadata":{"k\\u0000":"v"}}}'), 'defaults.metadata.k\\u0000'],
      [raw('POST', '/v1/providers', '{"name":"p","provider":"openai","key":"sk-123456789","tags":[{"key":"a","value":"\\ud83d"}]}'), 'tags[0].value'],
      [raw('PUT', `/v1/admin/workspaces/${ws.id}`, '{"description":"\\u0000"}'), 'description'],
      [raw('GET', '/v1/admin/workspaces?name=%00'), 'name'],
      [raw('GET', '/v1/admin/workspaces/%00'), 'workspaceId'],
    ]
    for (const [pending, param] of cases) {
      const response = await pending
      expect(response.statusCode, param).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'AB01', param })
    }
    expect((await h.store.workspaces.list(h.orgId, {}, 0, 100)).total).toBe(before + 1)
    expect((await h.store.workspaces.get(h.orgId, ws.id))!.description).toBeNull()
  })

  it('still stores well-formed text outside the Basic Multilingual Plane', async () => {
    const response = await h.call('POST', '/v1/admin/workspaces', h.ownerKey, { name: 'Emoji 😀 ok' })
    expect(response.statusCode).toBe(200)
    expect(response.json().name).toBe('Emoji 😀 ok')
  })

  it('finds the first unstorable value or key and its path', () => {
    expect(findUnstorableText({ a: [1, 'x', { b: '\u0000' }] })).toEqual(['a', 2, 'b'])
    expect(findUnstorableText(['\ud800'])).toEqual([0])
    expect(findUnstorableText({ ok: '😀', n: 1, nil: null })).toBeNull()
  })
})
