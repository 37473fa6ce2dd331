/**
 * `GET /v1/realtime`: a WebSocket proxied to the provider's realtime socket with the stored
 * credential. A small WebSocket echo server stands in for the provider's realtime API; it answers
 * `response.create` as OpenAI Realtime does, with an audio delta and a `response.done` carrying
 * usage, and the session's usage record sums those. Breaks tried, each failing the usage test:
 * tallying the client's frames too (the client's claimed million tokens count); keeping the last
 * response.done instead of summing them.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocket, WebSocketServer } from 'ws'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { UsageShipper } from '@gatehouse/gateway'
import { usageRecord, type UsageRecord } from '@gatehouse/gateway/snapshot'
import { costOf, tablePrice } from '../../gateway/src/pricing/index.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'

const UPSTREAM_KEY = 'sk-realtime-upstream'

interface Handshake {
  url: string
  headers: IncomingHttpHeaders
}

/**
 * Echoes every frame; `{"type":"close","code":N}` makes it close with that code;
 * `{"type":"response.create","usage":{…}}` is answered with an audio delta and a `response.done`
 * with that usage; a `response.done` from the client is swallowed; refuses unknown credentials.
 */
interface EchoServer {
  baseUrl: string
  handshakes: Handshake[]
  closes: Array<{ code: number; reason: string }>
  close(): Promise<void>
}

async function startEchoServer(): Promise<EchoServer> {
  const handshakes: Handshake[] = []
  const closes: Array<{ code: number; reason: string }> = []
  const server = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    handleProtocols: (offered) => (offered.has('realtime') ? 'realtime' : false),
    verifyClient: ({ req }, done) => {
      handshakes.push({ url: req.url ?? '', headers: req.headers })
      if (req.headers.authorization === `Bearer ${UPSTREAM_KEY}`) done(true)
      else done(false, 401, 'Unauthorized', { 'content-type': 'application/json' })
    },
  })
  server.on('connection', (socket) => {
    socket.on('message', (data, isBinary) => {
      const text = data.toString()
      if (!isBinary && text.includes('"type":"close"')) {
        const { code } = JSON.parse(text) as { code: number }
        socket.close(code, 'provider done')
        return
      }
      if (!isBinary && text.includes('"type":"response.create"')) {
        const { usage } = JSON.parse(text) as { usage: unknown }
        socket.send(JSON.stringify({ type: 'response.output_audio.delta', event_id: 'ev-1', delta: Buffer.alloc(4096, 7).toString('base64') }))
        socket.send(JSON.stringify({ event_id: 'ev-2', type: 'response.done', response: { id: 'resp-1', status: 'completed', usage } }))
        return
      }
      if (!isBinary && text.includes('"type":"response.done"')) return
      socket.send(data, { binary: isBinary })
    })
    socket.on('close', (code, reason) => closes.push({ code, reason: reason.toString() }))
  })
  await new Promise<void>((resolve) => server.once('listening', () => resolve()))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    handshakes,
    closes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

function open(socket: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
}

function nextMessage(socket: WebSocket): Promise<{ data: Buffer; isBinary: boolean }> {
  return new Promise((resolve) => socket.once('message', (data, isBinary) => resolve({ data: data as Buffer, isBinary })))
}

function closed(socket: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })))
}

function refusal(socket: WebSocket): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    socket.once('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => (body += chunk.toString()))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
    })
    socket.once('open', () => reject(new Error('the upgrade was accepted')))
  })
}

function waitFor(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const poll = (): void => {
      if (check()) return resolve()
      if (Date.now() - started > timeoutMs) return reject(new Error('condition not met in time'))
      setTimeout(poll, 10)
    }
    poll()
  })
}

let echo: EchoServer
let gateway: TestGateway
let realtimeUrl: string
const stored: UsageRecord[] = []
const shipper = new UsageShipper({
  transport: async (batch) => {
    for (const line of batch.lines()) stored.push(usageRecord.parse(JSON.parse(line)))
  },
})

