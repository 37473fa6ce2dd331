import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { SIMULATOR_API_KEY, type Simulator } from './base.ts'
import { startOpenAISimulator } from './openai.ts'

let sim: Simulator

beforeAll(async () => {
  sim = await startOpenAISimulator({ chunks: 2, apiKeys: ['k'] })
})

afterEach(() => {
  sim.reset()
  sim.options.latencyMs = 0
  sim.options.recordLimit = 1000
})

afterAll(async () => {
  await sim.close()
})

const chatBody = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })

function chat(init: RequestInit = {}, path = '/chat/completions'): Promise<Response> {
  return fetch(sim.baseUrl + path, { method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: chatBody, ...init })
}

describe('simulator base', () => {
  it('consumes faults in order, skipping those whose predicate does not match', async () => {
    sim.script({ status: 500, match: (request) => request.path === '/v1/embeddings' }, { status: 503 }, { status: 502 })
    expect((await chat()).status).toBe(503)
    expect((await chat()).status).toBe(502)
    expect((await chat()).status).toBe(200)
    expect(sim.pendingFaults).toBe(1)
    const embedding = await fetch(`${sim.baseUrl}/embeddings`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'text-embedding-3-small', input: 'a' }),
    })
    expect(embedding.status).toBe(500)
    expect(sim.pendingFaults).toBe(0)
  })

  it('sends a scripted body and headers verbatim', async () => {
    sim.script({ status: 418, body: { custom: true }, headers: { 'x-sim': 'yes' }, retryAfterS: 2 })
    const response = await chat()
    expect(response.status).toBe(418)
    expect(response.headers.get('x-sim')).toBe('yes')
    expect(response.headers.get('retry-after')).toBe('2')
    expect(await response.json()).toEqual({ custom: true })
  })

  it('waits latencyMs before the headers and notices a client that gives up meanwhile', async () => {
    sim.options.latencyMs = 80
    const started = performance.now()
    expect((await chat()).status).toBe(200)
    expect(performance.now() - started).toBeGreaterThanOrEqual(75)

    sim.options.latencyMs = 5000
    const failure = await chat({ signal: AbortSignal.timeout(50) }).catch((caught: unknown) => caught)
    expect(failure).toBeInstanceOf(Error)
    await sim.waitForClosedEarly(1, 2000)
  })

  it('hangs a JSON answer after its headers, and cuts one in half', async () => {
    sim.script({ stallAfterChunks: 0 }, { resetAfterChunks: 1 })
    const controller = new AbortController()
    const stalled = await chat({ signal: controller.signal })
    expect(stalled.status).toBe(200)
    const bodyRead = stalled.text().catch((caught: unknown) => caught)
    controller.abort()
    expect(await bodyRead).toBeInstanceOf(Error)
    await sim.waitForClosedEarly(1, 2000)

    const cut = await chat()
    expect(cut.status).toBe(200)
    await expect(cut.json()).rejects.toThrow()
  })

  it('keeps at most recordLimit requests', async () => {
    sim.options.recordLimit = 2
    for (let i = 0; i < 3; i++) await chat()
    expect(sim.requests).toHaveLength(2)
    sim.options.recordLimit = 0
    await chat()
    expect(sim.requests).toHaveLength(2)
  })

  it('runs as a standalone process that prints its URL', async () => {
    const cli = fileURLToPath(new URL('./cli.ts', import.meta.url))
    const child = spawn(process.execPath, [cli, 'openai', '--port', '0', '--chunks', '3', '--latency-ms', '1', '--api-key', 'k'], { stdio: ['ignore', 'pipe', 'inherit'] })
    try {
      const lines = createInterface({ input: child.stdout })
      const [line] = (await once(lines, 'line')) as [string]
      const started = JSON.parse(line) as { provider: string; url: string; baseUrl: string }
      expect(started.provider).toBe('openai')
      expect(started.baseUrl).toBe(`${started.url}/v1`)
      const response = await fetch(`${started.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: chatBody })
      const body = (await response.json()) as { choices: Array<{ message: { content: string } }> }
      expect(body.choices[0]?.message.content).toBe('Echo: x alpha bravo')
    } finally {
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
  })
})

describe('closer to the wire', () => {
  /** Every read the client got, as it got it. */
  async function reads(response: Response): Promise<Buffer[]> {
    const pieces: Buffer[] = []
    for await (const piece of response.body as unknown as AsyncIterable<Uint8Array>) pieces.push(Buffer.from(piece))
    return pieces
  }

  it('splits a stream and a JSON answer at seeded random byte offsets, the same way for the same seed', async () => {
    const whole = await reads(await chat({ body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'split me' }] }) }))
    const split = await startOpenAISimulator({ chunks: 2, apiKeys: ['k'], splitWrites: { seed: 42 } })
    try {
      const post = (body: unknown): Promise<Response> =>
        fetch(`${split.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: JSON.stringify(body) })
      const streamed = await reads(await post({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'split me' }] }))
      expect(streamed.length).toBeGreaterThan(1)
      // The bytes are the same; only where they break differs (ids and timestamps aside).
      const normalise = (text: string): string => text.replace(/"(id|created|system_fingerprint)":("[^"]*"|\d+)/g, '')
      expect(normalise(Buffer.concat(streamed).toString())).toBe(normalise(Buffer.concat(whole).toString()))
      const json = await reads(await post({ model: 'gpt-4o', messages: [{ role: 'user', content: 'split me' }] }))
      expect(json.length).toBeGreaterThan(1)
      expect(JSON.parse(Buffer.concat(json).toString())).toMatchObject({ object: 'chat.completion' })
    } finally {
      await split.close()
    }
  })

  it('checks credentials and models by default: only SIMULATOR_API_KEY and the catalogue', async () => {
    const strict = await startOpenAISimulator({ chunks: 2 })
    try {
      const post = (key: string, model: string): Promise<Response> =>
        fetch(`${strict.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }) })
      expect((await post(SIMULATOR_API_KEY, 'gpt-4o')).status).toBe(200)
      expect((await post('sk-someone-else', 'gpt-4o')).status).toBe(401)
      expect((await post(SIMULATOR_API_KEY, 'gpt-4o-typo')).status).toBe(404)
    } finally {
      await strict.close()
    }
  })

  it("puts the provider's request id and rate-limit headers on scripted faults", async () => {
    sim.script({ status: 429, retryAfterS: 1 })
    const limited = await chat()
    expect(limited.status).toBe(429)
    expect(limited.headers.get('x-request-id')).toMatch(/^req_sim/)
    expect(limited.headers.get('x-ratelimit-limit-requests')).not.toBeNull()
    expect(limited.headers.get('retry-after')).toBe('1')
  })
})
