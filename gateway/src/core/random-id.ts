/**
 * Random trace and span ids in W3C trace-context form (32 and 16 lowercase hex digits, never all
 * zeros), drawn from a pool of cryptographic randomness refilled 64 KB at a time (a refill costs
 * about 5 µs for 4 KB and 16 µs for 64 KB: mostly the call, so the larger pool is the cheaper per id).
 *
 * Every request takes a trace id (the `x-gateway-trace-id` a caller did not send) and, traced, one
 * span id a span. crypto.randomUUID gave the trace id in another form, which tracing then had to
 * test and strip of its dashes, and the OpenTelemetry SDK's generator writes Math.random words into
 * a Buffer and hex-encodes it through C++. Timed in a loop (2026-11-29), with the id then hashed
 * as a map key: a span id 650-800 ns from the SDK's generator, 250-400 ns written from the pool's
 * bytes by String.fromCharCode; a trace id 620-850 ns from randomUUID, 350-550 ns here, and the
 * test-and-strip of the UUID another 1.1 µs (`isTraceIdForm` is 0.3-0.4 µs).
 */
import { randomFillSync } from 'node:crypto'

const POOL_BYTES = 64 * 1024
const pool = Buffer.allocUnsafeSlow(POOL_BYTES)
let next = POOL_BYTES

/** Character codes of the hex digits, by value. */
const HEX_DIGIT = Array.from('0123456789abcdef', (digit) => digit.charCodeAt(0))

/** The offset of `bytes` unread bytes of the pool. */
function take(bytes: number): number {
  if (next + bytes > POOL_BYTES) {
    randomFillSync(pool)
    next = 0
  }
  const at = next
  next += bytes
  return at
}

/** The character codes of one id being written, by its length: ids are written one at a time. */
const SPAN_CODES = new Array<number>(16).fill(0)
const TRACE_CODES = new Array<number>(32).fill(0)

/**
 * Pool bytes from `at` as hex digits, as many as `codes` holds. Written as one string, not joined
 * from halves: a joined id is a rope that V8 flattens on its first read, and every later read of a
 * character (the sampler's and the propagator's checks, the sampler's hash) goes through the rope.
 */
function hexFromPool(at: number, codes: number[]): string {
  for (let digit = 0; digit < codes.length; digit += 2) {
    const byte = pool[at + (digit >> 1)]!
    codes[digit] = HEX_DIGIT[byte >> 4]!
    codes[digit + 1] = HEX_DIGIT[byte & 15]!
  }
  return String.fromCharCode.apply(null, codes)
}

const ZERO_SPAN_ID = '0000000000000000'
const ZERO_TRACE_ID = ZERO_SPAN_ID + ZERO_SPAN_ID

/** A random span id: 16 lowercase hex digits, not all zeros (W3C's invalid id). */
export function randomSpanId(): string {
  const id = hexFromPool(take(8), SPAN_CODES)
  return id === ZERO_SPAN_ID ? randomSpanId() : id
}

/** A random trace id: 32 lowercase hex digits, not all zeros. */
export function randomTraceId(): string {
  const id = hexFromPool(take(16), TRACE_CODES)
  return id === ZERO_TRACE_ID ? randomTraceId() : id
}

/** Whether `value` is a valid W3C trace id as written: 32 lowercase hex digits, not all zeros. */
export function isTraceIdForm(value: string): boolean {
  if (value.length !== 32) return false
  let nonZero = false
  for (let index = 0; index < 32; index++) {
    const code = value.charCodeAt(index)
    // 0-9 or a-f
    if (!((code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x66))) return false
    if (code !== 0x30) nonZero = true
  }
  return nonZero
}