beforeAll(async () => {
  echo = await startEchoServer()
  gateway = await startTestGateway([
    { slug: 'openai-rt', kind: 'openai', baseUrl: echo.baseUrl, credentials: { apiKey: UPSTREAM_KEY } },
    { slug: 'openai-badkey', kind: 'openai', baseUrl: echo.baseUrl, credentials: { apiKey: 'sk-wrong' } },
    { slug: 'deepseek-main', kind: 'deepseek', baseUrl: echo.baseUrl },
    // Written by a workspace: neither a loopback literal nor a name resolving to loopback may be reached.
    { slug: 'tenant-literal', kind: 'openai', baseUrl: echo.baseUrl, network: 'public' },
    { slug: 'tenant-name', kind: 'openai', baseUrl: echo.baseUrl.replace('127.0.0.1', 'localhost'), network: 'public' },
  ], { usage: shipper })
  realtimeUrl = `${gateway.baseUrl.replace('http:', 'ws:')}/realtime`
})

afterAll(async () => {
  await gateway?.close()
  await echo?.close()
})

beforeEach(() => {
  echo.handshakes.length = 0
  echo.closes.length = 0
})

describe('realtime WebSocket proxy', () => {
  it('round-trips text and binary frames with the Gatehouse key in Authorization, using the stored credential upstream', async () => {
    const socket = new WebSocket(`${realtimeUrl}?model=gpt-realtime`, {
      headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'x-gateway-provider': '@openai-rt', 'openai-beta': 'realtime=v1' },
    })
    const upgrade = new Promise<IncomingHttpHeaders>((resolve) => socket.once('upgrade', (response) => resolve(response.headers)))
    await open(socket)
    expect((await upgrade)['x-gateway-provider']).toBe('openai-rt')

    const event = JSON.stringify({ type: 'session.update', session: { instructions: 'be brief' } })
    socket.send(event)
    const text = await nextMessage(socket)
    expect(text.isBinary).toBe(false)
    expect(text.data.toString()).toBe(event)
    socket.send(Buffer.from([1, 2, 3, 255]))
    const binary = await nextMessage(socket)
    expect(binary.isBinary).toBe(true)
    expect([...binary.data]).toEqual([1, 2, 3, 255])

    expect(echo.handshakes).toHaveLength(1)
    const handshake = echo.handshakes[0]!
    expect(handshake.url).toBe('/v1/realtime?model=gpt-realtime')
    expect(handshake.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`)
    expect(handshake.headers['openai-beta']).toBe('realtime=v1')
    expect(JSON.stringify(handshake.headers)).not.toContain(gateway.workspaceKey)

    const done = closed(socket)
    socket.close(1000, 'client done')
    expect(await done).toMatchObject({ code: 1000 })
    await waitFor(() => echo.closes.length === 1)
    expect(echo.closes[0]).toEqual({ code: 1000, reason: 'client done' })
  })

  it('takes the key from the browser subprotocol and the provider from @slug/model, and never forwards the key', async () => {
    const socket = new WebSocket(`${realtimeUrl}?model=${encodeURIComponent('@openai-rt/gpt-realtime-mini')}`, ['realtime', `openai-insecure-api-key.${gateway.workspaceKey}`])
    await open(socket)
    expect(socket.protocol).toBe('realtime')
    const handshake = echo.handshakes[0]!
    expect(handshake.url).toBe('/v1/realtime?model=gpt-realtime-mini')
    expect(handshake.headers['sec-websocket-protocol']).toBe('realtime')

    // The provider closing ends the caller's socket with the provider's code and reason.
    const done = closed(socket)
    socket.send(JSON.stringify({ type: 'close', code: 4001 }))
    expect(await done).toEqual({ code: 4001, reason: 'provider done' })
  })

  it('refuses a missing or wrong key with 401 before contacting the provider', async () => {
    const missing = refusal(new WebSocket(`${realtimeUrl}?model=@openai-rt/gpt-realtime`))
    expect(await missing).toMatchObject({ status: 401 })
    const wrong = await refusal(new WebSocket(`${realtimeUrl}?model=@openai-rt/gpt-realtime`, [`openai-insecure-api-key.${gateway.workspaceKey.slice(0, -2)}xx`]))
    expect(wrong.status).toBe(401)
    expect(JSON.parse(wrong.body)).toMatchObject({ error: { type: 'authentication_error' } })
    expect(echo.handshakes).toHaveLength(0)
  })

  it('answers provider refusals and unsupported providers in the error envelope', async () => {
    const headers = { authorization: `Bearer ${gateway.workspaceKey}` }
    const refused = await refusal(new WebSocket(`${realtimeUrl}?model=@openai-badkey/gpt-realtime`, { headers }))
    expect(refused.status).toBe(502)
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'provider_auth_failed' } })
    expect(refused.body).not.toContain('sk-wrong')

    const unsupported = await refusal(new WebSocket(`${realtimeUrl}?model=@deepseek-main/x`, { headers }))
    expect(unsupported.status).toBe(400)
    expect(JSON.parse(unsupported.body)).toMatchObject({ error: { code: 'unsupported_operation' } })

    const unknown = await refusal(new WebSocket(`${gateway.url.replace('http:', 'ws:')}/v1/elsewhere`, { headers }))
    expect(unknown.status).toBe(404)

    const plain = await fetch(`${gateway.baseUrl}/realtime?model=@openai-rt/gpt-realtime`, { headers })
    expect(plain.status).toBe(400)
  })

  it('refuses a provider whose address leads to a private network unless it is allowed one, before any handshake', async () => {
    const headers = { authorization: `Bearer ${gateway.workspaceKey}` }
    for (const slug of ['tenant-literal', 'tenant-name']) {
      const refused = await refusal(new WebSocket(`${realtimeUrl}?model=@${slug}/gpt-realtime`, { headers }))
      expect(refused.status).toBe(403)
      expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'upstream_address_blocked' } })
    }
    expect(echo.handshakes).toHaveLength(0)
  })

  it("records the session once it ends, with the provider's response.done usage summed and priced; the client's frames never count", async () => {
    await shipper.flush()
    stored.length = 0
    const socket = new WebSocket(`${realtimeUrl}?model=${encodeURIComponent('@openai-rt/gpt-realtime')}`, { headers: { authorization: `Bearer ${gateway.workspaceKey}` } })
    const upgrade = new Promise<IncomingHttpHeaders>((resolve) => socket.once('upgrade', (response) => resolve(response.headers)))
    await open(socket)
    const traceId = (await upgrade)['x-gateway-trace-id']
    const responses = [
      {
        input_tokens: 120, output_tokens: 45,
        input_token_details: { cached_tokens: 64, text_tokens: 20, audio_tokens: 100, cached_tokens_details: { text_tokens: 20, audio_tokens: 44 } },
        output_token_details: { text_tokens: 5, audio_tokens: 40 },
      },
      { input_tokens: 300, output_tokens: 80, input_token_details: { cached_tokens: 0, text_tokens: 100, audio_tokens: 200 }, output_token_details: { text_tokens: 30, audio_tokens: 50 } },
    ]
    for (const usage of responses) {
      const events: string[] = []
      const received = new Promise<void>((resolve) => {
        const onMessage = (data: Buffer): void => {
          events.push((JSON.parse(data.toString()) as { type: string }).type)
          if (events.length === 2) {
            socket.off('message', onMessage)
            resolve()
          }
        }
        socket.on('message', onMessage)
      })
      socket.send(JSON.stringify({ type: 'response.create', usage }))
      await received
      expect(events).toEqual(['response.output_audio.delta', 'response.done'])
    }
    // A client claiming usage is not the provider: the echo swallows it, and it must not count either way.
    socket.send(JSON.stringify({ type: 'response.done', response: { usage: { input_tokens: 1_000_000, output_tokens: 1_000_000 } } }))
    expect(stored).toEqual([])

    const done = closed(socket)
    socket.close(1000, 'bye')
    await done
    await waitFor(() => {
      void shipper.flush()
      return stored.length > 0
    }, 5000)
    const [record, ...rest] = stored
    expect(rest).toEqual([])
    const usage = { inputTokens: 420, outputTokens: 125, cachedInputTokens: 64, audioInputTokens: 300, cachedAudioInputTokens: 44, audioOutputTokens: 90 }
    expect(record).toMatchObject({
      route: 'realtime', endpointType: 'realtime', statusCode: 101, traceId, providerSlug: 'openai-rt', modelServed: 'gpt-realtime', estimated: false,
      ...usage, pricingVersion: 'gatehouse-2026-11-29.2',
    })
    // gpt-realtime, USD per 1M: text 4 in / 0.4 cached / 16 out, audio 32 in / 0.4 cached / 64 out. Text input
    // 420 - 64 cached - 256 fresh audio = 100; cached text 20, cached audio 44; text output 35, audio output 90.
    // Breaks tried: audio billed at the text rates, and cached audio billed as fresh audio: both fail here.
    expect(record!.costUsd).toBeCloseTo((100 * 4 + 20 * 0.4 + 256 * 32 + 44 * 0.4 + 35 * 16 + 90 * 64) / 1e6, 12)
    expect(record!.costUsd).toBeCloseTo(costOf(usage, tablePrice('openai', 'gpt-realtime')!), 12)
  })
})
