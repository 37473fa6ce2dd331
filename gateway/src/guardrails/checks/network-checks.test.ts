/**
 * The checks that call out, against loopback servers: the webhook (signed request, verdicts,
 * timeout, failOnError, malformed answers), the partner contract (policyId, timeout default 10000
 * ms, both hooks) and inline image URLs (size limit, timeout, non-images, failOnError), all through
 * the SSRF-safe dispatcher, which refuses loopback unless the gateway allows private networks.
 */
import { createHmac } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSsrfSafeDispatcher } from '../../upstream/ssrf.ts'
import { compileGuardrails } from '../compile.ts'
import { runGuardrail } from '../run.ts'
import type { SnapshotGuardrail } from '../../snapshot/policies.ts'
import { parametersOf } from './testing.ts'
import { SIGNATURE_HEADER } from './webhook.ts'

type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void

let server: Server
let base: string
const handlers = new Map<string, Handler>()
const seen: Array<{ path: string; headers: IncomingMessage['headers']; body: string }> = []
const loopback = createSsrfSafeDispatcher({ allowPrivateNetwork: true })
const guarded = createSsrfSafeDispatcher({ allowPrivateNetwork: false })
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = ''
    request.on('data', (part: Buffer) => (body += part.toString()))
    request.on('end', () => {
      seen.push({ path: request.url!, headers: request.headers, body })
      const handler = handlers.get(request.url!.split('?')[0]!)
      if (handler) handler(request, body, response)
      else response.writeHead(404).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  handlers.set('/pass', (_q, _b, r) => r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ verdict: true, explanation: 'fine' })))
  handlers.set('/fail', (_q, _b, r) => r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ verdict: false, explanation: 'nope' })))
  handlers.set('/slow', (_q, _b, r) => setTimeout(() => r.writeHead(200).end(JSON.stringify({ verdict: true })), 2000).unref())
  handlers.set('/html', (_q, _b, r) => r.writeHead(200, { 'content-type': 'text/html' }).end('<html>oops</html>'))
  handlers.set('/shape', (_q, _b, r) => r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ verdict: 'yes' })))
  handlers.set('/500', (_q, _b, r) => r.writeHead(500).end('{}'))
  handlers.set('/image.png', (_q, _b, r) => r.writeHead(200, { 'content-type': 'image/png' }).end(PNG))
  handlers.set('/page', (_q, _b, r) => r.writeHead(200, { 'content-type': 'text/html' }).end('<p>'))
  handlers.set('/big.png', (_q, _b, r) => r.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(4096)))
})
afterAll(async () => {
  await Promise.all([loopback.close(), guarded.close()])
  await new Promise((resolve) => server.close(resolve))
})

/** A dead port: listen, note the port, close. */
async function deadUrl(): Promise<string> {
  const dead = createServer()
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve))
  const port = (dead.address() as AddressInfo).port
  await new Promise((resolve) => dead.close(resolve))
  return `http://127.0.0.1:${port}/x`
}

function guardrail(checks: SnapshotGuardrail['checks'], dispatcher = loopback) {
  const record: SnapshotGuardrail = { id: 'g1', slug: 'g1', name: 'g1', workspaceId: null, version: 1, checks, actions: { deny: true }, hooks: ['beforeRequestHook'], holdBack: { mode: 'none', windowChars: 256 } }
  const { runtime } = compileGuardrails([record], [], { dispatcher })
  return runtime.find('g1', null)!
}

const input = { text: 'hello there', body: { model: 'm', messages: [{ role: 'user', content: 'hello there' }] }, metadata: { team: 'a' }, endpointType: 'chatComplete' as const, model: 'm', providerKind: null }
const run = (g: ReturnType<typeof guardrail>, hook: 'beforeRequestHook' | 'afterRequestHook' = 'beforeRequestHook') => runGuardrail(g, hook, input, new AbortController().signal)

