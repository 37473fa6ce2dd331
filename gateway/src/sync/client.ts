/**
 * A gateway's subscription to the control plane: keeps one stream open, applies each snapshot
 * through the holder (which validates fully and keeps the previous one on any problem), ACKs or
 * NACKs by generation, persists what it applied, and reconnects with capped exponential backoff
 * and jitter when the stream drops. While disconnected the gateway keeps serving its last good
 * snapshot.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { request } from '../core/undici.ts'
import type { Dispatcher } from 'undici'
import type { RuntimeHolder } from '../runtime/holder.ts'
import type { Keyring } from '../snapshot/envelope.ts'
import { decodeSse } from '../upstream/framing/sse.ts'
import { persistSnapshot } from './persisted.ts'
import { SNAPSHOT_EVENT, SNAPSHOT_SEAL_CONTEXT, SYNC_ACK_PATH, SYNC_STREAM_PATH, type SnapshotAck } from '../snapshot/sync-protocol.ts'

export interface SyncLogger {
  info(object: object, message: string): void
  warn(object: object, message: string): void
  error(object: object, message: string): void
}

/**
 * One connection's request and how to open what arrives on it. The default is the central
 * gateway's (shared token, shared keyring); sidecars bring their own (sidecar/channel.ts).
 */
export interface SyncConnection {
  url: string
  headers: Record<string, string>
  /** Checks the response's headers and returns the keyring its snapshots are sealed with. */
  accept(headers: Record<string, string | string[] | undefined>): Keyring
  /** Events other than snapshots (the sidecar's settings), with the keyring `accept` returned. */
  onEvent?(event: string, data: string, opener: Keyring): Promise<void> | void
}

export interface SnapshotSyncOptions {
  controlPlaneUrl: string
  token: string
  gatewayId: string
  /** The deployment this gateway serves (its slug): the control plane sends that deployment's snapshot. */
  deployment?: string
  holder: RuntimeHolder
  keyring: Keyring
  /** Where the last good snapshot is kept; null disables persistence. */
  persistPath: string | null
  logger: SyncLogger
  initialBackoffMs?: number
  maxBackoffMs?: number
  /** Replaces the token/keyring connection (sidecars: no gateway token, no shared keyring). */
  connect?: (after: number) => Promise<SyncConnection>
  /** Carries the stream (a sidecar's: with the control plane's CA); the global one when absent. */
  dispatcher?: Dispatcher
  /** Replaces the ACK request of the gateway token (sidecars ACK with their own credential). */
  acknowledge?: (ack: SnapshotAck) => Promise<void>
}

export interface SnapshotSync {
  /** Resolves once a snapshot from the control plane has been applied (or the sync stopped). */
  readonly firstApplied: Promise<void>
  readonly connected: boolean
  stop(): Promise<void>
}

export function startSnapshotSync(options: SnapshotSyncOptions): SnapshotSync {
  const { holder, keyring, logger } = options
  const base = options.controlPlaneUrl.replace(/\/$/, '')
  const authorization = `Bearer ${options.token}`
  const initialBackoffMs = options.initialBackoffMs ?? 200
  const maxBackoffMs = options.maxBackoffMs ?? 10_000
  let stopped = false
  const stopping = new AbortController()
  let connected = false
  let current: AbortController | null = null
  let markFirst: () => void = () => undefined
  const firstApplied = new Promise<void>((resolve) => (markFirst = resolve))

  const send = options.acknowledge ?? (async (ack: SnapshotAck): Promise<void> => {
    const response = await request(`${base}${SYNC_ACK_PATH}`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify(ack),
    })
    await response.body.dump()
  })
  const acknowledge = async (ack: SnapshotAck): Promise<void> => {
    try {
      await send(ack)
    } catch (error) {
      logger.warn({ err: error, generation: ack.generation }, 'could not report the snapshot result to the control plane')
    }
  }

  const handle = async (sealed: unknown, opener: Keyring): Promise<void> => {
    let snapshot: unknown
    try {
      snapshot = JSON.parse(opener.open(String(sealed), SNAPSHOT_SEAL_CONTEXT))
    } catch (error) {
      logger.error({ err: error }, 'a snapshot from the control plane could not be opened')
      const generation = -1
      await acknowledge({ gateway_id: options.gatewayId, generation, status: 'nack', problems: [{ path: '(envelope)', message: 'could not be opened with this keyring' }] })
      return
    }
    const result = holder.apply(snapshot)
    const generation = result.generation ?? -1
    if (!result.ok) {
      logger.error({ generation, problems: result.problems }, 'snapshot rejected; keeping the previous one')
      await acknowledge({ gateway_id: options.gatewayId, generation, status: 'nack', problems: result.problems })
      return
    }
    markFirst()
    await acknowledge({ gateway_id: options.gatewayId, generation, status: 'ack' })
    if (options.persistPath !== null && !result.unchanged) {
      await persistSnapshot(options.persistPath, keyring, snapshot).catch((error: unknown) => logger.warn({ err: error }, 'could not persist the snapshot'))
    }
  }

  const connectOnce = async (): Promise<void> => {
    current = new AbortController()
    const after = holder.current?.generation ?? -1
    const connection: SyncConnection = options.connect
      ? await options.connect(after)
      : {
          url: `${base}${SYNC_STREAM_PATH}?gateway_id=${encodeURIComponent(options.gatewayId)}&after=${after}${options.deployment ? `&deployment=${encodeURIComponent(options.deployment)}` : ''}`,
          headers: { authorization },
          accept: () => keyring,
        }
    const response = await request(connection.url, {
      headers: { ...connection.headers, accept: 'text/event-stream' },
      signal: current.signal,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      // The stream is long-lived; heartbeats keep it below this idle bound.
      bodyTimeout: 3 * 10_000,
    })
    if (response.statusCode !== 200) {
      await response.body.dump()
      throw new Error(`control plane answered HTTP ${response.statusCode}`)
    }
    const opener = connection.accept(response.headers)
    connected = true
    logger.info({ after }, 'subscribed to the control plane')
    for await (const event of decodeSse(response.body)) {
      if (event.event === SNAPSHOT_EVENT) await handle(event.data, opener)
      else if (event.event !== undefined) await connection.onEvent?.(event.event, String(event.data), opener)
    }
  }

  const loop = async (): Promise<void> => {
    let backoffMs = initialBackoffMs
    while (!stopped) {
      const startedAt = Date.now()
      try {
        await connectOnce()
      } catch (error) {
        if (!stopped) logger.warn({ err: (error as Error).message }, 'snapshot stream lost; serving the last good snapshot')
      }
      connected = false
      if (stopped) break
      // A stream that stayed up a while was healthy: start the backoff over.
      if (Date.now() - startedAt > maxBackoffMs) backoffMs = initialBackoffMs
      const delayMs = backoffMs / 2 + Math.random() * (backoffMs / 2)
      await sleep(delayMs, undefined, { signal: stopping.signal }).catch(() => undefined)
      backoffMs = Math.min(maxBackoffMs, backoffMs * 2)
    }
  }
  const running = loop()

  return {
    firstApplied,
    get connected() {
      return connected
    },
    async stop() {
      stopped = true
      stopping.abort()
      current?.abort()
      markFirst()
      await running
    },
  }
}
