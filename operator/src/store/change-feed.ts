/**
 * The change feed: every committed write that affects what gateways serve (keys, workspaces,
 * providers, configs, organisation settings) becomes a `StoreChange`. Listeners in this process
 * hear it right after commit; on PostgreSQL it is also sent with NOTIFY so the other control-plane
 * replicas hear each other's writes. `revision` counts every change seen (local or remote), so a
 * compiler can tell whether its last snapshot is stale.
 */
import { randomUUID } from 'node:crypto'
import type { SqlDatabase } from './sql.ts'

export type ChangeResource =
  | 'api_key' | 'workspace' | 'provider' | 'integration' | 'config' | 'organization' | 'member' | 'user'
  | 'secret_reference' | 'guardrail' | 'deployment' | 'policy' | 'model_price' | 'prompt' | 'mcp_integration' | 'mcp_server'
  | 'agent_integration' | 'agent_server'
export type ChangeAction = 'created' | 'updated' | 'deleted' | 'rotated' | 'revoked' | 'expired'

export interface StoreChange {
  resource: ChangeResource
  action: ChangeAction
  id: string
}

export interface ChangeEvent extends StoreChange {
  revision: number
  /** true when another control-plane replica made the change (PostgreSQL NOTIFY). */
  remote: boolean
}

export type ChangeListener = (event: ChangeEvent) => void

export const CHANGE_CHANNEL = 'gatehouse_changes'

/** "Something may have changed": consumers rebuild everything they derive from the store. */
export const RESYNC: StoreChange = { resource: 'organization', action: 'updated', id: '*' }

export class ChangeFeed {
  readonly #db: SqlDatabase
  readonly #origin = randomUUID()
  readonly #listeners = new Set<ChangeListener>()
  #revision = 0
  #unlisten: (() => Promise<void>) | null = null

  constructor(db: SqlDatabase) {
    this.#db = db
  }

  get revision(): number {
    return this.#revision
  }

  /** Subscribes; returns the unsubscribe function. */
  onChange(listener: ChangeListener): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  async start(): Promise<void> {
    this.#unlisten = await this.#db.listen(
      CHANGE_CHANNEL,
      (payload) => this.#onRemote(payload),
      // Peers' changes may have been missed while disconnected: announce a coarse change so
      // consumers (the snapshot compiler) rebuild from the database.
      () => this.#dispatch(RESYNC, true),
    )
  }

  async stop(): Promise<void> {
    await this.#unlisten?.()
    this.#unlisten = null
  }

  /** Called after commit with the changes of one transaction. */
  async publish(changes: readonly StoreChange[]): Promise<void> {
    for (const change of changes) this.#dispatch(change, false)
    if (this.#db.kind !== 'postgres' || changes.length === 0) return
    // NOTIFY payloads are capped at 8000 bytes; a batch that would not fit is sent as one
    // coarse "something changed" so peers still recompile.
    const payload = JSON.stringify({ origin: this.#origin, changes })
    const body = payload.length < 7900 ? payload : JSON.stringify({ origin: this.#origin, changes: [RESYNC] })
    // The write is already committed; a failed NOTIFY only means peers learn of it with their
    // next change or resync, so it must not fail the caller's request.
    await this.#db.notify(CHANGE_CHANNEL, body).catch(() => {})
  }

  #onRemote(payload: string): void {
    let message: { origin?: unknown; changes?: unknown }
    try {
      message = JSON.parse(payload) as typeof message
    } catch {
      return
    }
    if (message.origin === this.#origin || !Array.isArray(message.changes)) return
    for (const change of message.changes as StoreChange[]) this.#dispatch(change, true)
  }

  #dispatch(change: StoreChange, remote: boolean): void {
    this.#revision += 1
    const event: ChangeEvent = { ...change, revision: this.#revision, remote }
    for (const listener of this.#listeners) {
      try {
        listener(event)
      } catch {
        // A failing listener must not stop the others nor the writer that published.
      }
    }
  }
}
