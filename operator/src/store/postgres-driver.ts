/** Cluster backend: PostgreSQL through a `pg` pool, plus one dedicated connection for LISTEN. */
import pg from 'pg'
import type { SqlDatabase, SqlExecutor } from './sql.ts'

type Queryable = Pick<pg.PoolClient, 'query'>

function executorOf(target: Queryable): SqlExecutor {
  return {
    async query<Row>(text: string, params: readonly unknown[] = []) {
      const result = await target.query(text, params as unknown[])
      return result.rows as Row[]
    },
    async script(text: string) {
      // No parameters: pg uses the simple protocol, which accepts several statements.
      await target.query(text)
    },
  }
}

export interface PostgresOptions {
  url: string
  /** Pool size; the admin plane is low-traffic, the default keeps connection use modest. */
  maxConnections?: number
}

export async function openPostgresDatabase(options: PostgresOptions): Promise<SqlDatabase> {
  const pool = new pg.Pool({ connectionString: options.url, max: options.maxConnections ?? 10 })
  // An idle client failing (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => {})
  // Fail at open, not at the first request, when the database is unreachable.
  const probe = await pool.connect()
  probe.release()
  const base = executorOf(pool)
  let listener: pg.Client | null = null
  const handlers = new Map<string, Set<(payload: string) => void>>()

  async function listenerClient(): Promise<pg.Client> {
    if (listener) return listener
    const client = new pg.Client({ connectionString: options.url })
    client.on('error', () => {})
    client.on('notification', (message) => {
      for (const handler of handlers.get(message.channel) ?? []) handler(message.payload ?? '')
    })
    await client.connect()
    listener = client
    return client
  }

  return {
    kind: 'postgres',
    query: base.query,
    script: base.script,
    async transaction(fn) {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        const result = await fn(executorOf(client))
        await client.query('COMMIT')
        return result
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      } finally {
        client.release()
      }
    },
    async listen(channel, onMessage) {
      assertChannel(channel)
      const client = await listenerClient()
      let set = handlers.get(channel)
      if (!set) {
        set = new Set()
        handlers.set(channel, set)
        await client.query(`LISTEN ${channel}`)
      }
      set.add(onMessage)
      return async () => {
        set.delete(onMessage)
      }
    },
    async notify(channel, payload) {
      assertChannel(channel)
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload])
    },
    async close() {
      await listener?.end().catch(() => {})
      await pool.end()
    },
  }
}

/** LISTEN takes an identifier, not a parameter: only our own fixed channel names are allowed. */
function assertChannel(channel: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`invalid channel name ${channel}`)
}
