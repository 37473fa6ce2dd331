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

/** Eight pool bytes from `at` as 16 hex digits. */
function hex8(at: number): string {
  const b0 = pool[at]!, b1 = pool[at + 1]!, b2 = pool[at + 2]!, b3 = pool[at + 3]!
  const b4 = pool[at + 4]!, b5 = pool[at + 5]!, b6 = pool[at + 6]!, b7 = pool[at + 7]!
  return String.fromCharCode(
    HEX_DIGIT[b0 >> 4]!, HEX_DIGIT[b0 & 15]!, HEX_DIGIT[b1 >> 4]!, HEX_DIGIT[b1 & 15]!,
    HEX_DIGIT[b2 >> 4]!, HEX_DIGIT[b2 & 15]!, HEX_DIGIT[b3 >> 4]!, HEX_DIGIT[b3 & 15]!,
    HEX_DIGIT[b4 >> 4]!, HEX_DIGIT[b4 & 15]!, HEX_DIGIT[b5 >> 4]!, HEX_DIGIT[b5 & 15]!,
    HEX_DIGIT[b6 >> 4]!, HEX_DIGIT[b6 & 15]!, HEX_DIGIT[b7 >> 4]!, HEX_DIGIT[b7 & 15]!,
  )
}

const ZERO_SPAN_ID = '0000000000000000'
const ZERO_TRACE_ID = ZERO_SPAN_ID + ZERO_SPAN_ID

/** A random span id: 16 lowercase hex digits, not all zeros (W3C's invalid id). */
export function randomSpanId(): string {
  const id = hex8(take(8))
  return id === ZERO_SPAN_ID ? randomSpanId() : id
}

/** A random trace id: 32 lowercase hex digits, not all zeros. */
export function randomTraceId(): string {
  const at = take(16)
  const id = hex8(at) + hex8(at + 8)
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
