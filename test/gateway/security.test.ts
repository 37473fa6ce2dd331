/**
 * Issue 10, gateway side, through the real routes of a gateway on loopback: SSRF through a base
 * URL, secrets in upstream error bodies, a malformed stream that must not freeze the process,
 * oversized answers, deep nesting and exact integers, dot segments and empty ids on passthrough
 * routes, repeated credentials, `n` through one-choice providers, and the model list of a key.
 */
import { request as httpRequest, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DataPlaneJwt } from '@gatehouse/gateway'
import { startAnthropicSimulator } from '../simulators/anthropic.ts'
import { startOpenAISimulator } from '../simulators/openai.ts'
import type { Simulator } from '../simulators/index.ts'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'

// Not shaped like a key: only knowing the provider's secrets can find it in a message.
const STORED_KEY = 'plain-stored-credential-value'
const MiB = 1024 * 1024

/** A hostile upstream on loopback; the first path segment picks the misbehaviour. */
let hostile: Server
let hostileUrl: string

/** Bytes the download mode has handed to its socket so far (the passthrough streaming test reads it). */
let downloadWrittenBytes = 0

/** Writes `piece` `count` times as fast as the reader takes it, then `tail`; stops if the reader leaves. */
function pump(response: ServerResponse, piece: string | Buffer, count: number, tail: string, onPiece?: () => void): void {
  let left = count
  response.on('close', () => (left = 0))
  const write = (): void => {
    while (left > 0) {
      left--
      onPiece?.()
      if (!response.write(piece)) return void response.once('drain', write)
    }
    if (!response.writableEnded) response.end(tail)
  }
  write()
}

function hostileHandler(request: IncomingMessage, response: ServerResponse): void {
  const mode = request.url!.split('/')[1]
  request.resume()
  if (mode === 'echo-auth') {
    // Echoes the credential it received, as some providers' error messages do.
    response.writeHead(400, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ error: { message: `Invalid request with header ${request.headers.authorization} (key ${STORED_KEY})`, type: 'invalid_request_error' } }))
    return
  }
  if (mode === 'endless') {
    // 60 MiB of one SSE line that never ends, written as fast as the gateway reads.
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    response.write('data: ')
    pump(response, 'x'.repeat(64 * 1024), 960, '')
    return
  }
  if (mode === 'huge') {
    // A 100 MiB JSON answer without a declared length.
    response.writeHead(200, { 'content-type': 'application/json' })
    response.write('{"id":"x","object":"chat.completion","choices":[],"pad":"')
    pump(response, 'y'.repeat(MiB), 100, '"}')
    return
  }
  if (mode === 'download') {
    // A 96 MiB passthrough file body.
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(96 * MiB) })
    downloadWrittenBytes = 0
    pump(response, Buffer.alloc(MiB, 1), 96, '', () => (downloadWrittenBytes += MiB))
    return
  }
  response.writeHead(404).end()
}

let openai: Simulator
let claude: Simulator
let gateway: TestGateway
// The identity provider's key set, on loopback; no control plane anywhere in this suite.
let signingKey: CryptoKey
let jwks: Server
const ISSUER = 'https://idp.example.test'
const AUDIENCE = 'gatehouse'

beforeAll(async () => {
  hostile = createServer(hostileHandler)
  await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve))
  hostileUrl = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`
  const pair = await generateKeyPair('ES256')
  signingKey = pair.privateKey
  const keySet = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] })
  jwks = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(keySet))
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve))
  const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`
  openai = await startOpenAISimulator({ chunks: 2 })
  claude = await startAnthropicSimulator({ chunks: 2 })
  gateway = await startTestGateway([
    { slug: 'sim', kind: 'openai', baseUrl: openai.baseUrl },
    { slug: 'listed', kind: 'openai', baseUrl: openai.baseUrl, models: ['gpt-4o-mini', 'gpt-4.1'] },
    { slug: 'claude', kind: 'anthropic', baseUrl: `${claude.url}/v1` },
    // Written by a workspace: its base URL may not lead to loopback.
    { slug: 'tenant', kind: 'openai', baseUrl: openai.baseUrl, network: 'public' },
    { slug: 'echo', kind: 'openai', baseUrl: `${hostileUrl}/echo-auth/v1`, credentials: { apiKey: STORED_KEY } },
    { slug: 'endless', kind: 'openai', baseUrl: `${hostileUrl}/endless/v1` },
    { slug: 'huge', kind: 'openai', baseUrl: `${hostileUrl}/huge/v1` },
    { slug: 'download', kind: 'openai', baseUrl: `${hostileUrl}/download/v1` },
  ], { jwt: new DataPlaneJwt({ jwksUrl, issuer: ISSUER, audience: AUDIENCE }) })
})
afterAll(async () => {
  await gateway?.close()
  await Promise.all([openai?.close(), claude?.close()])
  await new Promise<void>((resolve) => jwks.close(() => resolve()))
  hostile?.closeAllConnections()
  await new Promise<void>((resolve) => hostile.close(() => resolve()))
})

