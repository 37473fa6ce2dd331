/**
 * Reservation ids: they name a request's entries in the shared counters for as long as those
 * live (a rate window, up to a week), so they must not repeat across gateway replicas and
 * restarts. A random 96-bit prefix per process and a counter do that at a fraction of
 * randomUUID's cost, and in 17 to 20 characters instead of 36 on every Redis call.
 */
import { randomBytes } from 'node:crypto'

const PROCESS_PREFIX = randomBytes(12).toString('base64url')
let sequence = 0

export function newReservationId(): string {
  return PROCESS_PREFIX + (sequence++).toString(36)
}
