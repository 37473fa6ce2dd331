/**
 * Test harness for the admin API: an in-memory PGlite store with the bootstrap owner key, the
 * app with a manual clock, and helpers to call it with `inject` and to mint principals of every
 * kind (owner, admin, workspace manager, workspace member; admin and workspace keys).
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { ensureBootstrapAdminKey } from '../identity/bootstrap.ts'
import { storeOnDatabase, type Store, type WorkspaceRecord } from '../store/index.ts'
import { openPostgresDatabase } from '../store/postgres-driver.ts'
import { createTestDatabase, openMigratedPglite } from '../store/testing.ts'
import type { SqlDatabase } from '../store/sql.ts'
import { TEST_ENCRYPTION_KEY } from '../store/testing.ts'
import { buildAdminApp, type AdminAppDeps } from './app.ts'

export const TEST_PEPPER = 'test-pepper-0123456789abcdefghijklmnopqrstuvwxyz'

export class ManualClock {
  now: Date

  constructor(start = '2030-01-01T00:00:00.000Z') {
    this.now = new Date(start)
  }

  readonly read = (): Date => new Date(this.now)

  advance(ms: number): void {
    this.now = new Date(this.now.getTime() + ms)
  }
}

export interface Harness {
  store: Store
  /** The raw database under the store, for tests that inspect every stored row. */
  db: SqlDatabase
  app: FastifyInstance
  clock: ManualClock
  orgId: string
  ownerKey: string
  ownerId: string
  call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, key: string | null, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>
  /** Creates a workspace as the owner. */
  workspace(name: string): Promise<WorkspaceRecord>
  /** Creates a user (as the owner), optionally a member of `workspaceId` with `role`. */
  user(email: string, role: 'admin' | 'member', workspace?: { id: string; role: 'admin' | 'manager' | 'member' }): Promise<string>
  /** Creates a key as `creatorKey` (default the owner) and returns the raw key. */
  key(path: string, body: Record<string, unknown>, creatorKey?: string): Promise<string>
  close(): Promise<void>
}

/**
 * The admin API suites run on in-memory PGlite for speed; GATEHOUSE_TEST_BACKEND=postgres runs them
 * on a fresh PostgreSQL database instead (the store contract suite covers both on every run).
 */
async function openHarnessDatabase(): Promise<{ db: SqlDatabase; drop: () => Promise<void> }> {
  if (process.env.GATEHOUSE_TEST_BACKEND !== 'postgres') return { db: await openMigratedPglite(), drop: async () => {} }
  const { url, drop } = await createTestDatabase()
  return { db: await openPostgresDatabase({ url, maxConnections: 4 }), drop }
}

export async function createHarness(extra: Partial<AdminAppDeps> = {}): Promise<Harness> {
  const { db, drop } = await openHarnessDatabase()
  const store = await storeOnDatabase(db, { encryptionKey: TEST_ENCRYPTION_KEY })
  const clock = new ManualClock()
  const bootstrap = await ensureBootstrapAdminKey(store, TEST_PEPPER)
  const org = (await store.organizations.first())!
  const owner = (await store.users.list(org.id, { role: 'owner' }, 0, 1)).data[0]!
  const app = buildAdminApp({ store, pepper: TEST_PEPPER, clock: clock.read, ...extra })
  await app.ready()
  const harness: Harness = {
    store,
    db,
    app,
    clock,
    orgId: org.id,
    ownerKey: bootstrap.rawKey!,
    ownerId: owner.id,
    call(method, url, key, body, headers = {}) {
      return app.inject({
        method,
        url,
        headers: { ...(key ? { 'x-gateway-api-key': key } : {}), ...headers },
        ...(body === undefined ? {} : { payload: body as object }),
      })
    },
    async workspace(name) {
      const response = await harness.call('POST', '/v1/admin/workspaces', harness.ownerKey, { name })
      if (response.statusCode !== 200) throw new Error(`workspace create failed: ${response.body}`)
      return (await store.workspaces.get(org.id, response.json<{ id: string }>().id))!
    },
    async user(email, role, workspace) {
      const response = await harness.call('POST', '/v1/admin/users', harness.ownerKey, { email, role, ...(workspace ? { workspaces: [workspace] } : {}) })
      if (response.statusCode !== 200) throw new Error(`user create failed: ${response.body}`)
      return response.json<{ id: string }>().id
    },
    async key(path, body, creatorKey) {
      const response = await harness.call('POST', `/v1/api-keys/${path}`, creatorKey ?? harness.ownerKey, body)
      if (response.statusCode !== 200) throw new Error(`key create failed: ${response.statusCode} ${response.body}`)
      return response.json<{ key: string }>().key
    },
    async close() {
      await app.close()
      // A test may already have closed the store to simulate an outage.
      await store.close().catch(() => {})
      await drop()
    },
  }
  return harness
}
