/**
 * One pipeline for every route family: a stage inserted into a running gateway sees chat (JSON and
 * streamed), Anthropic messages, a passthrough group, the model list and a realtime session set-up,
 * each with its operation, its caller and its route, and sees each answer on the way back (stream
 * events included). A config (x-gateway-config) applies to every family, not only chat.
 */
import type { AddressInfo } from 'node:net'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { WebSocket, WebSocketServer } from 'ws'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { observeStream, type Answer, type Exchange, type StageFactory } from '@gatehouse/gateway'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'
import { startAnthropicSimulator } from '../simulators/anthropic.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/base.ts'

interface Seen {
  operation: string
  endpointType: string
  principal: string
  route: string | null
  answer: Answer['kind'] | 'error'
  status: number | null
  streamedBatches: number
  streamEnded: boolean
}

const seen: Seen[] = []

/** A stage in the account position: it records what every route hands it, and counts stream batches. */
const recorder: StageFactory = {
  name: 'recorder',
  forOperation: () => ({
    name: 'recorder',
    async run(exchange: Exchange, next) {
      const entry: Seen = {
        operation: exchange.operation.name,
        endpointType: exchange.operation.endpointType,
        principal: exchange.context.principal.id,
        route: null,
        answer: 'error',
        status: null,
        streamedBatches: 0,
        streamEnded: false,
      }
      seen.push(entry)
      try {
        const answer = await next()
        entry.route = exchange.route?.kind ?? 'unrouted'
        entry.answer = answer.kind
        entry.status = answer.status
        if (answer.kind === 'stream') {
          return observeStream(answer, {
            onBatch: (batch) => {
              entry.streamedBatches++
              return batch
            },
            onEnd: () => {
              entry.streamEnded = true
            },
          })
        }
        return answer
      } catch (error) {
        entry.route = exchange.route?.kind ?? null
        throw error
      }
    },
  }),
}

let openai: Simulator
let anthropic: Simulator
let echo: WebSocketServer
let echoUrl: string
let gateway: TestGateway

beforeAll(async () => {
  openai = await startOpenAISimulator({ chunks: 3 })
  anthropic = await startAnthropicSimulator()
  echo = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  echo.on('connection', (socket) => socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary })))
  await new Promise<void>((resolve) => echo.once('listening', () => resolve()))
  echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/v1`
  gateway = await startTestGateway(
    [
      { slug: 'openai-main', kind: 'openai', baseUrl: openai.baseUrl, models: ['gpt-4o'] },
      { slug: 'claude', kind: 'anthropic', baseUrl: `${anthropic.url}/v1` },
      { slug: 'realtime', kind: 'openai', baseUrl: echoUrl },
    ],
    { features: { account: recorder } },
  )
})

afterAll(async () => {
  await gateway?.close()
  await openai?.close()
  await anthropic?.close()
  await new Promise<void>((resolve) => echo?.close(() => resolve()))
})

beforeEach(() => {
  seen.length = 0
})

const client = (headers: Record<string, string> = {}): OpenAI =>
  new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0, defaultHeaders: { 'x-gateway-provider': '@openai-main', ...headers } })

describe('one pipeline for every route family', () => {
  it('chat: the stage sees the caller, the direct route and the JSON answer', async () => {
    await client().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
    expect(seen).toEqual([expect.objectContaining({ operation: 'chat', endpointType: 'chatComplete', principal: 'key-ws', route: 'direct', answer: 'json', status: 200 })])
  })

  it('a chat stream: the stage sees every batch and the end of the stream', async () => {
    const stream = await client().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true })
    let chunks = 0
    for await (const _chunk of stream) chunks++
    expect(chunks).toBeGreaterThan(0)
    expect(seen).toEqual([expect.objectContaining({ operation: 'chat', answer: 'stream', streamEnded: true })])
    expect(seen[0]!.streamedBatches).toBeGreaterThan(0)
  })

  it('Anthropic messages through the Anthropic SDK', async () => {
    const sdk = new Anthropic({ apiKey: gateway.workspaceKey, baseURL: gateway.url, maxRetries: 0 })
    await sdk.messages.create({ model: '@claude/claude-sonnet-4-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] })
    expect(seen).toEqual([expect.objectContaining({ operation: 'messages', endpointType: 'messages', route: 'direct', answer: 'json' })])
  })

  it('a passthrough group (responses) relays through the same stages', async () => {
    await client().responses.create({ model: 'gpt-4o', input: 'hello' })
    expect(seen).toEqual([expect.objectContaining({ operation: 'passthrough:responses', endpointType: 'responses', route: 'direct', answer: 'relay', status: 200 })])
  })

  it('the model list is answered by the gateway itself when no provider is named, still through the stages', async () => {
    const models = await new OpenAI({ apiKey: gateway.workspaceKey, baseURL: gateway.baseUrl, maxRetries: 0 }).models.list()
    expect(models.data.map((model) => model.id)).toContain('@openai-main/gpt-4o')
    expect(seen).toEqual([expect.objectContaining({ operation: 'models', route: 'unrouted', answer: 'json' })])
  })

  it('a realtime session set-up runs the pipeline before the socket opens', async () => {
    const socket = new WebSocket(`${gateway.baseUrl.replace('http:', 'ws:')}/realtime?model=@realtime/gpt-realtime`, { headers: { authorization: `Bearer ${gateway.workspaceKey}` } })
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve())
      socket.once('error', reject)
    })
    socket.send('ping')
    const echoed = await new Promise<string>((resolve) => socket.once('message', (data) => resolve(String(data))))
    expect(echoed).toBe('ping')
    socket.close()
    expect(seen).toEqual([expect.objectContaining({ operation: 'realtime', endpointType: 'realtime', route: 'direct', answer: 'session', status: 101 })])
  })

  it('a refusal inside the pipeline (unknown provider) is seen by the stage as an error', async () => {
    await expect(client({ 'x-gateway-provider': '@nowhere' }).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 404 })
    expect(seen).toEqual([expect.objectContaining({ operation: 'chat', answer: 'error', route: null })])
  })
})

describe('configs apply to every route family', () => {
  // The first target answers 503, the config falls back to the second.
  const fallback = (provider: string): string =>
    JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ provider: '@realtime' }, { provider }] })

  it('messages under a fallback config', async () => {
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': gateway.workspaceKey, 'x-gateway-config': fallback('@claude') },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-gateway-target-path')).toBe('config.targets[1]')
    expect(response.headers.get('x-gateway-provider')).toBe('claude')
    expect(seen).toEqual([expect.objectContaining({ operation: 'messages', route: 'config' })])
  })

  it('a passthrough group under a fallback config', async () => {
    const response = await fetch(`${gateway.baseUrl}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.workspaceKey}`, 'x-gateway-config': fallback('@openai-main') },
      body: JSON.stringify({ model: 'gpt-4o', input: 'hello' }),
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-gateway-target-path')).toBe('config.targets[1]')
    expect(seen).toEqual([expect.objectContaining({ operation: 'passthrough:responses', route: 'config', answer: 'relay' })])
  })
})
