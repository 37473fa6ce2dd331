/**
 * Organisation exemptions end to end: admin API (an organisation guardrail that denies, a workspace
 * exempted from the organisation's guardrails) -> compiled snapshot -> a real gateway, called
 * through the official OpenAI SDK with each workspace's key. The exempted workspace's request
 * passes; the other workspace's is refused with 446 before the provider is called; the exempted
 * workspace's own default guardrails still run.
 *
 * Break tried: `defaults()` in gateway/src/guardrails/compile.ts ignoring `excludedWorkspaceIds`
 * (the organisation's guardrails attached to every workspace) makes the exempted request a 446 and
 * this suite fail.
 */
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildGatewayServer, RuntimeHolder } from '@gatehouse/gateway'
import { createHarness, TEST_PEPPER, type Harness } from '../../operator/src/admin/testing.ts'
import { compileSnapshot } from '../../operator/src/compile/snapshot.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'

let h: Harness
let simulator: Simulator
let gateway: FastifyInstance
let baseURL: string
const holder = new RuntimeHolder()
let generation = 0
let exempt: { id: string; key: string }
let guarded: { id: string; key: string }
let ownGuardrailId: string

/** What the control plane would push: the store compiled into a snapshot, applied to the gateway. */
async function publish(): Promise<void> {
  const applied = holder.apply(await compileSnapshot(h.store, { generation: ++generation, clock: h.clock.read }))
  expect(applied.ok, JSON.stringify(applied)).toBe(true)
}

const ask = (client: OpenAI, content: string) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }).withResponse()
const clientFor = (key: string) => new OpenAI({ apiKey: key, baseURL, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@sim' } })

async function refusal(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(() => null, (e: unknown) => e)
  expect(error).toBeInstanceOf(OpenAI.APIError)
  return error as InstanceType<typeof OpenAI.APIError>
}

beforeAll(async () => {
  h = await createHarness()
  simulator = await startOpenAISimulator({ chunks: 2 })
  // The simulator listens on loopback: the organisation lets its providers reach private networks.
  expect((await h.call('PUT', '/v1/organisation/settings', h.ownerKey, { network_settings: { allow_private_networks: true } })).statusCode).toBe(200)
  await h.store.providers.upsert({ organizationId: h.orgId, workspaceId: null, slug: 'sim', name: 'Simulator', kind: 'openai', baseUrl: simulator.baseUrl, credentials: { apiKey: 'sk-simulator' } })
  const workspace = async (name: string) => {
    const id = (await h.workspace(name)).id
    return { id, key: await h.key('workspace/service', { name: `${name} app`, workspace_id: id, scopes: ['completions.write'] }) }
  }
  exempt = await workspace('Research')
  guarded = await workspace('Support')

  const guardrail = async (body: Record<string, unknown>, key = h.ownerKey) => {
    const response = await h.call('POST', '/v1/guardrails', key, body)
    expect(response.statusCode, response.body).toBe(200)
    return (response.json() as { id: string }).id
  }
  await guardrail({ name: 'No passwords', slug: 'no-passwords', checks: [{ id: 'default.contains', parameters: { words: ['password'], operator: 'none' } }], actions: { deny: true } })
  expect((await h.call('PUT', '/v1/organisation/guardrails', h.ownerKey, { input_guardrails: ['no-passwords'] })).statusCode).toBe(200)
  // The exempted workspace keeps a default guardrail of its own.
  ownGuardrailId = await guardrail({ name: 'No secrets', slug: 'no-secrets', workspace_id: exempt.id, checks: [{ id: 'default.contains', parameters: { words: ['secret'], operator: 'none' } }], actions: { deny: true } })
  expect((await h.call('PUT', `/v1/admin/workspaces/${exempt.id}`, h.ownerKey, { defaults: { input_guardrails: ['no-secrets'] } })).statusCode).toBe(200)

  gateway = buildGatewayServer({ holder, pepper: TEST_PEPPER })
  await gateway.listen({ host: '127.0.0.1', port: 0 })
  baseURL = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}/v1`
})

afterAll(async () => {
  await gateway?.close()
  await simulator?.close()
  await h?.close()
})

describe('organisation guardrail exclusions', () => {
  it('without exemptions, both workspaces meet the organisation guardrail', async () => {
    await publish()
    for (const { key } of [exempt, guarded]) {
      const error = await refusal(ask(clientFor(key), 'my password is hunter2'))
      expect(error.status).toBe(446)
      expect(error.code).toBe('guardrail_blocked')
    }
    expect(simulator.requests).toHaveLength(0)
  })

  it('an exempted workspace passes the organisation guardrail; another workspace is refused 446', async () => {
    const put = await h.call('PUT', '/v1/organisation/guardrails/exclusions', h.ownerKey, { workspaces: [exempt.id] })
    expect(put.statusCode, put.body).toBe(200)
    await publish()

    const { data, response } = await ask(clientFor(exempt.key), 'my password is hunter2')
    expect(response.status).toBe(200)
    expect(data.choices[0]!.message.content).toContain('password')
    // The exempted workspace's own default ran; the organisation's did not.
    expect((data as unknown as { hook_results: { before_request_hooks: Array<{ id: string }> } }).hook_results.before_request_hooks.map((r) => r.id)).toEqual([ownGuardrailId])
    expect(simulator.requests).toHaveLength(1)

    const error = await refusal(ask(clientFor(guarded.key), 'my password is hunter2'))
    expect(error.status).toBe(446)
    expect(error.code).toBe('guardrail_blocked')
    expect(simulator.requests).toHaveLength(1)
  })

  it("the exempted workspace's own default guardrails still deny", async () => {
    const error = await refusal(ask(clientFor(exempt.key), 'the secret is out'))
    expect(error.status).toBe(446)
    expect(error.message).toMatch(/blocked by guardrail/)
    expect(simulator.requests).toHaveLength(1)
  })

  it('removing the exemption puts the organisation guardrail back on the next snapshot', async () => {
    expect((await h.call('PUT', '/v1/organisation/guardrails/exclusions', h.ownerKey, { workspaces: [] })).statusCode).toBe(200)
    await publish()
    expect((await refusal(ask(clientFor(exempt.key), 'my password is hunter2'))).status).toBe(446)
  })
})
