/** Tag keys that are JavaScript prototype names: refused in filters and in stored tags, never silently dropped. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './testing.ts'

let h: Harness

beforeAll(async () => {
  h = await createHarness()
  await h.call('POST', '/v1/providers', h.ownerKey, { name: 'Tagged', provider: 'openai', key: 'sk-tag-1234567890', tags: { team: 'search' } })
})
afterAll(() => h.close())

describe('prototype keys in tags', () => {
  it('refuses them in list filters with 400 naming the filter', async () => {
    const queries: Array<[string, string]> = [
      ['tags[__proto__]=x', 'tags[__proto__]'],
      ['tags[constructor]=x', 'tags[constructor]'],
      [`tags=${encodeURIComponent('{"__proto__":"x"}')}`, 'tags'],
      [`tags=${encodeURIComponent('{"team":"search","prototype":"x"}')}`, 'tags'],
    ]
    for (const [query, param] of queries) {
      for (const path of ['/v1/providers', '/v1/integrations']) {
        const response = await h.call('GET', `${path}?${query}`, h.ownerKey)
        expect(response.statusCode, `${path}?${query}`).toBe(400)
        expect(response.json().error).toMatchObject({ code: 'AB01', param })
      }
    }
  })

  it('still filters by ordinary keys', async () => {
    const slugs = async (query: string) => (await h.call('GET', `/v1/providers?${query}`, h.ownerKey)).json().data.map((p: { slug: string }) => p.slug)
    expect(await slugs('tags[team]=search')).toEqual(['tagged'])
    expect(await slugs('tags[team]=ads')).toEqual([])
  })

  it('refuses them as stored tag keys', async () => {
    const response = await h.call('POST', '/v1/providers', h.ownerKey, { name: 'Bad tags', provider: 'openai', key: 'sk-tag-1234567890', tags: { constructor: 'x' } })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({ code: 'AB01', param: 'tags.constructor' })
  })
})
