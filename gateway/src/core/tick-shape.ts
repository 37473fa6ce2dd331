/**
 * Keeps one of Node's tick objects (what `process.nextTick` queues) alive for the life of the
 * process, so that V8 keeps their hidden classes and `nextTick` keeps its fast path.
 *
 * `nextTick` builds each tick object as a literal with three symbol keys, one hidden class per key
 * added. A tick object lives for a few microseconds, so at a full collection there is usually none
 * alive; when `nextTick`'s optimised code has also been thrown away (a deoptimisation), nothing
 * holds those hidden classes any more and the collector frees them. The next tick objects get new
 * ones, and the inline caches of the literal's keys, which remember the classes they saw, count
 * one more each time; past four they give up (megamorphic) and every key of every tick object goes
 * through V8's runtime for good. Node's streams and HTTP code call `nextTick` about eight times a
 * request: in a gateway where it happened, about 5 µs of CPU a request (test/bench/flags-ab.ts,
 * three processes an arm, four rounds, 2026-12-08: 129.6 against 122.8 µs with a tick object held
 * from a preloaded script). Bench gateways after 20,000 requests: the caches megamorphic
 * (`%DebugPrint(process.nextTick)`) in 6 of 8 without a hold, never in the bare Node proxy (no full
 * collections under that load); V8's runtime call for the literal's keys in `perf` samples
 * (0.4 to 0.8 %) in 8 of 11 without a hold, in none of 4 with this one (held from the entry
 * module, as operator/bin/gatehouse.js does) nor of 7 with a tick object held from a preload.
 * tick-shape.test.ts reproduces the mechanism with forced deoptimisations and full collections.
 *
 * A live tick object holds its hidden class, which holds the classes it was built through; a fresh
 * one is taken every `refreshMs`, in case V8 has since widened a field and moved tick objects onto
 * new classes. `executionAsyncResource()` inside a tick's callback is that tick's object; reading it
 * enables no async hook (an init hook would turn on V8's promise hooks for the rest of the process).
 */
import { executionAsyncResource } from 'node:async_hooks'

/**
 * Held on the global object: nothing in the program reads what is held, and the bundler drops
 * stores that nothing reads, to a module's variable or to its own object's property alike
 * (rolldown did both: the bundled gateway held nothing); a store to the global object stays.
 */
const HELD = Symbol.for('gatehouse.heldTickObject')
const globalSlots = globalThis as unknown as Record<symbol, object | undefined>
let refresh: NodeJS.Timeout | null = null

function capture(): void {
  globalSlots[HELD] = executionAsyncResource()
}

/** Holds the next tick object queued, and a fresh one every `refreshMs` (idempotent; the timer does not keep the process alive). */
export function holdTickObjectShape(refreshMs = 100): void {
  if (refresh !== null) return
  process.nextTick(capture)
  refresh = setInterval(() => process.nextTick(capture), refreshMs)
  refresh.unref()
}

/** The tick object held (null before the first tick after `holdTickObjectShape`). */
export function heldTickObjectForTests(): object | null {
  return globalSlots[HELD] ?? null
}