async function call(path: string, init: { method?: string; provider?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}) {
  const response = await fetch(`${gateway.url}${path}`, {
    method: init.method ?? (init.body === undefined && init.rawBody === undefined ? 'GET' : 'POST'),
    headers: {
      authorization: `Bearer ${gateway.workspaceKey}`,
      ...(init.provider ? { 'x-gateway-provider': init.provider } : {}),
      ...(init.body !== undefined || init.rawBody !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
    body: init.rawBody ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  })
  const text = await response.text()
  let json: { error?: { code: string; param: string | null; message: string; type: string } } & Record<string, unknown> = {}
  try {
    json = JSON.parse(text)
  } catch {
    // an event stream or binary body
  }
  return { status: response.status, text, json }
}

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }

describe('SSRF through a base URL', () => {
  it('refuses to connect a public provider whose base URL leads to loopback, before any request byte', async () => {
    const before = openai.requests.length
    const answer = await call('/v1/chat/completions', { provider: '@tenant', body: chat })
    expect(answer.status).toBe(403)
    expect(answer.json.error).toMatchObject({ code: 'upstream_address_blocked' })
    expect(openai.requests.length).toBe(before)
    // The same address for an operator-declared provider works.
    expect((await call('/v1/chat/completions', { provider: '@sim', body: chat })).status).toBe(200)
  })
})

describe('secrets in upstream error bodies', () => {
  it('never relays the stored credential or anything shaped like a key', async () => {
    const answer = await call('/v1/chat/completions', { provider: '@echo', body: chat })
    expect(answer.status).toBe(400)
    expect(answer.text).not.toContain(STORED_KEY)
    expect(answer.text).not.toContain(gateway.workspaceKey)
    expect(answer.json.error?.message).toContain('[redacted]')
  })
})

describe('a malformed stream', () => {
  it('ends a 60 MiB line with an error while the gateway keeps answering, without ballooning', async () => {
    const rssBefore = process.memoryUsage().rss
    let rssPeak = rssBefore
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20)
    const loopDelay = monitorEventLoopDelay({ resolution: 10 })
    loopDelay.enable()
    const healthMs: number[] = []
    let streaming = true
    const probes = (async () => {
      while (streaming) {
        const started = performance.now()
        await fetch(`${gateway.url}/livez`).then((response) => response.text())
        healthMs.push(performance.now() - started)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })()
    const answer = await call('/v1/chat/completions', { provider: '@endless', body: { ...chat, stream: true } })
    streaming = false
    await probes
    clearInterval(sampler)
    loopDelay.disable()
    // The stream had started (200), so it ends with the catalog error in-band.
    expect(answer.text).toContain('upstream_malformed_response')
    expect(healthMs.length).toBeGreaterThan(0)
    console.log('health probe ms while streaming', healthMs.map(Math.round).join(' '), 'rss growth MiB', Math.round((rssPeak - rssBefore) / MiB), 'loop delay max ms', Math.round(loopDelay.max / 1e6))
    // Before the fix one such line blocked the event loop for about 35 s. The bound is loose because
    // this suite shares a few CPU cores with much else; the loop delay it logs is the finer measure.
    expect(Math.max(...healthMs)).toBeLessThan(5000)
    expect(rssPeak - rssBefore).toBeLessThan(200 * MiB)
  }, 60_000)
})

describe('upstream answer size', () => {
  it('refuses a 100 MiB JSON answer with a 502 instead of holding it', async () => {
    const answer = await call('/v1/chat/completions', { provider: '@huge', body: chat })
    expect(answer.status).toBe(502)
    expect(answer.json.error).toMatchObject({ code: 'upstream_response_too_large' })
  }, 60_000)

  // Measured on the provider's side rather than as this process's memory (which also counts the
  // reads' garbage until a GC, and swung from 45 to 124 MiB with what ran before): a gateway that
  // held the body would take all 96 MiB from the provider before its first byte reached the client,
  // and would keep taking it while the client reads nothing.
  it('streams a large passthrough body through without buffering it', async () => {
    const response = await fetch(`${gateway.url}/v1/files/file-big/content`, { headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'x-gateway-provider': '@download' } })
    expect(response.status).toBe(200)
    const reader = response.body!.getReader()
    const first = await reader.read()
    const writtenAtFirstByte = downloadWrittenBytes
    await new Promise((resolve) => setTimeout(resolve, 300))
    const writtenWhileClientPaused = downloadWrittenBytes
    let bytes = first.value?.byteLength ?? 0
    for (let next = await reader.read(); !next.done; next = await reader.read()) bytes += next.value.byteLength
    expect(bytes).toBe(96 * MiB)
    // Streamed, the provider is held back by the client's pace: socket buffers' worth ahead, not the body.
    expect(writtenAtFirstByte).toBeLessThan(64 * MiB)
    expect(writtenWhileClientPaused).toBeLessThan(64 * MiB)
  }, 60_000)
})

