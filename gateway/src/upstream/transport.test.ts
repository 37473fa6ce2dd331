import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Pool } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rawIntegerText } from '../core/exact-integer.ts'
import { parseJsonBody } from '../http/json-body.ts'
import { secretBag } from '../core/secret.ts'
import { defaultTimeouts, maxBufferedResponseBytes, sendUpstreamBuffered, type UpstreamEndpoint } from './transport.ts'

const MiB = 1024 * 1024
let server: Server
let endpoint: UpstreamEndpoint
let received = ''

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => (body += chunk.toString()))
    request.on('end', () => {
      received = body
      const size = Number(new URL(request.url!, 'http://x').searchParams.get('bytes') ?? 2)
      const text = `"${'a'.repeat(Math.max(0, size - 2))}"`
      // ?chunked: no content-length, so the limit is found while reading.
      if (request.url!.includes('chunked')) {
        response.writeHead(200, { 'content-type': 'application/json' })
        for (let at = 0; at < text.length; at += 64 * 1024) response.write(text.slice(at, at + 64 * 1024))
        response.end()
      } else {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length) })
        response.end(text)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  endpoint = { baseUrl: new URL(origin), auth: { type: 'none' }, credentials: secretBag({}), options: {}, timeouts: defaultTimeouts, dispatcher: new Pool(origin), allowPrivateNetwork: true }
})
afterAll(async () => {
  await endpoint.dispatcher.close()
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

describe('sendUpstreamBuffered', () => {
  it.each(['declared', 'chunked'])('refuses an answer over the limit (%s length) with a 502', async (mode) => {
    const error = await sendUpstreamBuffered(
      endpoint,
      { method: 'GET', path: `/big?bytes=${2 * MiB}&${mode}`, headers: {} },
      { signal: new AbortController().signal, maxResponseBytes: MiB },
    ).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'upstream_response_too_large', status: 502 })
  })

  it('collects answers under the limit, and the connection stays usable after a refusal', async () => {
    const answer = await sendUpstreamBuffered(endpoint, { method: 'GET', path: `/small?bytes=${MiB / 2}&chunked`, headers: {} }, { signal: new AbortController().signal, maxResponseBytes: MiB })
    expect(answer.body.byteLength).toBe(MiB / 2)
  })

  it('sends integers the body parser kept exact, digit for digit', async () => {
    const body = parseJsonBody('{"seed":9223372036854775807,"n":-12345678901234567890,"t":0.5}') as Record<string, unknown>
    expect(rawIntegerText(body.seed)).toBe('9223372036854775807')
    await sendUpstreamBuffered(endpoint, { method: 'POST', path: '/echo', headers: {}, body }, { signal: new AbortController().signal })
    expect(received).toBe('{"seed":9223372036854775807,"n":-12345678901234567890,"t":0.5}')
  })
})

describe('maxBufferedResponseBytes', () => {
  it('reads GATEHOUSE_MAX_UPSTREAM_RESPONSE_BYTES, 32 MiB by default, and refuses nonsense', () => {
    expect(maxBufferedResponseBytes({})).toBe(32 * MiB)
    expect(maxBufferedResponseBytes({ GATEHOUSE_MAX_UPSTREAM_RESPONSE_BYTES: '1048576' })).toBe(MiB)
    expect(() => maxBufferedResponseBytes({ GATEHOUSE_MAX_UPSTREAM_RESPONSE_BYTES: 'lots' })).toThrow(/GATEHOUSE_MAX_UPSTREAM_RESPONSE_BYTES/)
  })
})