describe('default.webhook', () => {
  const check = (parameters: Record<string, unknown>) => guardrail([{ id: 'default.webhook', parameters, isEnabled: true }])

  it('defaults: timeout 3000 ms, failOnError false', () => {
    expect(parametersOf('default.webhook', { webhookURL: `${base}/pass` })).toEqual({ webhookURL: `${base}/pass`, headers: {}, timeout: 3000, failOnError: false })
  })

  it('takes the verdict from the service, with the hook, the text and the request body, signed', async () => {
    seen.length = 0
    const secret = 'a-signing-secret-of-some-length'
    const passed = await run(check({ webhookURL: `${base}/pass`, headers: { 'x-team': 'blue' }, signingSecret: secret }))
    expect(passed.result).toMatchObject({ verdict: true, checks: [{ id: 'default.webhook', verdict: true, explanation: 'fine' }] })
    const call = seen.at(-1)!
    expect(JSON.parse(call.body)).toMatchObject({ eventType: 'beforeRequestHook', text: 'hello there', request: input.body, metadata: { team: 'a' }, model: 'm' })
    expect(call.headers['x-team']).toBe('blue')
    const [t, v1] = String(call.headers[SIGNATURE_HEADER]).split(',')
    const timestamp = t!.slice(2)
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(5)
    expect(v1).toBe(`v1=${createHmac('sha256', secret).update(`${timestamp}.${call.body}`).digest('hex')}`)
    expect((await run(check({ webhookURL: `${base}/fail` }), 'afterRequestHook')).result).toMatchObject({ verdict: false, hook: 'afterRequestHook' })
    expect(seen.at(-1)!.headers[SIGNATURE_HEADER]).toBeUndefined()
  })

  it('slow: the timeout is honoured; the error passes unless failOnError', async () => {
    const started = performance.now()
    const open = await run(check({ webhookURL: `${base}/slow`, timeout: 200 }))
    expect(performance.now() - started).toBeLessThan(1500)
    expect(open.result.checks[0]).toMatchObject({ verdict: true, error: 'timed out after 200 ms' })
    const closed = await run(check({ webhookURL: `${base}/slow`, timeout: 200, failOnError: true }))
    expect(closed.result).toMatchObject({ verdict: false, checks: [{ verdict: false, error: 'timed out after 200 ms' }] })
  })

  it('down: failOnError decides', async () => {
    const url = await deadUrl()
    expect((await run(check({ webhookURL: url }))).result.checks[0]).toMatchObject({ verdict: true, error: expect.stringMatching(/ECONNREFUSED|connect/) })
    expect((await run(check({ webhookURL: url, failOnError: true }))).result.verdict).toBe(false)
  })

  it('malformed answers (not JSON, wrong shape, 5xx) are errors, never verdicts', async () => {
    for (const path of ['/html', '/shape', '/500']) {
      const open = await run(check({ webhookURL: `${base}${path}` }))
      expect(open.result.checks[0], path).toMatchObject({ verdict: true, error: expect.any(String) })
      expect((await run(check({ webhookURL: `${base}${path}`, failOnError: true }))).result.verdict, path).toBe(false)
    }
  })

  it('goes through the SSRF-safe dispatcher: loopback is refused unless the gateway allows private networks', async () => {
    const blocked = await run(guardrail([{ id: 'default.webhook', parameters: { webhookURL: `${base}/pass`, failOnError: true }, isEnabled: true }], guarded))
    expect(blocked.result.checks[0]).toMatchObject({ verdict: false, error: expect.stringMatching(/may not reach/) })
  })
})

