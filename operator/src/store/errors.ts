/**
 * The store could not be reached (connection refused or lost, database shutting down, embedded
 * database closed). Callers answer 503 with Retry-After — never 401, never a silent allow —
 * whereas SQL errors (constraint violations and the like) keep their SQLSTATE and are the
 * request's fault.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError'

  constructor(cause: unknown) {
    super('the admin store is unavailable', { cause })
  }
}

/** SQLSTATE classes that mean "the server or the connection", not "the statement". */
const UNAVAILABLE_CLASSES = ['08', '53', '57']

export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return UNAVAILABLE_CLASSES.includes(code.slice(0, 2))
  // No SQLSTATE: a network-level failure (ECONNREFUSED, ECONNRESET, "Connection terminated", pool closed).
  return true
}

/** Re-throws `error`, as StoreUnavailableError when it is about reachability. */
export function rethrow(error: unknown): never {
  throw isUnavailable(error) ? new StoreUnavailableError(error) : error
}
