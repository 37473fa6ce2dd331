/**
 * The SQL seam under the admin store. Both backends (PostgreSQL through `pg`, embedded PGlite) speak
 * the same PostgreSQL dialect, so repositories are written once against `SqlExecutor` and never know
 * which backend runs them. Conventions every query follows so both drivers return the same values:
 *  - parameters are positional (`$1`) — never string-built SQL;
 *  - JSON values are passed as `JSON.stringify(x)` with an explicit `::jsonb` cast (pg would turn a
 *    JS array into a PostgreSQL array literal otherwise);
 *  - counts are cast `::int` (pg returns int8 as a string, PGlite as a number);
 *  - timestamps are `timestamptz` (both drivers return `Date`).
 */
export interface SqlExecutor {
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<Row[]>
  /** Multi-statement script without parameters (trusted migration files only). */
  script(text: string): Promise<void>
  /**
   * `COPY … FROM STDIN` fed from `data` (chunks in the COPY's format). Only where the backend has
   * it cheaply: PostgreSQL inside a transaction (one connection). Callers fall back to INSERT.
   */
  copyIn?(text: string, data: Iterable<string>): Promise<void>
}

export interface SqlDatabase extends SqlExecutor {
  readonly kind: 'pglite' | 'postgres'
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>
  /**
   * Cross-process notifications (PostgreSQL LISTEN/NOTIFY). PGlite lives in one process, so its
   * driver has no peers to hear from and `listen` returns a no-op unsubscribe. `onGap` is called
   * after the listening connection was lost and re-established: messages may have been missed.
   */
  listen(channel: string, onMessage: (payload: string) => void, onGap?: () => void): Promise<() => Promise<void>>
  notify(channel: string, payload: string): Promise<void>
  close(): Promise<void>
}
