/**
 * `azure_entra_scope` in an integration's configurations reaches the Azure signer: admin API ->
 * compiled snapshot -> a real gateway, which asks a loopback Entra token endpoint for that scope
 * and calls the Azure simulator with the token it got.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildGatewayServer, RuntimeHolder } from '@gatehouse/gateway'
import { createHarness, TEST_PEPPER, type Harness } from '../../operator/src/admin/testing.ts'
import { compileSnapshot } from '../../operator/src/compile/snapshot.ts'
import { startAzureSimulator } from '../simulators/azure.ts'
import type { Simulator } from '../simulators/index.ts'

let h: Harness
let simulator: Simulator
let entra: Server
let gateway: FastifyInstance
const tokenRequests: URLSearchParams[] = []

beforeAll(async () => {
  h = await createHarness()
  // Only the token the Entra endpoint below issues is accepted.
  simulator = await startAzureSimulator({ chunks: 2, apiKeys: ['entra-token-1'] })
  entra = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => (body += chunk.toString()))
    request.on('end', () => {
      tokenRequests.push(new URLSearchParams(body))
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token_type: 'Bearer', expires_in: 3599, access_token: 'entra-token-1' }))
    })
  })
  await new Promise<void>((resolve) => entra.listen(0, '127.0.0.1', resolve))
})
afterAll(async () => {
  await gateway?.close()
  await new Promise((resolve) => entra.close(resolve))
  await simulator?.close()
  await h?.close()
})

describe('azure_entra_scope', () => {
  it('is the scope of the client-credentials token the gateway fetches for the provider', async () => {
    // The simulators listen on loopback: an organisation owner lets its providers reach private networks.
    expect((await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { network_settings: { allow_private_networks: true } })).statusCode).toBe(200)
    const ws = (await h.workspace('Azure')).id
    const integration = await h.call('POST', '/v1/integrations', h.ownerKey, {
      name: 'Azure', slug: 'azure', ai_provider_id: 'azure-openai', base_url: simulator.url, create_default_provider: false,
      configurations: {
        azure_auth_mode: 'entra', azure_resource_name: 'demo', azure_entra_tenant_id: 'tenant-1', azure_entra_client_id: 'client-1',
        azure_entra_client_secret: 'entra-secret', azure_entra_scope: 'api://gatehouse-test/.default',
        authorityHost: `http://127.0.0.1:${(entra.address() as AddressInfo).port}`,
      },
    })
    expect(integration.statusCode, integration.body).toBe(200)
    expect((await h.call('POST', '/v1/providers', h.ownerKey, { name: 'Azure', slug: 'az', integration_id: 'azure', workspace_id: ws })).statusCode).toBe(200)
    const key = await h.key('workspace/service', { name: 'app', workspace_id: ws, scopes: ['completions.write'] })

    const snapshot = await compileSnapshot(h.store, { generation: 1, clock: h.clock.read })
    expect(snapshot.providers.find((p) => p.slug === 'az')?.options).toMatchObject({ entraScope: 'api://gatehouse-test/.default' })
    const holder = new RuntimeHolder()
    const applied = holder.apply(snapshot)
    expect(applied.ok, JSON.stringify(applied)).toBe(true)
    gateway = buildGatewayServer({ holder, pepper: TEST_PEPPER })
    await gateway.listen({ host: '127.0.0.1', port: 0 })

    const response = await fetch(`http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: '@az/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(response.status, await response.clone().text()).toBe(200)
    expect(tokenRequests).toHaveLength(1)
    expect(Object.fromEntries(tokenRequests[0]!)).toMatchObject({ grant_type: 'client_credentials', client_id: 'client-1', scope: 'api://gatehouse-test/.default' })
    expect(simulator.requests.at(-1)?.headers.authorization).toBe('Bearer entra-token-1')
  })
})
