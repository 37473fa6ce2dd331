/**
 * Key rotation for credentials at rest. Rotating GATEHOUSE_ENCRYPTION_KEY is: put the new key
 * first (it seals from then on; the old one still opens), re-seal, then drop the old key. This
 * re-seals every sealed column whose envelope names a key other than the primary, row by row with
 * a compare-and-set so a concurrent admin write of the same row is never overwritten.
 */
import { envelopeKeyId, type Keyring } from '../../crypto/envelope.ts'
import type { SqlExecutor } from '../sql.ts'

/** Sealed columns and the associated-data context their envelopes were sealed with. */
const SEALED_TABLES = [
  { table: 'providers', context: 'provider' },
  { table: 'integrations', context: 'integration' },
  { table: 'mcp_integrations', context: 'mcp_integration' },
  { table: 'agent_integrations', context: 'agent_integration' },
] as const

export interface ResealReport {
  primaryKeyId: string
  /** Rows re-sealed under the primary key, per table. */
  resealed: Record<string, number>
  /** Rows still sealed under another key, per table (before re-sealing, when counting only). */
  stale: Record<string, number>
}

export class CredentialResealer {
  readonly #db: SqlExecutor
  readonly #keyring: Keyring | null

  constructor(db: SqlExecutor, keyring: Keyring | null) {
    this.#db = db
    this.#keyring = keyring
  }

  #requireKeyring(): Keyring {
    if (!this.#keyring) throw new Error('re-sealing credentials needs GATEHOUSE_ENCRYPTION_KEY')
    return this.#keyring
  }

  async #staleRows(table: string): Promise<Array<{ id: string; sealed: string }>> {
    const keyring = this.#requireKeyring()
    // The table name comes from SEALED_TABLES above, never from a request.
    const rows = await this.#db.query<{ id: string; credentials_encrypted: string }>(`SELECT id, credentials_encrypted FROM ${table} WHERE credentials_encrypted IS NOT NULL`)
    return rows.filter((row) => envelopeKeyId(row.credentials_encrypted) !== keyring.primaryKeyId).map((row) => ({ id: row.id, sealed: row.credentials_encrypted }))
  }

  /** Counts rows still sealed under a key other than the primary. */
  async status(): Promise<ResealReport> {
    const keyring = this.#requireKeyring()
    const stale: Record<string, number> = {}
    for (const { table } of SEALED_TABLES) stale[table] = (await this.#staleRows(table)).length
    return { primaryKeyId: keyring.primaryKeyId, resealed: {}, stale }
  }

  /** Re-seals every stale row under the primary key. Idempotent. */
  async reseal(): Promise<ResealReport> {
    const keyring = this.#requireKeyring()
    const resealed: Record<string, number> = {}
    const stale: Record<string, number> = {}
    for (const { table, context } of SEALED_TABLES) {
      let count = 0
      const rows = await this.#staleRows(table)
      for (const row of rows) {
        const plaintext = keyring.open(row.sealed, `${context}:${row.id}`)
        const updated = await this.#db.query(
          `UPDATE ${table} SET credentials_encrypted = $1 WHERE id = $2 AND credentials_encrypted = $3 RETURNING id`,
          [keyring.seal(plaintext, `${context}:${row.id}`), row.id, row.sealed],
        )
        count += updated.length
      }
      resealed[table] = count
      stale[table] = rows.length - count
    }
    return { primaryKeyId: keyring.primaryKeyId, resealed, stale }
  }
}
