/**
 * A gateway deployment's config applies when neither the request, the key nor the workspace names
 * one; a snapshot naming a deployment config it does not carry is refused whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'

let simulator: Simulator
let gateway: TestGateway

beforeAll(async () => {
  simulator = await startOpenAISimulator({ chunks: 2 })
  gateway = await startTestGateway([{ slug: 'sim', kind: 'openai', baseUrl: simulator.baseUrl }])
})
afterAll(async () => {
  await gateway?.close()
  await simulator?.close()
})

const chat = (headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${gateway.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  })

describe('deployment config', () => {
  it('routes a request that names no provider and no config by the deployment config', async () => {
    expect((await chat()).status).toBe(400)
    gateway.update((snapshot) => {
      snapshot.configs = [{ id: 'cfg-deploy', slug: 'deploy', config: { strategy: { mode: 'single' }, targets: [{ provider: '@sim', override_params: { temperature: 0.25 } }] } }]
      snapshot.deployment = { id: 'dep-1', slug: 'edge', type: 'production', configId: 'cfg-deploy' }
    })
    const response = await chat()
    expect(response.status).toBe(200)
    expect(response.headers.get('x-gateway-target-path')).toBe('config.targets[0]')
    expect((simulator.requests.at(-1)?.body as { temperature: number }).temperature).toBe(0.25)
  })

  it('refuses a snapshot whose deployment names a config it does not carry, keeping the previous one', () => {
    const before = gateway.holder.current?.generation
    const result = gateway.holder.apply({ ...gateway.snapshot, generation: 10_000, deployment: { id: 'dep-1', slug: 'edge', type: 'production', configId: 'missing' } })
    expect(result.ok).toBe(false)
    expect(result.ok === false && result.problems.map((problem) => problem.path)).toContain('deployment.configId')
    expect(gateway.holder.current?.generation).toBe(before)
  })
})
