/**
 * A config that names no provider (`{"retry": {"attempts": 2}}`) sets the retry policy for the
 * provider the request names itself: the x-gateway-provider header, the x-gateway-virtual-key
 * header or an `@slug/model` model. End to end through a gateway in front of the simulator.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'

let simulator: Simulator
let gateway: TestGateway

beforeAll(async () => {
  simulator = await startOpenAISimulator({ chunks: 2 })
  gateway = await startTestGateway([{ slug: 'sim', kind: 'openai', baseUrl: simulator.baseUrl }, { slug: 'other', kind: 'openai', baseUrl: simulator.baseUrl, models: ['only-this'] }])
})
afterAll(async () => {
  await gateway?.close()
  await simulator?.close()
})
beforeEach(() => simulator.reset())

async function chat(config: unknown, model: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(`${gateway.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config), ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  })
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> }
}

describe('a config with no provider', () => {
  it.each([
    ['an @slug/model model', '@sim/gpt-4o-mini', {}],
    ['the x-gateway-provider header', 'gpt-4o-mini', { 'x-gateway-provider': '@sim' }],
    ['the x-gateway-virtual-key header', 'gpt-4o-mini', { 'x-gateway-virtual-key': 'sim' }],
  ])('retries the provider named by %s: 503 then 200', async (_name, model, headers) => {
    simulator.script({ status: 503 })
    const answer = await chat({ retry: { attempts: 2, backoff_initial_ms: 1 } }, model, headers)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.object).toBe('chat.completion')
    expect(simulator.requests).toHaveLength(2)
    expect(simulator.requests.map((r) => (r.body as { model: string }).model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini'])
    expect(answer.headers.get('x-gateway-provider')).toBe('sim')
    expect(answer.headers.get('x-gateway-target-path')).toBe('config')
    expect(answer.headers.get('x-gateway-retry-attempt-count')).toBe('1')
  })

  it('without retries configured, answers the 503 after one attempt', async () => {
    simulator.script({ status: 503 })
    const answer = await chat({ request_timeout: 5000 }, '@sim/gpt-4o-mini')
    expect(answer.status).toBe(503)
    expect(simulator.requests).toHaveLength(1)
  })

  it('still needs the request to name a provider, and the provider\'s model list applies', async () => {
    const unnamed = await chat({ retry: { attempts: 2 } }, 'gpt-4o-mini')
    expect(unnamed.status).toBe(400)
    expect((unnamed.body.error as { code: string }).code).toBe('route_not_specified')
    const notEnabled = await chat({ retry: { attempts: 2 } }, '@other/gpt-4o-mini')
    expect(notEnabled.status).toBe(404)
    expect(simulator.requests).toHaveLength(0)
  })
})
