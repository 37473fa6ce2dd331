/**
 * A real PostgreSQL outage under a running admin API: the database dropped (its connections
 * terminated, new ones refused with "database does not exist") and the server unreachable (a
 * loopback TCP relay in front of PostgreSQL stopped). Every admin route answers 503 with
 * Retry-After in the error envelope, never 500 and never 401.
 */
import { createServer, connect, type Server, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { ensureBootstrapAdminKey } from '../identity/bootstrap.ts'
import { openStore, type Store } from '../store/index.ts'
import { createTestDatabase, TEST_ENCRYPTION_KEY } from '../store/testing.ts'
import { buildAdminApp } from './app.ts'
import { TEST_PEPPER } from './testing.ts'

const PG = new URL(process.env.GATEHOUSE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres')

interface Running {
  app: FastifyInstance
  store: Store
  key: string
  cleanup: Array<() => Promise<unknown>>
}

let running: Running | null = null

afterEach(async () => {
  for (const step of running?.cleanup ?? []) await step().catch(() => {})
  running = null
})

async function start(url: string, drop: () => Promise<void>, extra: Array<() => Promise<unknown>> = []): Promise<Running> {
  const store = await openStore({ kind: 'postgres', url, encryptionKey: TEST_ENCRYPTION_KEY, maxConnections: 2 })
  const key = (await ensureBootstrapAdminKey(store, TEST_PEPPER)).rawKey!
  const app = buildAdminApp({ store, pepper: TEST_PEPPER })
  await app.ready()
  running = { app, store, key, cleanup: [() => app.close(), () => store.close(), ...extra, drop] }
  return running
}

/** The reads and writes a client makes, each expected to answer 503 + Retry-After during the outage. */
async function expectUnavailable(app: FastifyInstance, key: string): Promise<void> {
  const calls: Array<{ method: 'GET' | 'POST' | 'PUT' | 'DELETE'; url: string; payload?: object }> = [
    { method: 'GET', url: '/v1/admin/workspaces' },
    { method: 'POST', url: '/v1/admin/workspaces', payload: { name: 'During outage' } },
    { method: 'POST', url: '/v1/providers', payload: { name: 'p', provider: 'openai', key: 'sk-outage-123456789' } },
    { method: 'GET', url: '/v1/api-keys' },
  ]
  for (const call of calls) {
    const response = await app.inject({ ...call, headers: { 'x-gateway-api-key': key } })
    expect(response.statusCode, `${call.method} ${call.url}: ${response.body}`).toBe(503)
    expect(response.headers['retry-after']).toMatch(/^\d+$/)
    expect(response.json().error).toMatchObject({ code: 'dependency_unavailable', type: 'service_unavailable_error' })
  }
}

/** A loopback TCP relay to PostgreSQL that can be stopped, cutting every connection through it. */
async function relay(): Promise<{ port: number; stop: () => Promise<void> }> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(Number(PG.port || 5432), PG.hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => sockets.delete(socket))
    }
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return {
    port,
    stop: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    }),
  }
}

describe('admin API during a PostgreSQL outage', () => {
  it('answers 503 with Retry-After when the database is dropped under it', async () => {
    const { url, drop } = await createTestDatabase()
    const { app, key } = await start(url, drop)
    expect((await app.inject({ method: 'GET', url: '/v1/admin/workspaces', headers: { 'x-gateway-api-key': key } })).statusCode).toBe(200)
    // Terminates the pool's connections (57P01) and makes new ones fail (3D000).
    await drop()
    await expectUnavailable(app, key)
  })

  it('answers 503 with Retry-After when PostgreSQL stops accepting connections', async () => {
    const { url, drop } = await createTestDatabase()
    const cut = await relay()
    const through = new URL(url)
    through.hostname = '127.0.0.1'
    through.port = String(cut.port)
    const { app, key } = await start(through.toString(), drop, [cut.stop])
    expect((await app.inject({ method: 'GET', url: '/v1/admin/workspaces', headers: { 'x-gateway-api-key': key } })).statusCode).toBe(200)
    await cut.stop()
    await expectUnavailable(app, key)
  })
})