describe('request bodies', () => {
  it('refuses deep nesting with a 400 before any upstream call', async () => {
    const before = openai.requests.length
    const deepContent = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":${'['.repeat(5000)}${']'.repeat(5000)}}]}`
    for (const rawBody of ['['.repeat(100_000) + ']'.repeat(100_000), deepContent]) {
      const answer = await call('/v1/chat/completions', { provider: '@sim', rawBody })
      expect(answer.status).toBe(400)
      expect(answer.json.error).toMatchObject({ code: 'invalid_json', type: 'invalid_request_error' })
    }
    expect(openai.requests.length).toBe(before)
  })

  it('passes a seed of 9223372036854775807 to the provider digit for digit', async () => {
    const answer = await call('/v1/chat/completions', { provider: '@sim', rawBody: '{"model":"gpt-4o-mini","seed":9223372036854775807,"messages":[{"role":"user","content":"hi"}]}' })
    expect(answer.status).toBe(200)
    expect(openai.requests.at(-1)!.rawBody.toString()).toContain('"seed":9223372036854775807')
    const tooBig = await call('/v1/chat/completions', { provider: '@sim', rawBody: '{"model":"gpt-4o-mini","seed":9223372036854775808,"messages":[{"role":"user","content":"hi"}]}' })
    expect(tooBig.status).toBe(400)
    expect(tooBig.json.error?.param).toBe('seed')
  })
})

describe('passthrough paths', () => {
  it.each([
    ['GET', '/v1/files/%2e%2e/content'],
    ['GET', '/v1/files/%2E%2E/content'],
    ['GET', '/v1/files/a%2Fb/content'],
    ['DELETE', '/v1/vector_stores/'],
    ['GET', '/v1/vector_stores/'],
  ])('%s %s is refused without an upstream call', async (method, path) => {
    const before = openai.requests.length
    const answer = await call(path, { method, provider: '@sim' })
    expect([400, 404]).toContain(answer.status)
    expect(openai.requests.length).toBe(before)
  })
})

describe('credentials', () => {
  it('refuses two Authorization headers with a 400', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${gateway.url}/v1/models`, { headers: ['authorization', `Bearer ${gateway.workspaceKey}`, 'authorization', 'Bearer someone-else'] }, (response) => {
        response.resume()
        resolve(response.statusCode!)
      })
      request.on('error', reject)
      request.end()
    })
    expect(status).toBe(400)
  })
})

describe('n through a one-choice provider', () => {
  it('is refused with a 400 naming n, never answered with fewer choices', async () => {
    const before = claude.requests.length
    const answer = await call('/v1/chat/completions', { provider: '@claude', body: { ...chat, model: 'claude-sonnet-4-5', n: 3 } })
    expect(answer.status).toBe(400)
    expect(answer.json.error?.param).toBe('n')
    expect(claude.requests.length).toBe(before)
  })
})

describe('GET /v1/models with a workspace key', () => {
  it('lists what the key can reach: allowlists, upstream lists, wildcards', async () => {
    const answer = await call('/v1/models')
    expect(answer.status).toBe(200)
    const ids = (answer.json.data as Array<{ id: string }>).map((model) => model.id)
    expect(ids).toEqual(expect.arrayContaining(['@listed/gpt-4o-mini', '@listed/gpt-4.1', '@claude/*']))
    expect(ids.some((id) => id.startsWith('@sim/') && id !== '@sim/*')).toBe(true)
    expect(ids.filter((id) => id.startsWith('@listed/'))).toHaveLength(2)
  })
})

describe('JWT on the data plane', () => {
  async function token(claims: Record<string, unknown>): Promise<string> {
    const seconds = Math.floor(Date.now() / 1000)
    return new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: seconds, exp: seconds + 300, sub: 'user-7', ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(signingKey)
  }

  it('calls models with a token the admin API would accept, mapped to its workspace', async () => {
    const before = openai.requests.length
    const answer = await call('/v1/chat/completions', { provider: '@sim', body: chat, headers: { authorization: `Bearer ${await token({ workspace_id: 'test', scope: 'completions.write' })}` } })
    expect(answer.status).toBe(200)
    expect(openai.requests.length).toBe(before + 1)
    // The stored credential goes upstream, never the caller's token.
    expect(openai.requests.at(-1)!.headers.authorization).toBe('Bearer sk-simulator')
  })

  it('refuses a token without the completions scope, an unknown workspace, and a forged one', async () => {
    const scoped = await call('/v1/chat/completions', { provider: '@sim', body: chat, headers: { authorization: `Bearer ${await token({ workspace_id: 'test', scopes: ['logs.read'] })}` } })
    expect(scoped.status).toBe(403)
    expect(scoped.json.error?.code).toBe('insufficient_scope')
    const elsewhere = await call('/v1/chat/completions', { provider: '@sim', body: chat, headers: { authorization: `Bearer ${await token({ workspace_id: 'nope' })}` } })
    expect(elsewhere.status).toBe(401)
    const forged = (await token({ workspace_id: 'test' })).slice(0, -4) + 'AAAA'
    expect((await call('/v1/chat/completions', { provider: '@sim', body: chat, headers: { authorization: `Bearer ${forged}` } })).status).toBe(401)
  })
})
