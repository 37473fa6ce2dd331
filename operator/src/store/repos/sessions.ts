/**
 * SSO sign-in state and the sessions it issues.
 *
 * - `sso_logins`: one row per sign-in in progress, keyed by a hash of its `state`, holding the
 *   nonce and PKCE verifier until the callback consumes it (once: `take` deletes it).
 * - `sessions`: admin API sessions. The token is opaque and stored as a peppered HMAC; the row
 *   carries when the session started, so the organisation's max_session_ttl is applied as it is
 *   at each request, and a revoked or deleted row ends the session at once.
 */
import type { SqlExecutor } from '../sql.ts'
import { isoRequired, newId } from '../rows.ts'
import { table, text, timestamp, type RecordOf } from '../table.ts'

export interface SsoLogin {
  organizationId: string
  nonce: string
  codeVerifier: string
  expiresAt: string
}

/** The `sessions` table; the token's hash is written, never read back into a record. */
export const sessionTable = table('sessions', {
  id: text().generated(newId),
  organizationId: text().insert(),
  userId: text().insert(),
  tokenHash: text().insert().hidden(),
  startedAt: timestamp().insert(),
  revokedAt: timestamp().nullable(),
})

export type SessionRecord = RecordOf<typeof sessionTable.fields>

export class SessionRepository {
  readonly #db: SqlExecutor

  constructor(db: SqlExecutor) {
    this.#db = db
  }

  async saveLogin(stateHash: string, login: SsoLogin): Promise<void> {
    await this.#db.query(
      'INSERT INTO sso_logins (state_hash, organization_id, nonce, code_verifier, expires_at) VALUES ($1, $2, $3, $4, $5)',
      [stateHash, login.organizationId, login.nonce, login.codeVerifier, login.expiresAt],
    )
  }

  /** The login with this state, deleted as it is read (a state is good for one callback). */
  async takeLogin(stateHash: string, now: Date): Promise<SsoLogin | null> {
    const rows = await this.#db.query<{ organization_id: string; nonce: string; code_verifier: string; expires_at: Date }>(
      'DELETE FROM sso_logins WHERE state_hash = $1 RETURNING organization_id, nonce, code_verifier, expires_at',
      [stateHash],
    )
    const row = rows[0]
    if (!row || new Date(row.expires_at).getTime() <= now.getTime()) return null
    return { organizationId: row.organization_id, nonce: row.nonce, codeVerifier: row.code_verifier, expiresAt: isoRequired(row.expires_at) }
  }

  /** Drops logins that were never completed. */
  async purgeLogins(now: Date): Promise<number> {
    const rows = await this.#db.query('DELETE FROM sso_logins WHERE expires_at <= $1 RETURNING state_hash', [now.toISOString()])
    return rows.length
  }

  async create(input: { organizationId: string; userId: string; tokenHash: string; startedAt: Date }): Promise<SessionRecord> {
    return sessionTable.create(this.#db, { ...input, startedAt: input.startedAt.toISOString() })
  }

  async findByHash(tokenHash: string): Promise<SessionRecord | null> {
    return sessionTable.row(this.#db, 'WHERE token_hash = $1', [tokenHash])
  }

  /** Ends every open session of a user (deactivation, sign-out everywhere). */
  async revokeForUser(userId: string, now: Date): Promise<number> {
    const rows = await this.#db.query('UPDATE sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL RETURNING id', [userId, now.toISOString()])
    return rows.length
  }

  /** Deletes sessions that can never be accepted again: ended ones, and those started before `startedBefore`. */
  async purge(organizationId: string, startedBefore: Date): Promise<number> {
    const rows = await this.#db.query(
      'DELETE FROM sessions WHERE organization_id = $1 AND (revoked_at IS NOT NULL OR started_at < $2) RETURNING id',
      [organizationId, startedBefore.toISOString()],
    )
    return rows.length
  }

  async revoke(id: string, now: Date): Promise<boolean> {
    const rows = await this.#db.query('UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING id', [id, now.toISOString()])
    return rows.length > 0
  }
}
