/** The spec's `virtual_keys.*` scopes grant the same provider rights as `providers.*`, on both paths. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './testing.ts'

let h: Harness
let ws: string

beforeAll(async () => {
  h = await createHarness()
  ws = (await h.workspace('VK scopes')).id
})
afterAll(() => h.close())

describe('virtual_keys scopes', () => {
  it('lets a key holding only virtual_keys.create and virtual_keys.update create and update providers', async () => {
    const key = await h.key('workspace/service', { name: 'vk', workspace_id: ws, scopes: ['virtual_keys.create', 'virtual_keys.update'] })
    const created = await h.call('POST', '/v1/virtual-keys', key, { name: 'Legacy VK', provider: 'openai', key: 'sk-vk-1234567890' })
    expect(created.statusCode, created.body).toBe(200)
    const viaProviders = await h.call('POST', '/v1/providers', key, { name: 'New name', provider: 'openai', key: 'sk-vk-0987654321' })
    expect(viaProviders.statusCode, viaProviders.body).toBe(200)
    expect((await h.call('PUT', '/v1/virtual-keys/legacy-vk', key, { name: 'Renamed' })).statusCode).toBe(200)
    expect((await h.store.providers.getBySlug(h.orgId, ws, 'legacy-vk'))!.name).toBe('Renamed')
    // Only what was granted: no delete, no read.
    expect((await h.call('DELETE', '/v1/virtual-keys/legacy-vk', key)).statusCode).toBe(403)
    expect((await h.call('GET', '/v1/providers/legacy-vk', key)).statusCode).toBe(403)
  })

  it('still refuses a key with neither family', async () => {
    const key = await h.key('workspace/service', { name: 'none', workspace_id: ws, scopes: ['configs.create'] })
    expect((await h.call('POST', '/v1/virtual-keys', key, { name: 'No', provider: 'openai', key: 'sk-no-1234567890' })).statusCode).toBe(403)
    expect((await h.call('PUT', '/v1/providers/legacy-vk', key, { name: 'No' })).statusCode).toBe(403)
  })
})
