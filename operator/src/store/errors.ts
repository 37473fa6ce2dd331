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

/**
 * SQLSTATE classes that mean "the server or the connection", not "the statement": connection
 * exceptions, insufficient resources, operator intervention (shutdown, terminated backend),
 * system errors, and failing to log in.
 */
const UNAVAILABLE_CLASSES = ['08', '28', '53', '57', '58']
/** The store's database no longer exists (dropped under a running process): an outage, not a bad statement. */
const UNAVAILABLE_CODES = ['3D000']

function sqlState(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : null
}

/** Whether an error raised by a database driver call is about reachability (see `rethrow`). */
export function isUnavailable(error: unknown): boolean {
  const code = sqlState(error)
  if (code) return UNAVAILABLE_CLASSES.includes(code.slice(0, 2)) || UNAVAILABLE_CODES.includes(code)
  // No SQLSTATE: a network-level failure (ECONNREFUSED, ECONNRESET, "Connection terminated", pool closed).
  return true
}

/**
 * Whether an arbitrary error (one that may not come from a driver call at all) says the store is
 * unreachable: a StoreUnavailableError, an outage SQLSTATE, or a socket-level error code. Unlike
 * `isUnavailable`, an error without any code is not assumed to be an outage.
 */
export function isStoreOutage(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true
  const code = sqlState(error)
  if (code) return UNAVAILABLE_CLASSES.includes(code.slice(0, 2)) || UNAVAILABLE_CODES.includes(code)
  const errno = (error as { code?: unknown } | null)?.code
  return typeof errno === 'string' && /^E(CONN|PIPE|HOSTUNREACH|NETUNREACH|TIMEDOUT|NOTFOUND|AI_AGAIN)/.test(errno)
}

/** Re-throws `error`, as StoreUnavailableError when it is about reachability. */
export function rethrow(error: unknown): never {
  throw isUnavailable(error) ? new StoreUnavailableError(error) : error
}