describe('partner checks', () => {
  const check = (parameters: Record<string, unknown>) => guardrail([{ id: 'panw-prisma-airs.intercept', parameters, isEnabled: true }])

  it('policyId is required; timeout defaults to 10000 ms', () => {
    expect(parametersOf('patronus.pii', { endpoint: `${base}/pass` })).toMatch(/policyId/)
    expect(parametersOf('patronus.pii', { policyId: 'p1', endpoint: `${base}/pass` })).toEqual({ policyId: 'p1', endpoint: `${base}/pass`, timeout: 10_000, failOnError: false })
  })

  it('sends the policy id and text on both hooks, with the API key as bearer', async () => {
    seen.length = 0
    for (const hook of ['beforeRequestHook', 'afterRequestHook'] as const) {
      expect((await run(check({ policyId: 'pol-7', endpoint: `${base}/fail`, apiKey: 'partner-key' }), hook)).result).toMatchObject({ verdict: false, hook })
      expect(JSON.parse(seen.at(-1)!.body)).toEqual({ policy_id: 'pol-7', check: 'panw-prisma-airs.intercept', hook, text: 'hello there', model: 'm' })
      expect(seen.at(-1)!.headers.authorization).toBe('Bearer partner-key')
    }
  })

  it('slow, down and malformed: timeout and failOnError honoured', async () => {
    expect((await run(check({ policyId: 'p', endpoint: `${base}/slow`, timeout: 150 }))).result.checks[0]).toMatchObject({ verdict: true, error: 'timed out after 150 ms' })
    expect((await run(check({ policyId: 'p', endpoint: await deadUrl(), failOnError: true }))).result.verdict).toBe(false)
    expect((await run(check({ policyId: 'p', endpoint: `${base}/shape`, failOnError: true }))).result.checks[0]).toMatchObject({ verdict: false, error: expect.stringMatching(/verdict/) })
  })
})

describe('default.inlineImageUrls', () => {
  const check = (parameters: Record<string, unknown>) => guardrail([{ id: 'default.inlineImageUrls', parameters, isEnabled: true }])
  const withImage = (url: string) => ({ ...input, body: { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url, detail: 'low' } }] }] } })
  const runOn = (g: ReturnType<typeof guardrail>, url: string, providerKind: string | null = null) => runGuardrail(g, 'beforeRequestHook', { ...withImage(url), providerKind }, new AbortController().signal)

  it('defaults: maxSizeBytes 20 MiB, timeoutMs 30000, failOnError false', () => {
    expect(parametersOf('default.inlineImageUrls', {})).toEqual({ maxSizeBytes: 20_971_520, timeoutMs: 30_000, failOnError: false })
  })

  it('fetches the image and puts it inline as base64, keeping the part\'s other fields', async () => {
    const ran = await runOn(check({}), `${base}/image.png`)
    expect(ran.result.verdict).toBe(true)
    const content = (ran.body!.messages as Array<{ content: Array<Record<string, unknown>> }>)[0]!.content
    expect(content[1]).toEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}`, detail: 'low' } })
  })

  it('only for the listed providers, when the provider is known', async () => {
    const ran = await runOn(check({ providers: ['bedrock'] }), `${base}/image.png`, 'openai')
    expect(JSON.stringify(ran.body)).toContain(`${base}/image.png`)
    expect(JSON.stringify((await runOn(check({ providers: ['bedrock'] }), `${base}/image.png`, 'bedrock')).body)).toContain('data:image/png;base64,')
  })

  it('too large, not an image, too slow or unreachable: the URL stays and the check passes, unless failOnError', async () => {
    const tooBig = await runOn(check({ maxSizeBytes: 1024 }), `${base}/big.png`)
    expect(tooBig.result.checks[0]).toMatchObject({ verdict: true, error: expect.stringMatching(/larger than 1024 bytes/) })
    expect(JSON.stringify(tooBig.body)).toContain(`${base}/big.png`)
    expect((await runOn(check({ failOnError: true }), `${base}/page`)).result.checks[0]).toMatchObject({ verdict: false, error: expect.stringMatching(/not an image/) })
    expect((await runOn(check({ timeoutMs: 150, failOnError: true }), `${base}/slow`)).result.checks[0]).toMatchObject({ verdict: false, error: 'timed out after 150 ms' })
    expect((await runOn(check({ failOnError: true }), await deadUrl())).result.verdict).toBe(false)
  })
})
