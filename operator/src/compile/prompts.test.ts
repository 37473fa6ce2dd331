/**
 * The snapshot's prompts: gateways get each active prompt's published version and its labelled
 * versions (label names resolved), never the others, and each partial's published text; a change
 * to a prompt is announced on the change feed so gateways get a new snapshot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../admin/testing.ts'
import type { ChangeEvent } from '../store/index.ts'
import { compileSnapshot } from './snapshot.ts'

let h: Harness
let ws: string

beforeAll(async () => {
  h = await createHarness()
  ws = (await h.workspace('Compiled prompts')).id
  await h.call('POST', '/v1/providers', h.ownerKey, { name: 'Sim', slug: 'sim', provider: 'openai', key: 'sk-test-1234567890', workspace_id: ws })
})
afterAll(() => h.close())

describe('compiled prompts', () => {
  it('carry the published and labelled versions only, and the published partial text', async () => {
    const collection = (await h.call('POST', '/v1/collections', h.ownerKey, { name: 'C', workspace_id: ws })).json().id
    const created = (await h.call('POST', '/v1/prompts', h.ownerKey, { name: 'P', collection_id: collection, string: 'v1 {{x}}', parameters: { temperature: 0 }, virtual_key: 'sim', model: 'gpt-4o-mini' })).json()
    const v2 = (await h.call('PUT', `/v1/prompts/${created.id}`, h.ownerKey, { patch: true, string: 'v2 {{x}}' })).json().prompt_version_id
    await h.call('PUT', `/v1/prompts/${created.id}`, h.ownerKey, { patch: true, string: 'v3 {{x}}' })
    const staging = (await h.call('GET', '/v1/labels', h.ownerKey)).json().data.find((l: { name: string }) => l.name === 'staging').id
    await h.call('PUT', `/v1/prompts/${created.id}/versions/${v2}`, h.ownerKey, { label_id: staging })
    const partial = (await h.call('POST', '/v1/prompts/partials', h.ownerKey, { name: 'tone', string: 'old', workspace_id: ws })).json()
    await h.call('PUT', `/v1/prompts/partials/${partial.id}`, h.ownerKey, { string: 'new, not published' })

    const snapshot = await compileSnapshot(h.store, { generation: 1, clock: h.clock.read })
    const prompt = snapshot.prompts.find((p) => p.id === created.id)!
    expect(prompt).toMatchObject({ slug: created.slug, workspaceId: ws, virtualKey: 'sim', defaultVersionId: created.version_id })
    expect(prompt.versions.map((v) => [v.version, v.template, v.labels])).toEqual([[1, 'v1 {{x}}', []], [2, 'v2 {{x}}', ['staging']]])
    expect(prompt.versions[0]).toMatchObject({ model: 'gpt-4o-mini', parameters: { temperature: 0 } })
    expect(snapshot.promptPartials.filter((p) => p.workspaceId === ws)).toEqual([expect.objectContaining({ name: 'tone', version: 1, template: 'old' })])
  })

  it('announce prompt changes on the change feed', async () => {
    const events: ChangeEvent[] = []
    const stop = h.store.onChange((event) => events.push(event))
    try {
      const partial = (await h.call('POST', '/v1/prompts/partials', h.ownerKey, { name: 'announced', string: 'x', workspace_id: ws })).json()
      await h.call('PUT', `/v1/prompts/partials/${partial.id}/makeDefault`, h.ownerKey, { version: 1 })
      expect(events.filter((e) => e.resource === 'prompt' && e.id === partial.id).map((e) => e.action)).toEqual(['created', 'updated'])
    } finally {
      stop()
    }
  })
})
