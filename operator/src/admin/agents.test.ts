/**
 * Agent integrations and servers through the admin API, against a loopback agent publishing its
 * card: the card is fetched before registering (nothing stored), synced on create with its skills,
 * skills are switched per integration and per server, user access is kept per server, a workspace
 * key cannot let an agent reach private networks, and an agent whose card goes away is marked
 * failed while its last card is kept.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './testing.ts'

const CARD = {
  name: 'Travel agent',
  description: 'Books trips',
  version: '2.0.1',
  protocolVersion: '0.3.0',
  url: 'http://127.0.0.1/a2a',
  iconUrl: 'https://example.com/travel.png',
  capabilities: { streaming: true },
  skills: [
    { id: 'book_flight', name: 'Book a flight', description: 'Books flights', tags: ['travel'], examples: ['Fly me to Lisbon'] },
    { id: 'cancel', name: 'Cancel a booking' },
  ],
}

let harness: Harness
let agent: Server
let agentUrl: string
const cardRequests: Array<Record<string, string | string[] | undefined>> = []
let serving = true

beforeAll(async () => {
  harness = await createHarness()
  agent = createServer((request, response) => {
    cardRequests.push(request.headers)
    if (!serving || request.url !== '/.well-known/agent-card.json') {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(CARD))
  })
  await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve))
  agentUrl = `http://127.0.0.1:${(agent.address() as AddressInfo).port}`
})

afterAll(async () => {
  await harness?.close()
  await new Promise((resolve) => agent?.close(resolve))
})

describe('agent integrations and servers', () => {
  it('fetches a card before registering, through the SSRF check (loopback only when allowed)', async () => {
    const blocked = await harness.call('POST', '/v1/agent-integrations/fetch-agent-card', harness.ownerKey, { url: agentUrl })
    expect(blocked.json()).toMatchObject({ success: false, error: expect.stringContaining('could not be read') })
    expect(cardRequests).toHaveLength(0)
    const fetched = await harness.call('POST', '/v1/agent-integrations/fetch-agent-card', harness.ownerKey, { url: agentUrl, allow_private_network: true, headers: { 'x-agent-key': 'k1' } })
    expect(fetched.json()).toMatchObject({ success: true, agent_card: { name: 'Travel agent', skills: [{ id: 'book_flight' }, { id: 'cancel' }] } })
    expect(cardRequests.at(-1)).toMatchObject({ 'x-agent-key': 'k1' })
    expect((await harness.call('GET', '/v1/agent-integrations', harness.ownerKey)).json()).toMatchObject({ total: 0 })
  })

  it('refuses a workspace key letting an agent reach private networks', async () => {
    const workspace = await harness.workspace('Agents team')
    const key = await harness.key('workspace/service', { name: 'ws', workspace_id: workspace.id, scopes: ['workspace_agent_integrations.create'] })
    const refused = await harness.call('POST', '/v1/agent-integrations', key, { name: 'Mine', url: agentUrl, auth_type: 'none', configurations: { allow_private_network: true } })
    expect(refused.statusCode).toBe(403)
    expect((await harness.call('GET', '/v1/agent-integrations', harness.ownerKey)).json()).toMatchObject({ total: 0 })
  })

  it('syncs the card and its skills; switches skills per integration and per server; keeps user access', async () => {
    const created = await harness.call('POST', '/v1/agent-integrations', harness.ownerKey, {
      name: 'Travel', url: agentUrl, auth_type: 'headers', configurations: { custom_headers: { 'x-agent-key': 'sealed-agent-secret' }, allow_private_network: true },
    })
    expect(created.statusCode).toBe(200)
    const id = created.json<{ id: string }>().id
    const synced = await harness.call('POST', `/v1/agent-integrations/${id}/sync`, harness.ownerKey)
    expect(synced.json()).toMatchObject({ server_name: 'Travel agent', server_version: '2.0.1', description: 'Books trips', protocol_version: '0.3.0', icons: [{ src: CARD.iconUrl }], capability_flags: { streaming: true }, sync_status: 'success' })
    expect(cardRequests.at(-1)).toMatchObject({ 'x-agent-key': 'sealed-agent-secret' })
    const one = await harness.call('GET', `/v1/agent-integrations/${id}`, harness.ownerKey)
    expect(one.json()).toMatchObject({ object: 'agent-integration', configurations: { custom_headers: { 'x-agent-key': '********' } } })
    expect(one.body).not.toContain('sealed-agent-secret')

    const skills = await harness.call('GET', `/v1/agent-integrations/${id}/skills`, harness.ownerKey)
    expect(skills.json()).toMatchObject({ total: 2, data: [{ name: 'book_flight', type: 'skill', title: 'Book a flight', enabled: true, annotations: { tags: ['travel'] } }, { name: 'cancel', enabled: true }] })
    expect((await harness.call('PUT', `/v1/agent-integrations/${id}/skills`, harness.ownerKey, { capabilities: [{ name: 'cancel', type: 'skill', enabled: false }] })).json()).toEqual({ success: true })

    const workspace = await harness.workspace('Travel desk')
    const server = await harness.call('POST', '/v1/agent-servers', harness.ownerKey, { name: 'Travel', agent_integration_id: id, workspace_id: workspace.id })
    expect(server.statusCode).toBe(200)
    const serverId = server.json<{ id: string }>().id
    const listed = await harness.call('GET', `/v1/agent-servers?workspace_id=${workspace.id}`, harness.ownerKey)
    expect(listed.json()).toMatchObject({ total: 1, data: [{ id: serverId, agent_integration_id: id, object: 'agent-server', url: '/v1/agents/travel', server_name: 'Travel agent' }] })
    const serverSkills = await harness.call('GET', `/v1/agent-servers/${serverId}/skills`, harness.ownerKey)
    expect(serverSkills.json()).toMatchObject({ data: [{ name: 'book_flight', enabled: true, integration_enabled: true }, { name: 'cancel', enabled: false, integration_enabled: false }] })
    await harness.call('PUT', `/v1/agent-servers/${serverId}/skills`, harness.ownerKey, { capabilities: [{ name: 'book_flight', type: 'skill', enabled: false }] })
    expect((await harness.call('GET', `/v1/agent-servers/${serverId}/skills`, harness.ownerKey)).json()).toMatchObject({ data: [{ name: 'book_flight', enabled: false, integration_enabled: true }, { name: 'cancel', enabled: false }] })

    const access = await harness.call('PUT', `/v1/agent-servers/${serverId}/user-access`, harness.ownerKey, { default_user_access: 'deny', user_access: [{ user_id: harness.ownerId, enabled: true }] })
    expect(access.json()).toEqual({ success: true })
    expect((await harness.call('GET', `/v1/agent-servers/${serverId}/user-access`, harness.ownerKey)).json()).toMatchObject({ default_user_access: 'deny', data: [{ user_id: harness.ownerId, enabled: true, has_override: true }] })
    const bad = await harness.call('PUT', `/v1/agent-servers/${serverId}/user-access`, harness.ownerKey, { default_user_access: 'maybe' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({ error: { param: 'default_user_access' } })
  })

  it('marks the sync failed when the card goes away, keeping the last card and skills', async () => {
    serving = false
    const id = (await harness.call('GET', '/v1/agent-integrations', harness.ownerKey)).json<{ data: Array<{ id: string }> }>().data[0]!.id
    const failed = await harness.call('POST', `/v1/agent-integrations/${id}/sync`, harness.ownerKey)
    expect(failed.json()).toMatchObject({ sync_status: 'failed', sync_error: 'the agent card answered HTTP 404', server_name: 'Travel agent' })
    expect((await harness.call('GET', `/v1/agent-integrations/${id}/skills`, harness.ownerKey)).json()).toMatchObject({ total: 2 })
    serving = true
  })
})
