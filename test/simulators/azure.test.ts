import { AzureOpenAI } from 'openai'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Simulator } from './base.ts'
import { startAzureSimulator } from './azure.ts'

let sim: Simulator
let client: AzureOpenAI

beforeAll(async () => {
  sim = await startAzureSimulator({ chunks: 3, apiKeys: ['azure-key', 'k', 'entra-token'] })
  client = new AzureOpenAI({ endpoint: sim.url, apiKey: 'azure-key', apiVersion: '2024-10-21', deployment: 'gpt-4o', maxRetries: 0 })
})

afterEach(() => {
  sim.reset()
})

afterAll(async () => {
  await sim.close()
})

describe('Azure OpenAI simulator, official SDK', () => {
  it('answers a deployment with content filter annotations, api-key auth and api-version', async () => {
    const completion = await client.chat.completions.create({ model: 'ignored-by-azure', messages: [{ role: 'user', content: 'hello azure' }] })
    expect(completion.choices[0]?.message.content).toBe('Echo: hello azure alpha bravo')
    expect(completion.model).toBe('gpt-4o')
    expect(completion).toMatchObject({ prompt_filter_results: [{ prompt_index: 0 }] })
    expect(completion.choices[0]).toMatchObject({ content_filter_results: { violence: { filtered: false } } })
    const recorded = sim.requests[0]!
    expect(recorded.path).toBe('/openai/deployments/gpt-4o/chat/completions')
    expect(recorded.query['api-version']).toBe('2024-10-21')
    expect(recorded.headers['api-key']).toBe('azure-key')
  })

  it('streams after the leading prompt-filter chunk', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'x' }] })
    const chunks = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks[0]).toMatchObject({ id: '', choices: [], prompt_filter_results: [{ prompt_index: 0 }] })
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Echo: x alpha bravo')
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(3)
  })

  it('embeds through a deployment', async () => {
    const embeddings = new AzureOpenAI({ endpoint: sim.url, apiKey: 'azure-key', apiVersion: '2024-10-21', deployment: 'text-embedding-3-small', maxRetries: 0 })
    const result = await embeddings.embeddings.create({ model: 'text-embedding-3-small', input: 'a', dimensions: 4 })
    expect(result.data[0]?.embedding).toHaveLength(4)
  })

  it('answers DeploymentNotFound, 401, missing api-version and content_filter', async () => {
    const unknown = new AzureOpenAI({ endpoint: sim.url, apiKey: 'azure-key', apiVersion: '2024-10-21', deployment: 'nope', maxRetries: 0 })
    const notFound = await unknown.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught)
    expect(notFound).toMatchObject({ status: 404, code: 'DeploymentNotFound' })

    const noKey = await fetch(`${sim.url}/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21`, { method: 'POST', body: '{}' })
    expect(noKey.status).toBe(401)
    expect(((await noKey.json()) as { error: { code: string } }).error.code).toBe('401')

    const noVersion = await fetch(`${sim.url}/openai/deployments/gpt-4o/chat/completions`, {
      method: 'POST',
      headers: { 'api-key': 'k', 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }),
    })
    expect(noVersion.status).toBe(404)

    const blocked = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'something unsafe' }] }).catch((caught: unknown) => caught)
    expect(blocked).toMatchObject({ status: 400, code: 'content_filter' })
  })

  it('serves the v1 surface with a bearer token and plays scripted 429s', async () => {
    sim.script({ status: 429, retryAfterS: 1 })
    const limited = await fetch(`${sim.url}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer entra-token', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    })
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe('1')
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('429')
    const ok = await fetch(`${sim.url}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer entra-token', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    })
    expect(ok.status).toBe(200)
  })
})
