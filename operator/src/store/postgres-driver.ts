/** Cluster backend: PostgreSQL through a `pg` pool, plus one dedicated connection for LISTEN. */
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import type { SqlDatabase, SqlExecutor } from './sql.ts'
import { rethrow } from './errors.ts'

type Queryable = Pick<pg.PoolClient, 'query'>

const MIN_RECONNECT_MS = 500
const MAX_RECONNECT_MS = 30_000

function executorOf(target: Queryable): SqlExecutor {
  return {
    async query<Row>(text: string, params: readonly unknown[] = []) {
      const result = await target.query(text, params as unknown[]).catch(rethrow)
      return result.rows as Row[]
    },
    async script(text: string) {
      // No parameters: pg uses the simple protocol, which accepts several statements.
      await target.query(text).catch(rethrow)
    },
  }
}

/** A transaction's executor: its one connection also streams COPY data. */
function clientExecutorOf(client: pg.PoolClient): SqlExecutor {
  return {
    ...executorOf(client),
    async copyIn(text: string, data: Iterable<string>) {
      await pipeline(Readable.from(data), client.query(copyFrom(text))).catch(rethrow)
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
  let closed = false
  let reconnectDelayMs = MIN_RECONNECT_MS
  const handlers = new Map<string, Set<(payload: string) => void>>()
  const gapHandlers = new Set<() => void>()

  async function connectListener(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: options.url })
    client.on('error', () => {})
    client.on('notification', (message) => {
      for (const handler of handlers.get(message.channel) ?? []) handler(message.payload ?? '')
    })
    client.on('end', () => {
      if (listener === client) listener = null
      if (!closed) scheduleReconnect()
    })
    await client.connect()
    for (const channel of handlers.keys()) await client.query(`LISTEN ${channel}`)
    return client
  }

  // A lost LISTEN connection is re-established with backoff; listeners are told about the gap.
  function scheduleReconnect(): void {
    const timer = setTimeout(() => {
      connectListener().then((client) => {
        if (closed) return void client.end()
        listener = client
        reconnectDelayMs = MIN_RECONNECT_MS
        for (const onGap of gapHandlers) onGap()
      }, () => {
        reconnectDelayMs = Math.min(reconnectDelayMs * 2, MAX_RECONNECT_MS)
        if (!closed) scheduleReconnect()
      })
    }, reconnectDelayMs)
    timer.unref()
  }

  async function listenerClient(): Promise<pg.Client> {
    listener ??= await connectListener()
    return listener
  }

  return {
    kind: 'postgres',
    query: base.query,
    script: base.script,
    async transaction(fn) {
      const client = await pool.connect().catch(rethrow)
      try {
        // BEGIN and COMMIT fail like any statement when the server goes away mid-request.
        await client.query('BEGIN').catch(rethrow)
        const result = await fn(clientExecutorOf(client))
        await client.query('COMMIT').catch(rethrow)
        return result
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      } finally {
        client.release()
      }
    },
    async listen(channel, onMessage, onGap) {
      assertChannel(channel)
      if (onGap) gapHandlers.add(onGap)
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
        if (onGap) gapHandlers.delete(onGap)
      }
    },
    async notify(channel, payload) {
      assertChannel(channel)
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload])
    },
    async close() {
      closed = true
      await listener?.end().catch(() => {})
      await pool.end()
    },
  }
}

/** LISTEN takes an identifier, not a parameter: only our own fixed channel names are allowed. */
function assertChannel(channel: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`invalid channel name ${channel}`)
}
