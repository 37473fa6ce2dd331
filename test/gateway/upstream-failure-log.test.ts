/**
 * A provider that cannot be reached leaves one log line saying which provider, which host and why
 * (`describeUpstreamFailure`, called from pipeline/stages/dispatch.ts), with the trace id the
 * client got, and never the credential, the path or the query.
 *
 * Break tried: not calling `describeUnreached` in the direct-route branch of `dispatchTerminal` ->
 * the lines had no `upstream` field and both tests failed.
 */
import { createServer } from 'node:net'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts'

const SECRET = 'sk-upstream-secret-never-logged-0123456789'
const logs: Array<Record<string, unknown>> = []
let gateway: TestGateway
let closedPort: number

/** A loopback port nothing listens on. */
async function unusedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

function capture(): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
}

beforeAll(async () => {
  closedPort = await unusedPort()
  gateway = await startTestGateway(
    [
      { slug: 'gone', kind: 'openai', baseUrl: `http://127.0.0.1:${closedPort}/v1`, credentials: { apiKey: SECRET } },
      // Loopback is not public: a provider without private networks is refused before any connect.
      { slug: 'fenced', kind: 'openai', baseUrl: `http://127.0.0.1:${closedPort}/v1`, credentials: { apiKey: SECRET }, network: 'public' },
    ],
    { logger: pino({ level: 'info' }, capture()) },
  )
})

afterAll(async () => {
  await gateway?.close()
})

function lineFor(traceId: string): Record<string, unknown> | undefined {
  return logs.find((line) => (line.upstream as { traceId?: unknown } | undefined)?.traceId === traceId)
}

describe('the log line of a provider that could not be reached', () => {
  it('names the provider, the host, the cause and the trace id, and no secret', async () => {
    const raw = await fetch(`${gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'content-type': 'application/json', 'x-gateway-provider': '@gone', 'x-gateway-trace-id': 'trace-refused-1' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(raw.status).toBe(503)
    const line = lineFor('trace-refused-1')
    expect(line?.upstream).toEqual({ provider: 'gone', upstreamHost: `127.0.0.1:${closedPort}`, cause: 'connection_refused', code: 'ECONNREFUSED', traceId: 'trace-refused-1' })
    expect(line?.code).toBe('upstream_unavailable')
    expect(JSON.stringify(logs)).not.toContain(SECRET)
    // The upstream URL's path stays out of the failure line (the access log names the client's own path).
    expect(JSON.stringify(line)).not.toContain('/chat/completions')
  })

  it('says the address was blocked when the provider may not reach private networks', async () => {
    const raw = await fetch(`${gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.workspaceKey}`, 'content-type': 'application/json', 'x-gateway-provider': '@fenced', 'x-gateway-trace-id': 'trace-blocked-1' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(raw.status).toBe(403)
    expect(lineFor('trace-blocked-1')?.upstream).toMatchObject({ provider: 'fenced', cause: 'blocked_address', traceId: 'trace-blocked-1' })
    expect(JSON.stringify(logs)).not.toContain(SECRET)
  })
})
